package control

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/queue"
)

// TestLeaseLostStopsRun runs a job against a NATS server on loopback with
// an outside worker and, while the job runs, either writes another
// coordinator's lease over this one's (as a second coordinator does once
// the first's lease expired) or deletes the job's state bucket (as a
// second coordinator does that started the job afresh with --overwrite,
// or finished it): the run stops at the next refresh of its lease with
// ErrLeaseLost (exit status 5 in the command), and writes no _SUCCESS.
func TestLeaseLostStopsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a lease refresh")
	}
	in, _ := genCorpus(t, 400, 21, 4)
	for _, tt := range []struct {
		name string
		take func(ctx context.Context, q *queue.Queue, st *queue.State, job string) error
	}{
		{"lease taken", func(ctx context.Context, _ *queue.Queue, st *queue.State, _ string) error {
			other, _ := json.Marshal(queue.Lease{Holder: "another coordinator", Out: "/elsewhere"})
			return st.Put(ctx, queue.LeaseKey, other)
		}},
		{"state deleted", func(ctx context.Context, q *queue.Queue, _ *queue.State, job string) error {
			return q.DeleteState(ctx, job)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			// 2 s a map task: the job outlives a lease refresh.
			url := outsideWorker(t, ctx, queue.DefaultConfig(), 1, "slow@map/*")
			out := filepath.Join(t.TempDir(), "out")
			cfg := testConfig(t, in, out, 0)
			cfg.NATSURL = url
			cfg.Params.ChunkBytes = 64 << 10
			done := make(chan error, 1)
			go func() { _, err := Run(ctx, cfg); done <- err }()

			// Wait for the job's spec, then take the job away.
			var spec job.Spec
			for readJSONFile(filepath.Join(out, job.SpecFile), &spec) != nil {
				time.Sleep(100 * time.Millisecond)
			}
			time.Sleep(time.Second)
			q, err := queue.Connect(ctx, queue.ConnConfig{URL: url, ConnectTimeout: 10 * time.Second}, "another-coordinator", queue.DefaultConfig(), slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			defer q.Close()
			st, err := q.State(ctx, spec.Job)
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.take(ctx, q, st, spec.Job); err != nil {
				t.Fatal(err)
			}
			taken := time.Now()
			select {
			case err := <-done:
				if !errors.Is(err, queue.ErrLeaseLost) || !errors.Is(err, ErrJobBusy) {
					t.Fatalf("run ended with %v, want ErrLeaseLost", err)
				}
				if d := time.Since(taken); d > 15*time.Second {
					t.Errorf("the run stopped %v after losing its lease, want within a refresh or two", d)
				}
			case <-ctx.Done():
				t.Fatal("the run went on after its lease was lost")
			}
			if _, err := os.Stat(filepath.Join(out, job.SuccessFile)); err == nil {
				t.Fatal("_SUCCESS written by a run that lost its lease")
			}
		})
	}
}

// TestRefuseOthersJob leaves in a NATS server the state of an unfinished
// run of job "nightly" writing another output (its coordinator gone, its
// lease expired or released): a run of "nightly" into a new output
// refuses with ErrJobBusy, naming that output and --overwrite, and leaves
// the state alone; with --overwrite it discards it and runs.
func TestRefuseOthersJob(t *testing.T) {
	in, _ := genCorpus(t, 200, 22, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url := outsideWorker(t, ctx, queue.DefaultConfig(), 2, "")
	q, err := queue.Connect(ctx, queue.ConnConfig{URL: url, ConnectTimeout: 10 * time.Second}, "earlier-coordinator", queue.DefaultConfig(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	st, err := q.State(ctx, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	earlier, _ := json.Marshal(job.Spec{Job: "nightly", Epoch: "0123abcd", Out: "/data/earlier-out"})
	if err := st.Put(ctx, specKey, earlier); err != nil {
		t.Fatal(err)
	}

	cfg := testConfig(t, in, filepath.Join(t.TempDir(), "out"), 0)
	cfg.NATSURL, cfg.Job = url, "nightly"
	_, err = Run(ctx, cfg)
	if !errors.Is(err, ErrJobBusy) || !strings.Contains(err.Error(), "/data/earlier-out") || !strings.Contains(err.Error(), "--overwrite") {
		t.Fatalf("run over another output's unfinished job: %v, want ErrJobBusy naming /data/earlier-out and --overwrite", err)
	}
	if v, err := st.Get(ctx, specKey); err != nil || string(v) != string(earlier) {
		t.Fatalf("the refused run changed the earlier run's state: %s, %v", v, err)
	}

	cfg.Overwrite = true
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatalf("with --overwrite: %v", err)
	}
}

func readJSONFile(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}
