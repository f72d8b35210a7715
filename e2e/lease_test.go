package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/faults"
	"github.com/neardup/neardup/internal/queue"
)

// TestLeaseAcrossOutage runs a coordinator process on a named job and
// stops the NATS server for longer than the lease's refresh period (11 s
// against 5 s),
// then starts it again on the same store. Both outcomes of the lease are
// checked with real processes:
//
//   - renewed: the coordinator still holds the lease after the outage, so
//     it goes on and the job completes byte-identical to an undisturbed run;
//   - taken: the coordinator is frozen (SIGSTOP) through the outage and past
//     the lease's lifetime, a second coordinator takes the job
//     (--overwrite: it discards the first's run) and runs it;
//     when the first wakes it stops with exit status 5 and no _SUCCESS,
//     never a panic and never two coordinators running one job.
func TestLeaseAcrossOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out NATS outages")
	}
	in, ref := corpusAndReference(t)
	for _, taken := range []bool{false, true} {
		t.Run(map[bool]string{false: "renewed", true: "taken"}[taken], func(t *testing.T) {
			store := t.TempDir()
			addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
			srv, err := queue.StartEmbedded(store, addr)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { srv.Shutdown() }()
			common := []string{"--nats", srv.URL(), "--ack-wait", "2s", "--job", "nightly"}
			// Slow reduce tasks keep the job running through the outage.
			for range 2 {
				start(t, []string{faults.EnvVar + "=slow@reduce/*"}, "worker", "--nats", srv.URL(), "--ack-wait", "2s", "--slots", "1")
			}
			out := filepath.Join(t.TempDir(), "out")
			first := start(t, nil, "coordinator", append(append(append([]string{"--out", out}, common...), jobArgs...), in)...)
			first.waitFor(t, "job planned", 60*time.Second)
			if taken {
				first.cmd.Process.Signal(syscall.SIGSTOP)
			}
			// Long enough for a refresh to time out (5 s after its tick),
			// short of the lease's lifetime (15 s).
			srv.Shutdown()
			time.Sleep(11 * time.Second)
			if srv, err = queue.StartEmbedded(store, addr); err != nil {
				t.Fatal(err)
			}
			if !taken {
				if err := first.wait(t, 3*time.Minute); err != nil {
					t.Fatalf("coordinator after the outage: %v\n%s", err, first.output())
				}
				if !strings.Contains(first.output(), "could not refresh the coordinator lease") {
					t.Fatalf("the outage did not reach a lease refresh; the test proves nothing:\n%s", first.output())
				}
				sameResults(t, ref, out)
				return
			}
			// The frozen coordinator's lease runs out (15 s after its last
			// refresh); a second coordinator, writing elsewhere, takes the job.
			time.Sleep(6 * time.Second)
			other := filepath.Join(t.TempDir(), "other")
			second := start(t, nil, "coordinator", append(append(append([]string{"--out", other, "--overwrite"}, common...), jobArgs...), in)...)
			second.waitFor(t, "job planned", 60*time.Second)
			first.cmd.Process.Signal(syscall.SIGCONT)
			err = first.wait(t, time.Minute)
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != 5 || !strings.Contains(first.output(), "lease lost") {
				t.Fatalf("first coordinator after losing its lease: %v, want exit status 5:\n%s", err, first.output())
			}
			if strings.Contains(first.output(), "panic") {
				t.Fatalf("first coordinator panicked:\n%s", first.output())
			}
			if _, err := os.Stat(filepath.Join(out, "_SUCCESS")); err == nil {
				t.Fatal("the coordinator that lost its lease wrote _SUCCESS")
			}
			if err := second.wait(t, 3*time.Minute); err != nil {
				t.Fatalf("second coordinator: %v\n%s", err, second.output())
			}
			sameResults(t, ref, other)
		})
	}
}
