package e2e

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/faults"
	"github.com/neardup/neardup/internal/queue"
	"github.com/neardup/neardup/internal/s3test"
)

var chaosRuns = flag.Int("chaos-runs", 1, "seeded runs of TestChaos (the long mode: -chaos-runs 20)")

// TestChaos runs multi-process jobs (a NATS server on loopback, a
// coordinator and two workers) under a seeded schedule of faults: workers
// and the coordinator killed with SIGKILL at random moments and started
// again, the coordinator frozen (SIGSTOP) past its lease and woken, the
// NATS server restarted on its store, workers that meet a full disk for a
// while, and a named pipe among the inputs (which nothing may open: a
// coordinator that hung on it never finished). TestChaosObjectStore does the same with the inputs and the
// output in an S3 bucket, whose server also goes away and comes back. Each
// job must end byte-identical to an undisturbed run. CI runs one seed of
// each; -chaos-runs N runs seeds 1..N.
func TestChaos(t *testing.T) {
	in, ref := corpusAndReference(t)
	for seed := 1; seed <= *chaosRuns; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			chaos(t, in, out, uint64(seed), nil)
			sameResults(t, ref, out)
		})
	}
}

// TestChaosObjectStore is TestChaos with the job's inputs and output in a
// bucket of a test S3 server on loopback, and one more fault: the server
// stops (connection refused) for up to 8 seconds and serves again.
func TestChaosObjectStore(t *testing.T) {
	in, ref := corpusAndReference(t)
	s3 := s3test.Start(t, "crawl")
	s3.PutDir(t, in, "crawl", "in")
	for seed := 1; seed <= *chaosRuns; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			out := fmt.Sprintf("s3://crawl/chaos-%d", seed)
			chaos(t, "s3://crawl/in", out, uint64(seed), s3)
			sameInBucket(t, ref, out)
		})
	}
}

// leaseLife is how long a coordinator's lease outlives its last refresh.
const leaseLife = 15 * time.Second

// chaos runs the job of in into out under the seed's faults; s3, if not
// nil, is the server of in and out, and may go away for a while.
func chaos(t *testing.T, in, out string, seed uint64, s3 *s3test.Server) {
	r := rand.New(rand.NewPCG(seed, 0x6e656172))
	store := t.TempDir()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	srv, err := queue.StartEmbedded(store, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Shutdown() }()
	common := []string{"--nats", srv.URL(), "--ack-wait", "2s", "--transient-retry", "20s"}
	// Reduce tasks take 2 s each, so that the faults fall inside the job.
	worker := func(extra string) *proc {
		rules := "slow@reduce/*"
		if extra != "" {
			rules += ";" + extra
		}
		return start(t, []string{faults.EnvVar + "=" + rules}, "worker", append(common, "--slots", "1")...)
	}
	workers := []*proc{worker(""), worker("")}
	args := append(append(append([]string{"--out", out}, common...), jobArgs...), in)
	coord := start(t, nil, "coordinator", args...)
	finished := func() bool {
		select {
		case err := <-coord.done:
			coord.done <- err
			return true
		default:
			return false
		}
	}
	kinds := 6 // the sixth: an S3 outage, or with local inputs a FIFO among them
	fifos := 0
	frozen := false

	var injected []string
	for range 2 + r.IntN(3) {
		time.Sleep(time.Duration(300+r.IntN(1500)) * time.Millisecond)
		if finished() {
			break
		}
		switch k := r.IntN(kinds); {
		case k == 4 && frozen: // once is enough: it waits out a lease
			injected = append(injected, "(no second freeze)")
		case k == 4: // the coordinator is frozen past its lease, then woken
			frozen = true
			coord.cmd.Process.Signal(syscall.SIGSTOP)
			time.Sleep(leaseLife + 2*time.Second)
			coord.cmd.Process.Signal(syscall.SIGCONT)
			injected = append(injected, "freeze coordinator")
		case k == 5 && s3 == nil: // a named pipe appears among the inputs
			// Planned only by a coordinator that starts afresh (a
			// restarted one resumes its plan): never opened, a reject.
			fifos++
			if err := syscall.Mkfifo(filepath.Join(in, fmt.Sprintf("pipe-%d-%d.jsonl", seed, fifos)), 0o644); err != nil {
				t.Fatal(err)
			}
			injected = append(injected, "FIFO input")
		case k == 5: // the object store goes away and comes back
			s3.Stop()
			time.Sleep(time.Duration(1000+r.IntN(7000)) * time.Millisecond)
			if err := s3.Restart(); err != nil {
				t.Fatal(err)
			}
			injected = append(injected, "S3 outage")
		case k == 0: // a worker dies
			i := r.IntN(len(workers))
			workers[i].cmd.Process.Signal(syscall.SIGKILL)
			workers[i].wait(t, 10*time.Second)
			workers[i] = worker("")
			injected = append(injected, "kill worker")
		case k == 1: // the coordinator dies and is started again
			coord.cmd.Process.Signal(syscall.SIGKILL)
			coord.wait(t, 10*time.Second)
			coord = start(t, nil, "coordinator", args...)
			injected = append(injected, "kill coordinator")
		case k == 2: // the NATS server restarts on its store
			srv.Shutdown()
			time.Sleep(time.Duration(200+r.IntN(1500)) * time.Millisecond)
			if srv, err = queue.StartEmbedded(store, addr); err != nil {
				t.Fatal(err)
			}
			injected = append(injected, "restart NATS")
		default: // a worker meets a full disk for its first files
			i := r.IntN(len(workers))
			workers[i].cmd.Process.Signal(syscall.SIGKILL)
			workers[i].wait(t, 10*time.Second)
			workers[i] = worker(fmt.Sprintf("fail@create:/#%d", 1+r.IntN(3)))
			injected = append(injected, "full disk")
		}
	}
	t.Logf("seed %d: %d faults: %s", seed, len(injected), strings.Join(injected, ", "))
	err = coord.wait(t, 3*time.Minute)
	if frozen && exitCode(err) == 5 && strings.Contains(coord.output(), "lease lost") {
		// Woken past its lease, it stopped, as it must when it cannot
		// know that no other took the job: the same command resumes it.
		t.Logf("seed %d: the frozen coordinator stopped (lease lost); started again", seed)
		coord = start(t, nil, "coordinator", args...)
		err = coord.wait(t, 3*time.Minute)
	}
	if err != nil {
		t.Fatalf("seed %d, after %v: coordinator: %v\n%s", seed, injected, err, coord.output())
	}
}

// exitCode is the exit status of a process's error, 0 for nil, -1 for
// one that did not exit.
func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}
