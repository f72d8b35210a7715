package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/faults"
)

// TestEmbeddedStoreFull fills, for a few seconds, the small tmpfs that
// holds the embedded NATS server's store (--nats-store) while a job runs:
// NATS turns JetStream off when a write meets the full disk, and keeps it
// off after the disk has room again. The coordinator must not hang: it
// stops within a bound, exit 1, naming the store and how to resume; the
// same command then resumes the job, which ends byte-identical to an
// undisturbed run. (If the full spell met no write of the store, the job
// may also just complete: the test then says so and checks the output.)
// Mounting a tmpfs needs root, as CI has (smallDisk).
func TestEmbeddedStoreFull(t *testing.T) {
	in, ref := corpusAndReference(t)
	disk := smallDisk(t, "48m")
	store := filepath.Join(disk, "nats")
	out := filepath.Join(t.TempDir(), "out")
	args := append(append([]string{"--out", out, "--nats-store", store, "--workers", "2", "--ack-wait", "2s", "--disk-full-timeout", "20s"}, jobArgs...), in)
	// Reduce tasks take 2 s each: the full spell falls inside the job.
	env := []string{faults.EnvVar + "=slow@reduce/*"}
	coord := start(t, env, "coordinator", args...)
	time.Sleep(3 * time.Second)

	// Fill the disk for 4 seconds.
	filler := filepath.Join(disk, "filler")
	fill(t, filler)
	time.Sleep(4 * time.Second)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}

	err := coord.wait(t, 3*time.Minute)
	switch code := exitCode(err); {
	case code == 0:
		t.Logf("the full spell met no write of the store; the job completed:\n%s", tail(coord.output(), 5))
	case code == 1 && strings.Contains(coord.output(), store) && strings.Contains(coord.output(), "run the same command again"):
		t.Logf("stopped, naming the store:\n%s", tail(coord.output(), 3))
		again := start(t, env, "coordinator", args...)
		if err := again.wait(t, 3*time.Minute); err != nil {
			t.Fatalf("the same command again: %v\n%s", err, again.output())
		}
	default:
		t.Fatalf("coordinator after its store was full for 4 s: exit %d, want 0, or 1 naming the store %s and how to resume:\n%s", code, store, coord.output())
	}
	sameResults(t, ref, out)
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
