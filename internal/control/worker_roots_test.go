package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/dataroot"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/queue"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/formats"
)

// TestWorkerRefusesForgedJob puts job specs into the job state, as any
// client of the server could: one whose output lies outside the worker's
// data roots, one whose plan names an input outside them. The worker must
// fail the task at once, record why, and write nothing outside.
func TestWorkerRefusesForgedJob(t *testing.T) {
	srv, err := queue.StartEmbedded(t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	q, err := srv.Open(ctx, "test", queue.Config{AckWait: 5 * time.Second, MaxDeliver: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	root, private := t.TempDir(), t.TempDir()
	secret := filepath.Join(private, "secret.jsonl")
	if err := os.WriteFile(secret, []byte(`{"id":"s","text":"secret"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(root, "out")
	st, err := storage.NewDir(inside)
	if err != nil {
		t.Fatal(err)
	}
	plan := job.Plan{Chunks: []job.Chunk{{Pieces: []formats.Piece{{Path: secret, Kind: formats.KindJSONL, End: -1, StartLine: 1}}}}}
	if err := writeJSON(ctx, st, job.PlanFile, plan); err != nil {
		t.Fatal(err)
	}
	roots, err := dataroot.Resolve([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	w := NewWorker(q, 1, slog.New(slog.DiscardHandler))
	w.RestrictTo(roots)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	go w.Run(wctx)

	tests := []struct {
		name, out, wantPath string
	}{
		{"output outside", filepath.Join(private, "stolen"), filepath.Join(private, "stolen")},
		{"input outside", inside, secret},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("forged%d", i)
			state, err := q.State(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			spec, _ := json.Marshal(job.Spec{Job: name, Epoch: "e1", Out: tt.out, Format: job.SpecFormat})
			if err := state.Put(ctx, specKey, spec); err != nil {
				t.Fatal(err)
			}
			task, _ := json.Marshal(Task{Job: name, Epoch: "e1", Stage: StageMap, Index: 0})
			if err := q.Publish(ctx, name, "e1", "t0", task); err != nil {
				t.Fatal(err)
			}
			for {
				v, err := state.Get(ctx, failedKey("e1", StageMap, 0))
				if err == nil {
					var f manifest.Failure
					if err := json.Unmarshal(v, &f); err != nil {
						t.Fatal(err)
					}
					if f.Attempts != 1 || !strings.Contains(f.Error, tt.wantPath) || !strings.Contains(f.Error, "outside the worker's data roots") {
						t.Errorf("recorded failure %+v", f)
					}
					break
				}
				if ctx.Err() != nil {
					t.Fatal("no failure recorded")
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(private, "stolen")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the worker created the forged output: %v", err)
	}
	if ents, _ := os.ReadDir(inside); len(ents) != 1 {
		t.Errorf("the worker wrote into %s: %v", inside, ents)
	}
}
