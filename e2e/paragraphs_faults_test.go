package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/faults"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/queue"
	"github.com/neardup/neardup/internal/stage/mapper"
	"github.com/neardup/neardup/internal/stage/paragraphs"
)

// TestParagraphsKilled runs a job with --paragraphs on a corpus of site
// pages undisturbed, then again with a worker killed (SIGKILL) in a task
// of the paragraphs stage, and with the coordinator killed after it and
// started again: paragraphs/ and the index's unit table (index/units/)
// are byte-identical to the undisturbed run's, as are the job's other
// results.
func TestParagraphsKilled(t *testing.T) {
	in := t.TempDir()
	run(t, "gencorpus", "-profile", "sites", "-n", "800", "-seed", "17", "-files", "4", "-out", in)
	args := []string{"--job", "sites", "--paragraphs", "--chunk-bytes", "100000", "--partitions", "4", "--quiet"}
	ref := filepath.Join(t.TempDir(), "ref")
	run(t, "coordinator", append(append([]string{"--out", ref, "--workers", "2"}, args...), in)...)
	same := func(t *testing.T, out string) {
		t.Helper()
		sameResults(t, ref, out)
		for _, dir := range []string{"paragraphs", "index/units"} {
			a, _ := filepath.Glob(filepath.Join(ref, dir, "*.parquet"))
			b, _ := filepath.Glob(filepath.Join(out, dir, "*.parquet"))
			if len(a) < 2 || len(a) != len(b) {
				t.Fatalf("%s/: %d files undisturbed, %d after the fault", dir, len(a), len(b))
			}
			for i := range a {
				x, _ := os.ReadFile(a[i])
				y, _ := os.ReadFile(b[i])
				if string(x) != string(y) || filepath.Base(a[i]) != filepath.Base(b[i]) {
					t.Fatalf("%s/%s differs from the undisturbed run", dir, filepath.Base(a[i]))
				}
			}
		}
	}
	t.Run("worker killed in a paragraphs task", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out")
		runWorkerKilled(t, in, out, "stall@paragraphs/1", args)
		same(t, out)
	})
	t.Run("coordinator killed after the paragraphs stage", func(t *testing.T) {
		srv, err := queue.StartEmbedded(t.TempDir(), "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Shutdown()
		common := []string{"--nats", srv.URL(), "--ack-wait", "2s"}
		start(t, nil, "worker", append(common, "--slots", "2")...)
		out := filepath.Join(t.TempDir(), "out")
		// Without --quiet: the stage's final progress line says it ended.
		jobArgs := append(append(append([]string{"--out", out}, common...), "--job", "sites", "--paragraphs", "--chunk-bytes", "100000", "--partitions", "4"), in)
		coord := start(t, nil, "coordinator", jobArgs...)
		coord.waitFor(t, "paragraphs ", 60*time.Second)
		coord.cmd.Process.Signal(syscall.SIGKILL)
		coord.wait(t, 10*time.Second)
		files, _ := filepath.Glob(filepath.Join(out, "paragraphs", "*.parquet"))
		if len(files) == 0 {
			t.Fatal("the paragraphs stage wrote no file before the coordinator was killed")
		}
		restartUnchanged(t, jobArgs, files)
		same(t, out)
	})
}

// TestShingleAfterStripKilled runs a job with --shingle-after-strip on a
// corpus of site pages undisturbed, then with a worker killed (SIGKILL)
// in a task of each of the two stages before map (strip-units cuts the
// documents into units, strip-count counts them), and with the
// coordinator killed after strip-count and started again: the results
// are byte-identical to the undisturbed run's, and the restarted job does
// not redo the count.
func TestShingleAfterStripKilled(t *testing.T) {
	in := t.TempDir()
	// Copies of pages on other sites pair only once the templates are
	// stripped; thin pages of one site pair only with them.
	run(t, "gencorpus", "-profile", "sites", "-n", "800", "-seed", "19", "-files", "4", "-site-copy-every", "8", "-site-thin-every", "5", "-out", in)
	args := []string{"--job", "sites", "--shingle-after-strip", "20", "--index=false", "--chunk-bytes", "100000", "--partitions", "4"}
	ref := filepath.Join(t.TempDir(), "ref")
	run(t, "coordinator", append(append([]string{"--out", ref, "--workers", "2", "--quiet"}, args...), in)...)
	data, err := os.ReadFile(filepath.Join(ref, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if man, err := manifest.Decode(data); err != nil || man.Counts.Pairs == 0 || man.StripSet == nil || man.StripSet.LeftOut == 0 {
		t.Fatalf("the undisturbed job listed no pair or left no unit out (%v): the test would compare nothing", err)
	}
	for _, point := range []string{"stall@strip-units/1", "stall@strip-count/1"} {
		t.Run("worker killed at "+point, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			runWorkerKilled(t, in, out, point, append(args, "--quiet"))
			sameResults(t, ref, out)
		})
	}
	t.Run("coordinator killed after strip-count", func(t *testing.T) {
		srv, err := queue.StartEmbedded(t.TempDir(), "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Shutdown()
		common := []string{"--nats", srv.URL(), "--ack-wait", "2s"}
		// Map tasks take 2 s each: the coordinator is killed before the
		// job ends. The worker logs each task it starts (debug).
		worker := start(t, []string{faults.EnvVar + "=slow@map/*"}, "worker", append(common, "--slots", "2", "--log-level", "debug")...)
		out := filepath.Join(t.TempDir(), "out")
		// Without --quiet: the stage's final progress line says it ended.
		jobArgs := append(append(append([]string{"--out", out}, common...), args...), in)
		coord := start(t, nil, "coordinator", jobArgs...)
		coord.waitFor(t, "strip-count ", 60*time.Second)
		coord.cmd.Process.Signal(syscall.SIGKILL)
		coord.wait(t, 10*time.Second)
		sets, _ := filepath.Glob(filepath.Join(out, filepath.FromSlash(job.StripDir), "*.hashes"))
		if len(sets) < 2 {
			t.Fatalf("the strip-count stage wrote %d files before the coordinator was killed, want one a task (2 or more)", len(sets))
		}
		started := func(stage string) (n int) {
			for _, line := range strings.Split(worker.output(), "\n") {
				if strings.Contains(line, `msg="task started"`) && strings.Contains(line, "stage="+stage+" ") {
					n++
				}
			}
			return n
		}
		units, counts := started(mapper.StripUnitsName), started(paragraphs.StripCountName)
		again := start(t, nil, "coordinator", jobArgs...)
		if err := again.wait(t, 2*time.Minute); err != nil {
			t.Fatalf("restarted coordinator: %v\n%s", err, again.output())
		}
		if u, c := started(mapper.StripUnitsName), started(paragraphs.StripCountName); u != units || c != counts || c != len(sets) {
			t.Errorf("tasks started: strip-units %d then %d after the restart, strip-count %d then %d (%d set files): the restarted job redid them", units, u, counts, c, len(sets))
		}
		sameResults(t, ref, out)
	})
}
