package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/queue"
)

// TestTakeover runs coordinator A on job "nightly" against a NATS server
// and two workers, and freezes it (SIGSTOP) past its lease's lifetime.
// Then, with real processes:
//
//   - B, the same job writing another output, refuses at once with exit
//     status 5, naming A (its pid) and --overwrite, and writes no result;
//   - B with --overwrite takes the job, discards A's run and completes,
//     byte-identical to an undisturbed run, deleting the job's state;
//   - A, woken, finds its lease gone with the state and exits 5 ("lease
//     lost") within a refresh or two, writing no _SUCCESS.
func TestTakeover(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out a coordinator lease")
	}
	in, ref := corpusAndReference(t)
	srv, err := queue.StartEmbedded(t.TempDir(), fmt.Sprintf("127.0.0.1:%d", freePort(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Shutdown() }()
	for range 2 {
		start(t, nil, "worker", "--nats", srv.URL(), "--ack-wait", "2s", "--slots", "1")
	}
	common := append([]string{"--nats", srv.URL(), "--ack-wait", "2s", "--job", "nightly"}, jobArgs...)
	coordinator := func(out string, extra ...string) *proc {
		args := append(append(append([]string{"--out", out}, extra...), common...), in)
		return start(t, nil, "coordinator", args...)
	}
	exit := func(p *proc, d time.Duration) int {
		err := p.wait(t, d)
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	}

	outA := filepath.Join(t.TempDir(), "a")
	a := coordinator(outA)
	a.waitFor(t, "job planned", time.Minute)
	a.cmd.Process.Signal(syscall.SIGSTOP)
	time.Sleep(17 * time.Second) // the lease lives 15 s after its last refresh

	outB := filepath.Join(t.TempDir(), "b")
	b := coordinator(outB)
	started := time.Now()
	pid := "pid " + strconv.Itoa(a.cmd.Process.Pid)
	if code := exit(b, time.Minute); code != 5 || !strings.Contains(b.output(), pid) || !strings.Contains(b.output(), "--overwrite") {
		t.Fatalf("second coordinator without --overwrite: exit %d, want 5 naming %s and --overwrite:\n%s", code, pid, b.output())
	}
	if d := time.Since(started); d > 20*time.Second {
		t.Errorf("the refusal took %v", d)
	}
	if _, err := os.Stat(filepath.Join(outB, "_SUCCESS")); err == nil {
		t.Fatal("the refused coordinator wrote _SUCCESS")
	}

	b = coordinator(outB, "--overwrite")
	if code := exit(b, 3*time.Minute); code != 0 {
		t.Fatalf("second coordinator with --overwrite: exit %d:\n%s", code, b.output())
	}
	sameResults(t, ref, outB)

	a.cmd.Process.Signal(syscall.SIGCONT)
	woken := time.Now()
	if code := exit(a, time.Minute); code != 5 || !strings.Contains(a.output(), "lease lost") {
		t.Fatalf("first coordinator after its job was taken: exit %d, want 5 and \"lease lost\":\n%s", code, a.output())
	}
	if d := time.Since(woken); d > 20*time.Second {
		t.Errorf("the first coordinator took %v to stop after it woke", d)
	}
	if strings.Contains(a.output(), "panic") {
		t.Fatalf("first coordinator panicked:\n%s", a.output())
	}
	if _, err := os.Stat(filepath.Join(outA, "_SUCCESS")); err == nil {
		t.Fatal("the coordinator that lost its lease wrote _SUCCESS")
	}
}
