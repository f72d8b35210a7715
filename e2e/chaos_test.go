package e2e

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/faults"
	"github.com/neardup/neardup/internal/queue"
)

var chaosRuns = flag.Int("chaos-runs", 1, "seeded runs of TestChaos (the long mode: -chaos-runs 20)")

// TestChaos runs multi-process jobs (a NATS server on loopback, a
// coordinator and two workers) under a seeded schedule of faults: workers
// and the coordinator killed with SIGKILL at random moments and started
// again, the NATS server restarted on its store, and workers that meet a
// full disk for a while. Each job must end byte-identical to an undisturbed
// run. CI runs one seed; -chaos-runs N runs seeds 1..N.
func TestChaos(t *testing.T) {
	in, ref := corpusAndReference(t)
	for seed := 1; seed <= *chaosRuns; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { chaos(t, in, ref, uint64(seed)) })
	}
}

func chaos(t *testing.T, in, ref string, seed uint64) {
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
	out := filepath.Join(t.TempDir(), "out")
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

	var injected []string
	for range 2 + r.IntN(3) {
		time.Sleep(time.Duration(300+r.IntN(1500)) * time.Millisecond)
		if finished() {
			break
		}
		switch r.IntN(4) {
		case 0: // a worker dies
			i := r.IntN(len(workers))
			workers[i].cmd.Process.Signal(syscall.SIGKILL)
			workers[i].wait(t, 10*time.Second)
			workers[i] = worker("")
			injected = append(injected, "kill worker")
		case 1: // the coordinator dies and is started again
			coord.cmd.Process.Signal(syscall.SIGKILL)
			coord.wait(t, 10*time.Second)
			coord = start(t, nil, "coordinator", args...)
			injected = append(injected, "kill coordinator")
		case 2: // the NATS server restarts on its store
			srv.Shutdown()
			time.Sleep(time.Duration(200+r.IntN(1500)) * time.Millisecond)
			if srv, err = queue.StartEmbedded(store, addr); err != nil {
				t.Fatal(err)
			}
			injected = append(injected, "restart NATS")
		case 3: // a worker meets a full disk for its first files
			i := r.IntN(len(workers))
			workers[i].cmd.Process.Signal(syscall.SIGKILL)
			workers[i].wait(t, 10*time.Second)
			workers[i] = worker(fmt.Sprintf("fail@create:/#%d", 1+r.IntN(3)))
			injected = append(injected, "full disk")
		}
	}
	t.Logf("seed %d: %d faults: %s", seed, len(injected), strings.Join(injected, ", "))
	if err := coord.wait(t, 3*time.Minute); err != nil {
		t.Fatalf("seed %d, after %v: coordinator: %v\n%s", seed, injected, err, coord.output())
	}
	sameResults(t, ref, out)
}
