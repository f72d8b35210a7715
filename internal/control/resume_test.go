package control

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/faults"
	"github.com/neardup/neardup/internal/report"
)

// cancelOn cancels a context when a progress line contains a marker.
type cancelOn struct {
	mu     sync.Mutex
	marker string
	cancel context.CancelFunc
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancel != nil && strings.Contains(string(p), c.marker) {
		c.cancel()
		c.cancel = nil
	}
	return len(p), nil
}

// TestResumeAfterInterrupt interrupts a job after each stage in turn, runs
// it again, and checks that finished tasks are not redone and that the
// results are byte-identical to an undisturbed run. The interrupted runs
// have the gather stage on, the undisturbed one off.
func TestResumeAfterInterrupt(t *testing.T) {
	in, _ := genCorpus(t, 500, 9, 2)
	ref := filepath.Join(t.TempDir(), "ref")
	if _, err := Run(context.Background(), testConfig(t, in, ref, 2)); err != nil {
		t.Fatal(err)
	}
	for _, stage := range []string{StageMap, StageReduce, StageGather, StageVerify} {
		t.Run(stage, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cfg := testConfig(t, in, out, 2)
			cfg.Params.Gather = "on"
			cfg.Progress = &cancelOn{marker: stage + " ", cancel: cancel}
			if _, err := Run(ctx, cfg); err == nil {
				t.Fatal("interrupted run reported success")
			}
			if _, err := os.Stat(filepath.Join(out, "_SUCCESS")); err == nil {
				t.Fatal("_SUCCESS after an interrupted run")
			}
			docs, _ := filepath.Glob(filepath.Join(out, "docs", "*.parquet"))
			before := map[string]time.Time{}
			for _, f := range docs {
				st, _ := os.Stat(f)
				before[f] = st.ModTime()
			}

			cfg = testConfig(t, in, out, 2)
			cfg.Params.Gather = "on"
			man, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatalf("resumed run: %v", err)
			}
			// Map tasks finished before the interrupt were not redone.
			for f, mt := range before {
				st, err := os.Stat(f)
				if err != nil || !st.ModTime().Equal(mt) {
					t.Errorf("%s was rewritten by the resumed run", filepath.Base(f))
				}
			}
			if stage != "map" && len(before) != man.Chunks {
				t.Errorf("%d docs files after the map stage, want %d", len(before), man.Chunks)
			}
			sameFiles(t, ref, out, "pairs/*.parquet", "candidates/*.parquet", "clusters.parquet", "duplicates.parquet", report.PairsFile)
		})
	}
}

// TestResumeMovedOutput interrupts a job, moves its output directory (with
// the embedded server's store inside it), and resumes it at the new place:
// the job finishes there, byte-identical to an undisturbed run, and nothing
// is written at the old place. A real mismatch is refused naming what
// differs.
func TestResumeMovedOutput(t *testing.T) {
	in, _ := genCorpus(t, 400, 13, 2)
	ref := filepath.Join(t.TempDir(), "ref")
	if _, err := Run(context.Background(), testConfig(t, in, ref, 2)); err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	old, moved := filepath.Join(base, "old"), filepath.Join(base, "moved")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := testConfig(t, in, old, 2)
	cfg.Progress = &cancelOn{marker: "reduce ", cancel: cancel}
	if _, err := Run(ctx, cfg); err == nil {
		t.Fatal("interrupted run reported success")
	}
	if err := os.Rename(old, moved); err != nil {
		t.Fatal(err)
	}

	changed := testConfig(t, in, moved, 2)
	changed.Params.Threshold = 0.75
	if _, err := Run(context.Background(), changed); err == nil || !strings.Contains(err.Error(), "Threshold 0.8 (now 0.75)") {
		t.Fatalf("resume with another threshold: err = %v, want one naming Threshold 0.8 (now 0.75)", err)
	}

	if _, err := Run(context.Background(), testConfig(t, in, moved, 2)); err != nil {
		t.Fatalf("resuming the moved output: %v", err)
	}
	if _, err := os.Stat(old); err == nil {
		t.Fatalf("the resumed job wrote at the old place %s", old)
	}
	sameFiles(t, ref, moved, "pairs/*.parquet", "candidates/*.parquet", "clusters.parquet", "duplicates.parquet", "exact.parquet")
}

// TestDiskFull runs a job whose embedded store's disk reads as full: it
// fails within the timeout, naming the disk and the store's path, writes
// no _SUCCESS, and runs to the end once there is space again.
func TestDiskFull(t *testing.T) {
	in, _ := genCorpus(t, 300, 27, 2)
	ref := filepath.Join(t.TempDir(), "ref")
	if _, err := Run(context.Background(), testConfig(t, in, ref, 2)); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	store := filepath.Join(t.TempDir(), "nats-store")
	cfg := testConfig(t, in, out, 2)
	cfg.NATSStore, cfg.DiskFullTimeout = store, time.Second
	cfg.Faults, _ = faults.Parse("slow@map/*", nil) // the job outlives the timeout
	cfg.freeSpace = func(path string) (uint64, error) {
		if path == store {
			return 4096, nil
		}
		return freeSpace(path)
	}
	start := time.Now()
	_, err := Run(context.Background(), cfg)
	if !errors.Is(err, ErrDiskFull) || !strings.Contains(err.Error(), store) {
		t.Fatalf("err = %v, want ErrDiskFull naming %s", err, store)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("the job took %v to give up on a full disk", d)
	}
	if _, err := os.Stat(filepath.Join(out, "_SUCCESS")); err == nil {
		t.Fatal("_SUCCESS written on a full disk")
	}
	cfg.freeSpace, cfg.Faults = nil, nil
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatalf("resuming with space again: %v", err)
	}
	sameFiles(t, ref, out, "pairs/*.parquet", "clusters.parquet", "duplicates.parquet")
}
