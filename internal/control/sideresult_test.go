package control

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/neardup/neardup/internal/faults"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
)

// TestSideResults stores results of several sizes against a limit: small
// ones stay in the bucket's value, large ones go to a file that loads back
// the same, and a damaged or missing file is an error, not a result, as is
// a reference forged to name a file outside the job's output (with the
// same bytes there).
func TestSideResults(t *testing.T) {
	ctx := context.Background()
	task := Task{Epoch: "e1", Stage: StageReduce, Index: 3}
	tests := []struct {
		name    string
		size    int
		damage  func(path string)
		forge   string // the name the reference is changed to
		wantErr error
	}{
		{"small", 100, nil, "", nil},
		{"at the limit", 1000, nil, "", nil},
		{"large", 1001, nil, "", nil},
		{"large, file changed", 5000, func(p string) {
			b, _ := os.ReadFile(p)
			b[10] ^= 1
			os.WriteFile(p, b, 0o644)
		}, "", pqfile.ErrCorrupt},
		{"large, file truncated", 5000, func(p string) { os.Truncate(p, 100) }, "", pqfile.ErrCorrupt},
		{"large, file gone", 5000, func(p string) { os.Remove(p) }, "", os.ErrNotExist},
		{"large, reference forged", 5000, nil, "../outside.json", storage.ErrBadName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			st, err := storage.NewDir(filepath.Join(dir, "out"))
			if err != nil {
				t.Fatal(err)
			}
			result := []byte(`{"part":3,"edge_files":"` + strings.Repeat("x", tt.size-len(`{"part":3,"edge_files":""}`)) + `"}`)
			value, err := storeResult(ctx, st, task, result, 1000)
			if err != nil {
				t.Fatal(err)
			}
			if side := tt.size > 1000; side != (len(value) < len(result)) {
				t.Fatalf("%d bytes: stored as %d bytes", tt.size, len(value))
			}
			if tt.damage != nil {
				tt.damage(st.Path(job.ResultFile(task.Epoch, task.Stage, task.Index)))
			}
			if tt.forge != "" {
				name := job.ResultFile(task.Epoch, task.Stage, task.Index)
				data, err := os.ReadFile(st.Path(name))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, filepath.Base(tt.forge)), data, 0o644); err != nil {
					t.Fatal(err)
				}
				value = bytes.Replace(value, []byte(name), []byte(tt.forge), 1)
			}
			got, err := loadResult(ctx, st, value)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil || !bytes.Equal(got, result) {
				t.Fatalf("loaded %d bytes (%v), want the %d stored", len(got), err, len(result))
			}
		})
	}
}

// TestSideResultsJob runs a job whose in-process workers put every result
// of more than 200 bytes in a file: the output is byte-identical to a run
// that keeps them in the bucket.
func TestSideResultsJob(t *testing.T) {
	in, _ := genCorpus(t, 400, 17, 3)
	ref := filepath.Join(t.TempDir(), "ref")
	if _, err := Run(context.Background(), testConfig(t, in, ref, 2)); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	cfg := testConfig(t, in, out, 2)
	cfg.sideResultBytes = 200
	cfg.KeepWork = true
	cfg.Params.Gather = "on"
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(out, job.WorkDir, "results", "*", "*.json"))
	if len(files) < 10 {
		t.Fatalf("%d results in files: the limit did not apply", len(files))
	}
	sameFiles(t, ref, out, "pairs/*.parquet", "candidates/*.parquet", "clusters.parquet", "duplicates.parquet", "exact.parquet")
}

// readCounter counts the documents the in-process workers report read.
type readCounter struct {
	noObserver
	mu   sync.Mutex
	docs int64
}

func (c *readCounter) Read(docs, _, _ int64, _ map[string]int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.docs += docs
}

// TestReadCountedOnce makes recording every map task's result fail (its
// result file cannot be created), so that each task runs again until it
// fails for good: the documents the workers report read are only those of
// recorded results, none.
func TestReadCountedOnce(t *testing.T) {
	in, _ := genCorpus(t, 300, 19, 2)
	cfg := testConfig(t, in, filepath.Join(t.TempDir(), "out"), 2)
	cfg.sideResultBytes = 1 // every result goes to a file
	f, err := faults.Parse("fail@create:results/", nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Faults = f
	counter := &readCounter{}
	cfg.Tasks = counter
	m, err := Run(context.Background(), cfg)
	if err == nil || m != nil {
		// Every recording fails: the job cannot end. What was read and
		// not recorded must not have been counted.
		t.Fatalf("job with no result recorded ended: %v", err)
	}
	if counter.docs != 0 {
		t.Errorf("%d documents counted read, though no map task's result was recorded", counter.docs)
	}
}
