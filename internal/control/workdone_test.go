package control

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/job"
)

// TestStaleWorkRemoved stops a job as a kill right after its _SUCCESS
// would (Config.stopAfterMarker): the work area is still there. Running
// it again without Overwrite is refused as complete (ErrComplete, the
// command's exit 3) and removes the work area, saying so, and the index
// of a job run with --index=false; a work area kept with --keep-work is
// left (issue 31: the 11 MB _work of a killed job stayed for good).
func TestStaleWorkRemoved(t *testing.T) {
	in, _ := genCorpus(t, 200, 3, 1)
	tests := []struct {
		name                string
		keepWork, noIndex   bool
		wantWork, wantIndex bool
	}{
		{name: "killed after _SUCCESS", wantIndex: true},
		{name: "killed after _SUCCESS, --index=false", noIndex: true},
		{name: "--keep-work", keepWork: true, wantWork: true, wantIndex: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			out := filepath.Join(t.TempDir(), "out")
			cfg := testConfig(t, in, out, 1)
			cfg.KeepWork = tt.keepWork
			cfg.Params.Index = !tt.noIndex
			cfg.stopAfterMarker = true
			if _, err := Run(ctx, cfg); err != nil && !errors.Is(err, errStoppedAfterMarker) {
				t.Fatal(err)
			}
			for _, name := range []string{job.SuccessFile, job.WorkDir, job.IndexDir} {
				if _, err := os.Stat(filepath.Join(out, name)); err != nil {
					t.Fatalf("after the stop: %v", err)
				}
			}
			var logs bytes.Buffer
			cfg.stopAfterMarker = false
			cfg.Log = slog.New(slog.NewTextHandler(&logs, nil))
			if _, err := Run(ctx, cfg); !errors.Is(err, ErrComplete) {
				t.Fatalf("rerun: %v, want %v", err, ErrComplete)
			}
			for name, want := range map[string]bool{job.WorkDir: tt.wantWork, job.IndexDir: tt.wantIndex, job.SuccessFile: true} {
				if _, err := os.Stat(filepath.Join(out, name)); (err == nil) != want {
					t.Errorf("after the rerun, %s is there: %v, want %v", name, err == nil, want)
				}
			}
			if said := strings.Contains(logs.String(), "removed the finished job's work area"); said == tt.wantWork {
				t.Errorf("the rerun's log says it removed the work area: %v, want %v:\n%s", said, !tt.wantWork, logs.String())
			}
		})
	}
}
