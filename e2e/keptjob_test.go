package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/faults"
	"github.com/neardup/neardup/internal/kepttest"
	"github.com/neardup/neardup/internal/queue"
	"github.com/neardup/neardup/internal/storage"
)

// keptCorpus reads the kept corpus in dir (kepttest).
func keptCorpus(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files, err := kepttest.Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// sameCorpus fails the test unless two kept corpora hold the same files,
// byte for byte.
func sameCorpus(t *testing.T, ref, got map[string][]byte) {
	t.Helper()
	if err := kepttest.Same(ref, got); err != nil {
		t.Errorf("not the reference corpus: %v", err)
	}
}

// checkKeptCounts checks the job's manifest's record of its kept corpus:
// the documents but the duplicates, and its _SUCCESS.
func checkKeptCounts(t *testing.T, out, dir string) {
	t.Helper()
	var man struct {
		Counts struct{ Docs, Duplicates int64 }
		Kept   *struct {
			Dir                    string
			Docs, Kept, Duplicates int64
			Dropped, Bytes         int64
		}
	}
	data, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &man); err != nil {
		t.Fatal(err)
	}
	k, c := man.Kept, man.Counts
	switch {
	case k == nil:
		t.Fatalf("%s: the manifest records no kept corpus", out)
	case k.Docs != c.Docs || k.Kept != c.Docs-c.Duplicates || k.Dropped != c.Duplicates || c.Duplicates == 0 || k.Bytes == 0:
		t.Errorf("kept corpus %+v; the job: docs %d, duplicates %d", *k, c.Docs, c.Duplicates)
	}
	t.Logf("%s: kept %d = %d documents - %d duplicates, %d bytes", dir, k.Kept, c.Docs, c.Duplicates, k.Bytes)
	if _, err := os.Stat(filepath.Join(dir, "_SUCCESS")); err != nil {
		t.Error(err)
	}
}

// TestKeptJob runs embedded jobs that write their kept corpus as their
// last stage (--write-kept) with 1 and 3 workers, on JSONL files the job
// cuts into several chunks and on WET files of a gzip member per record,
// in their own format and as Parquet: the corpus holds the documents but
// the duplicates, byte-identical whatever the number of workers.
func TestKeptJob(t *testing.T) {
	jsonl := t.TempDir()
	run(t, "gencorpus", "-n", "800", "-seed", "17", "-format", "jsonl", "-files", "4", "-out", jsonl)
	wet := t.TempDir()
	run(t, "gencorpus", "-n", "600", "-seed", "5", "-format", "wet", "-gzip", "-files", "3", "-out", wet)
	for _, tc := range []struct{ name, in, format string }{
		{"jsonl", jsonl, "auto"}, {"jsonl as parquet", jsonl, "parquet"}, {"wet", wet, "auto"}, {"wet as parquet", wet, "parquet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ref map[string][]byte
			for _, workers := range []string{"1", "3"} {
				out := filepath.Join(t.TempDir(), "out")
				dir := filepath.Join(t.TempDir(), "kept")
				run(t, "coordinator", append(append([]string{"--out", out, "--workers", workers, "--write-kept", dir, "--kept-format", tc.format}, jobArgs...), tc.in)...)
				checkKeptCounts(t, out, dir)
				got := keptCorpus(t, dir)
				if ref == nil {
					ref = got
					continue
				}
				sameCorpus(t, ref, got)
			}
		})
	}
}

// TestKeptWorkerKilled kills a worker with SIGKILL while it holds a task
// of the write-kept stage (as it starts; with an output written under its
// temporary name); another worker gets the task after AckWait, and the
// corpus is byte-identical to an undisturbed run's, with no temporary
// file left.
func TestKeptWorkerKilled(t *testing.T) {
	in := t.TempDir()
	run(t, "gencorpus", "-n", "800", "-seed", "17", "-format", "jsonl", "-files", "4", "-out", in)
	refOut, refDir := filepath.Join(t.TempDir(), "ref"), filepath.Join(t.TempDir(), "ref-kept")
	run(t, "coordinator", append(append([]string{"--out", refOut, "--workers", "2", "--write-kept", refDir}, jobArgs...), in)...)
	ref := keptCorpus(t, refDir)
	for _, point := range []string{"stall@write-kept/0", "stall@commit:00001-part-0001"} {
		t.Run(point, func(t *testing.T) {
			srv, err := queue.StartEmbedded(t.TempDir(), "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Shutdown()
			out, dir := filepath.Join(t.TempDir(), "out"), filepath.Join(t.TempDir(), "kept")
			common := []string{"--nats", srv.URL(), "--ack-wait", "2s"}
			coord := start(t, nil, "coordinator", append(append(append([]string{"--out", out, "--write-kept", dir}, common...), jobArgs...), in)...)
			victim := start(t, []string{faults.EnvVar + "=" + point}, "worker", append(common, "--slots", "1")...)
			victim.waitFor(t, "fault injected", 90*time.Second)
			victim.cmd.Process.Signal(syscall.SIGKILL)
			victim.wait(t, 10*time.Second)
			if point == "stall@commit:00001-part-0001" {
				if tmp, _ := filepath.Glob(filepath.Join(dir, "00001-part-0001*"+storage.TempMarker+"*")); len(tmp) == 0 {
					t.Error("no output left under a temporary name by the killed worker")
				}
			}

			start(t, nil, "worker", append(common, "--slots", "2")...)
			if err := coord.wait(t, 2*time.Minute); err != nil {
				t.Fatalf("coordinator: %v\n%s", err, coord.output())
			}
			checkKeptCounts(t, out, dir)
			sameCorpus(t, ref, keptCorpus(t, dir))
		})
	}
}

// TestKeptCoordinatorKilled kills the coordinator with SIGKILL while the
// workers write the kept corpus (once its first file is there) and runs
// the same command again: it claims the corpus as its own (the same job
// and epoch), the files of the tasks done are not written again, and the
// corpus is byte-identical to an undisturbed run's.
func TestKeptCoordinatorKilled(t *testing.T) {
	in := t.TempDir()
	run(t, "gencorpus", "-n", "800", "-seed", "17", "-format", "jsonl", "-files", "4", "-out", in)
	refOut, refDir := filepath.Join(t.TempDir(), "ref"), filepath.Join(t.TempDir(), "ref-kept")
	run(t, "coordinator", append(append([]string{"--out", refOut, "--workers", "2", "--write-kept", refDir}, jobArgs...), in)...)
	srv, err := queue.StartEmbedded(t.TempDir(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	common := []string{"--nats", srv.URL(), "--ack-wait", "2s"}
	// Each task of the stage waits 2 s: the coordinator dies among them.
	start(t, []string{faults.EnvVar + "=slow@write-kept/*"}, "worker", append(common, "--slots", "2")...)
	out, dir := filepath.Join(t.TempDir(), "out"), filepath.Join(t.TempDir(), "kept")
	args := append(append(append([]string{"--out", out, "--write-kept", dir}, common...), jobArgs...), in)
	coord := start(t, nil, "coordinator", args...)
	coord.waitFor(t, "writing the kept corpus", 90*time.Second)
	var written []string
	for deadline := time.Now().Add(30 * time.Second); len(written) == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		written, _ = filepath.Glob(filepath.Join(dir, "0*-part-*.jsonl.gz"))
	}
	coord.cmd.Process.Signal(syscall.SIGKILL)
	coord.wait(t, 10*time.Second)
	if len(written) == 0 {
		t.Fatalf("no file of the corpus written within 30 s:\n%s", coord.output())
	}
	if _, err := os.Stat(filepath.Join(dir, "_SUCCESS")); err == nil {
		t.Fatal("the corpus was complete before the coordinator was killed: the test kills it too late")
	}
	restartUnchanged(t, args, written)
	checkKeptCounts(t, out, dir)
	sameCorpus(t, keptCorpus(t, refDir), keptCorpus(t, dir))
}
