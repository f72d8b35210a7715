package e2e

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/queue"
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
