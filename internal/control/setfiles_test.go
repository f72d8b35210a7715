package control

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/job"
)

// TestSetFilesAfterVerify fails jobs in their cluster stage, after verify,
// and checks which kept their set files: they go once verify is done
// unless a map task failed (a rerun then verifies again, reading every
// chunk's) or the work area is kept.
func TestSetFilesAfterVerify(t *testing.T) {
	in, _ := genCorpus(t, 300, 8, 2)
	for _, tt := range []struct {
		name     string
		faults   string
		keepWork bool
		wantSets bool
	}{
		{name: "every map task done", faults: "fail@cluster-comps/*"},
		{name: "--keep-work", faults: "fail@cluster-comps/*", keepWork: true, wantSets: true},
		{name: "a map task failed", faults: "fail@map/1; fail@cluster-comps/*", wantSets: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			cfg := faultyConfig(t, in, out, tt.faults)
			cfg.KeepWork = tt.keepWork
			cfg.wholeClusterBytes = -1
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if _, err := Run(ctx, cfg); err == nil {
				t.Fatal("the job did not fail in its cluster stage")
			}
			if v, _ := filepath.Glob(filepath.Join(out, filepath.FromSlash(job.WorkDir), "verified", "*")); len(v) == 0 {
				t.Fatal("verify wrote no verified files")
			}
			sets, _ := filepath.Glob(filepath.Join(out, filepath.FromSlash(job.SetsDir), "*"))
			if (len(sets) > 0) != tt.wantSets {
				t.Fatalf("set files left: %d, want some: %v", len(sets), tt.wantSets)
			}
		})
	}
}
