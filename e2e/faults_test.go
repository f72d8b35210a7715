package e2e

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/faults"
	"github.com/neardup/neardup/internal/queue"
	"github.com/neardup/neardup/internal/storage"
)

// jobArgs are the job parameters shared by a fault test and its reference.
var jobArgs = []string{"--chunk-bytes", "200000", "--partitions", "4", "--quiet"}

// corpusAndReference writes a corpus and runs the undisturbed reference job.
func corpusAndReference(t *testing.T) (in, ref string) {
	t.Helper()
	in = t.TempDir()
	run(t, "gencorpus", "-n", "800", "-seed", "17", "-format", "jsonl", "-files", "4", "-out", in)
	ref = filepath.Join(t.TempDir(), "ref")
	run(t, "coordinator", append(append([]string{"--out", ref, "--workers", "2"}, jobArgs...), in)...)
	return in, ref
}

// sameResults compares pairs, candidates, clusters and duplicates.
func sameResults(t *testing.T, ref, out string) {
	t.Helper()
	for _, pattern := range []string{"pairs/*.parquet", "candidates/*.parquet", "clusters.parquet", "duplicates.parquet", "docs/*.parquet"} {
		a, _ := filepath.Glob(filepath.Join(ref, pattern))
		b, _ := filepath.Glob(filepath.Join(out, pattern))
		if len(a) == 0 || len(a) != len(b) {
			t.Fatalf("%s: %d files undisturbed, %d after the fault", pattern, len(a), len(b))
		}
		for i := range a {
			x, _ := os.ReadFile(a[i])
			y, _ := os.ReadFile(b[i])
			if string(x) != string(y) {
				t.Fatalf("%s differs from the undisturbed run", filepath.Base(a[i]))
			}
		}
	}
	if _, err := os.Stat(filepath.Join(out, "_SUCCESS")); err != nil {
		t.Fatal("no _SUCCESS")
	}
	filepath.WalkDir(out, func(p string, e fs.DirEntry, err error) error {
		if err == nil && strings.Contains(e.Name(), storage.TempMarker) {
			t.Errorf("temporary file left in a finished job: %s", p)
		}
		return nil
	})
}

// TestWorkerKilled kills a worker with SIGKILL while it holds a task (while
// reading its chunk, while writing a band run file, while reducing);
// another worker gets the task after AckWait and the job's results are
// byte-identical to an undisturbed run.
func TestWorkerKilled(t *testing.T) {
	in, ref := corpusAndReference(t)
	points := []string{
		"stall@map/2",
		"stall@create:_work/bandruns/chunk-000001-run0000",
		// Killed with its band run file written under a temporary name:
		// the job's last step removes what it left.
		"stall@commit:_work/bandruns/chunk-000001-run0000",
		"stall@reduce/1",
	}
	for _, point := range points {
		t.Run(point, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			runWorkerKilled(t, in, out, point, jobArgs)
			sameResults(t, ref, out)
		})
	}
}

// runWorkerKilled runs a job of args over in into out, with outside
// workers: the first killed (SIGKILL) at the fault point, another taking
// its task over after AckWait.
func runWorkerKilled(t *testing.T, in, out, point string, args []string) {
	t.Helper()
	srv, err := queue.StartEmbedded(t.TempDir(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	common := []string{"--nats", srv.URL(), "--ack-wait", "2s"}
	coord := start(t, nil, "coordinator", append(append(append([]string{"--out", out}, common...), args...), in)...)
	victim := start(t, []string{faults.EnvVar + "=" + point}, "worker", append(common, "--slots", "1")...)
	victim.waitFor(t, "fault injected", 60*time.Second)
	victim.cmd.Process.Signal(syscall.SIGKILL)
	victim.wait(t, 10*time.Second)

	start(t, nil, "worker", append(common, "--slots", "2")...)
	if err := coord.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("coordinator: %v\n%s", err, coord.output())
	}
}

// TestCoordinatorKilled kills the coordinator with SIGKILL after a stage (or
// interrupts it with SIGINT, after which it says how to resume) and starts
// it again with the same command: finished tasks are not redone and the
// results are byte-identical.
func TestCoordinatorKilled(t *testing.T) {
	in, ref := corpusAndReference(t)
	for _, tc := range []struct {
		stage string
		sig   syscall.Signal
	}{{"map", syscall.SIGKILL}, {"reduce", syscall.SIGKILL}, {"map", syscall.SIGINT}} {
		stage := tc.stage
		t.Run(stage+"/"+tc.sig.String(), func(t *testing.T) {
			srv, err := queue.StartEmbedded(t.TempDir(), "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Shutdown()
			common := []string{"--nats", srv.URL(), "--ack-wait", "2s"}
			start(t, nil, "worker", append(common, "--slots", "2")...)
			out := filepath.Join(t.TempDir(), "out")
			args := append(append(append([]string{"--out", out}, common...), "--chunk-bytes", "200000", "--partitions", "4"), in)
			coord := start(t, nil, "coordinator", args...)
			// The stage's final progress line is printed when it ends.
			coord.waitFor(t, fmt.Sprintf("%-7s", stage)+" ", 60*time.Second)
			coord.cmd.Process.Signal(tc.sig)
			err = coord.wait(t, 10*time.Second)
			if tc.sig == syscall.SIGINT && (err == nil || !strings.Contains(coord.output(), "run the same command again to resume")) {
				t.Fatalf("interrupted coordinator: exit %v, output:\n%s", err, coord.output())
			}
			docs, _ := filepath.Glob(filepath.Join(out, "docs", "*.parquet"))
			restartUnchanged(t, args, docs)
			sameResults(t, ref, out)
		})
	}
}

// restartUnchanged runs the coordinator with args again, to its end, and
// checks that it did not write files again: the tasks done before are
// not redone.
func restartUnchanged(t *testing.T, args []string, files []string) {
	t.Helper()
	mtimes := map[string]time.Time{}
	for _, f := range files {
		st, _ := os.Stat(f)
		mtimes[f] = st.ModTime()
	}
	again := start(t, nil, "coordinator", args...)
	if err := again.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("restarted coordinator: %v\n%s", err, again.output())
	}
	for f, mt := range mtimes {
		if st, err := os.Stat(f); err != nil || !st.ModTime().Equal(mt) {
			t.Errorf("%s was redone after the restart", filepath.Base(f))
		}
	}
}

// TestNATSRestart stops the NATS server in the middle of a job and starts
// it again on the same port with the same store: the coordinator and the
// workers reconnect and the job completes with the same results.
func TestNATSRestart(t *testing.T) {
	in, ref := corpusAndReference(t)
	store := t.TempDir()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	srv, err := queue.StartEmbedded(store, addr)
	if err != nil {
		t.Fatal(err)
	}
	url := srv.URL()
	common := []string{"--nats", url, "--ack-wait", "2s"}
	// Reduce tasks take 2 seconds each, so the restart falls in the middle
	// of the job.
	start(t, []string{faults.EnvVar + "=slow@reduce/*"}, "worker", append(common, "--slots", "2")...)
	out := filepath.Join(t.TempDir(), "out")
	coord := start(t, nil, "coordinator", append(append(append([]string{"--out", out}, common...), "--chunk-bytes", "200000", "--partitions", "4"), in)...)
	coord.waitFor(t, "map     ", 60*time.Second)
	srv.Shutdown()
	time.Sleep(time.Second)
	srv, err = queue.StartEmbedded(store, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	if err := coord.wait(t, 3*time.Minute); err != nil {
		t.Fatalf("coordinator: %v\n%s", err, coord.output())
	}
	sameResults(t, ref, out)
}

// TestWorkerStoppedMidTask sends SIGTERM to a worker that holds a task: it
// hands the task back at once and exits, and another worker finishes the
// job well before AckWait (60s here) could have redelivered the task.
func TestWorkerStoppedMidTask(t *testing.T) {
	in, ref := corpusAndReference(t)
	srv, err := queue.StartEmbedded(t.TempDir(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	out := filepath.Join(t.TempDir(), "out")
	common := []string{"--nats", srv.URL(), "--ack-wait", "60s"}
	coord := start(t, nil, "coordinator", append(append(append([]string{"--out", out}, common...), jobArgs...), in)...)
	victim := start(t, []string{faults.EnvVar + "=stall@map/1"}, "worker", append(common, "--slots", "1")...)
	victim.waitFor(t, "fault injected", 60*time.Second)
	stopped := time.Now()
	victim.cmd.Process.Signal(syscall.SIGTERM)
	if err := victim.wait(t, 10*time.Second); err != nil {
		t.Fatalf("worker exited with %v after SIGTERM:\n%s", err, victim.output())
	}
	start(t, nil, "worker", append(common, "--slots", "2")...)
	if err := coord.wait(t, 50*time.Second); err != nil {
		t.Fatalf("coordinator: %v\n%s", err, coord.output())
	}
	if d := time.Since(stopped); d > 40*time.Second {
		t.Fatalf("the job took %v after the SIGTERM: the task was not handed back", d)
	}
	sameResults(t, ref, out)
}

// TestTaskKillsEveryWorker kills every worker that takes map task 1 (as an
// out-of-memory kill would), so no worker ever records the task's failure:
// after --max-deliver deliveries the server's advisory makes the coordinator
// record it, and the job ends partial without that chunk (exit status 4, no
// _SUCCESS), or fails under --strict. It never hangs. Run again with
// healthy workers, the partial job retries the chunk and completes.
func TestTaskKillsEveryWorker(t *testing.T) {
	in, ref := corpusAndReference(t)
	for _, strict := range []bool{false, true} {
		t.Run(fmt.Sprintf("strict=%v", strict), func(t *testing.T) {
			srv, err := queue.StartEmbedded(t.TempDir(), "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Shutdown()
			out := filepath.Join(t.TempDir(), "out")
			common := []string{"--nats", srv.URL(), "--ack-wait", "1s", "--max-deliver", "2"}
			args := append(append([]string{"--out", out}, common...), jobArgs...)
			if strict {
				args = append(args, "--strict")
			}
			coord := start(t, nil, "coordinator", append(args, in)...)
			for range 2 {
				victim := start(t, []string{faults.EnvVar + "=stall@map/1"}, "worker", append(common, "--slots", "1")...)
				victim.waitFor(t, "fault injected", 60*time.Second)
				victim.cmd.Process.Signal(syscall.SIGKILL)
				victim.wait(t, 10*time.Second)
			}
			start(t, nil, "worker", append(common, "--slots", "2")...)
			err = coord.wait(t, 2*time.Minute)
			code := -1
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			if !strict && code != 4 || strict && code != 1 {
				t.Fatalf("coordinator exit %v, want status %d:\n%s", err, map[bool]int{false: 4, true: 1}[strict], coord.output())
			}
			if o := coord.output(); !strings.Contains(o, "map task 1 failed after 2 attempts") && !strings.Contains(o, "stage=map index=1 attempts=2") {
				t.Fatalf("the failure is not reported:\n%s", coord.output())
			}
			// Partial (or failed under --strict): never _SUCCESS.
			if _, err := os.Stat(filepath.Join(out, "_SUCCESS")); err == nil {
				t.Fatalf("_SUCCESS present for a job missing a chunk (strict %v)", strict)
			}
			if strict {
				return
			}
			// The same command again, with healthy workers: the missing
			// chunk is retried and the job completes as if undisturbed.
			coord = start(t, nil, "coordinator", append(args, in)...)
			if err := coord.wait(t, 2*time.Minute); err != nil {
				t.Fatalf("rerun of the partial job: %v\n%s", err, coord.output())
			}
			sameResults(t, ref, out)
		})
	}
}

// TestSecondCoordinatorRefused starts a second coordinator while a first
// runs the same job, on the same output directory (the file lock) and on
// another directory under the same job name (the lease in the job's
// bucket): it exits with status 5 and the first completes.
func TestSecondCoordinatorRefused(t *testing.T) {
	in, _ := corpusAndReference(t)
	srv, err := queue.StartEmbedded(t.TempDir(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	common := []string{"--nats", srv.URL(), "--job", "nightly", "--quiet"}
	// Slow map tasks keep the first job running while the others try.
	start(t, []string{faults.EnvVar + "=slow@map/*"}, "worker", "--nats", srv.URL(), "--slots", "2")
	out := filepath.Join(t.TempDir(), "out")
	first := start(t, nil, "coordinator", append(append([]string{"--out", out}, common...), in)...)
	first.waitFor(t, "job planned", 30*time.Second)
	for _, other := range []string{out, filepath.Join(t.TempDir(), "other")} {
		second := start(t, nil, "coordinator", append(append([]string{"--out", other, "--overwrite"}, common...), in)...)
		err := second.wait(t, 30*time.Second)
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 5 || !strings.Contains(second.output(), "another coordinator") {
			t.Fatalf("second coordinator on %s: %v\n%s", other, err, second.output())
		}
	}
	if err := first.wait(t, 3*time.Minute); err != nil {
		t.Fatalf("first coordinator: %v\n%s", err, first.output())
	}
	if _, err := os.Stat(filepath.Join(out, "_SUCCESS")); err != nil {
		t.Fatal("the first job did not complete")
	}
}
