package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/faults"
)

// smallDisk mounts a tmpfs of size bytes on a new directory for the test.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		skipOrFail(t, "mounting a small tmpfs for a real full disk needs root (CAP_SYS_ADMIN): "+err.Error())
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fill writes zeros to path until the disk is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return
		}
	}
}

// TestDiskFull runs an embedded job (the coordinator process with its
// workers and its NATS server) whose store lives on a small disk, and fills
// that disk mid-job: the job fails within its --disk-full-timeout with
// exit status 1 and a message naming the disk's path, writes no _SUCCESS,
// and the same command, run again once there is space, completes
// byte-identical to an undisturbed run.
func TestDiskFull(t *testing.T) {
	in, ref := corpusAndReference(t)
	disk := smallDisk(t, "64m")
	store := filepath.Join(disk, "store")
	out := filepath.Join(t.TempDir(), "out")
	args := append(append([]string{"--out", out, "--workers", "2", "--nats-store", store, "--disk-full-timeout", "5s"}, jobArgs...), in)
	// Slow map tasks keep the job running while the disk fills.
	coord := start(t, []string{faults.EnvVar + "=slow@map/*"}, "coordinator", args...)
	coord.waitFor(t, "job planned", 60*time.Second)
	filler := filepath.Join(disk, "filler")
	fill(t, filler)
	filled := time.Now()
	err := coord.wait(t, 90*time.Second)
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 {
		t.Fatalf("coordinator on a full disk: %v, want exit status 1:\n%s", err, coord.output())
	}
	if o := coord.output(); !strings.Contains(o, "disk full") || !strings.Contains(o, store) {
		t.Fatalf("the error does not say the disk holding %s is full:\n%s", store, o)
	}
	if d := time.Since(filled); d > 60*time.Second {
		t.Fatalf("the job gave up %v after the disk filled, want within 60 s", d)
	}
	if _, err := os.Stat(filepath.Join(out, "_SUCCESS")); err == nil {
		t.Fatal("_SUCCESS written on a full disk")
	}
	// Space again: the same command resumes and completes.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	again := start(t, nil, "coordinator", args...)
	if err := again.wait(t, 3*time.Minute); err != nil {
		t.Fatalf("the same command once there is space: %v\n%s", err, again.output())
	}
	if !strings.Contains(again.output(), "resumed=true") {
		t.Errorf("the rerun did not resume the job:\n%s", again.output())
	}
	sameResults(t, ref, out)
}
