package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
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
// results are byte-identical to an undisturbed run.
func TestResumeAfterInterrupt(t *testing.T) {
	in, _ := genCorpus(t, 500, 9, 2)
	ref := filepath.Join(t.TempDir(), "ref")
	if _, err := Run(context.Background(), testConfig(t, in, ref, 2)); err != nil {
		t.Fatal(err)
	}
	for _, stage := range []string{"map", "reduce", "verify"} {
		t.Run(stage, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cfg := testConfig(t, in, out, 2)
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
			sameFiles(t, ref, out, "pairs/*.parquet", "candidates/*.parquet", "clusters.parquet", "duplicates.parquet")
		})
	}
}
