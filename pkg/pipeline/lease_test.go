package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/queue"
)

// TestLeaseLostStopsRun runs a job against a NATS server on loopback with
// an outside worker, and writes another coordinator's lease over this
// one's while the job runs (as a second coordinator does once the first's
// lease expired during an outage): the run stops with ErrJobBusy, exit
// status 5 in the command, and writes no _SUCCESS.
func TestLeaseLostStopsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a lease refresh")
	}
	in, _ := genCorpus(t, 400, 21, 4)
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

	// Wait for the job's spec, then take its lease as another coordinator.
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
	other, _ := json.Marshal(queue.Lease{Holder: "another coordinator", Out: "/elsewhere"})
	if err := st.Put(ctx, queue.LeaseKey, other); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, ErrJobBusy) {
			t.Fatalf("run ended with %v, want ErrJobBusy", err)
		}
	case <-ctx.Done():
		t.Fatal("the run went on after its lease was taken")
	}
	if _, err := os.Stat(filepath.Join(out, job.SuccessFile)); err == nil {
		t.Fatal("_SUCCESS written by a run that lost its lease")
	}
}

func readJSONFile(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}
