package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/neardup/neardup/internal/metrics/metricstest"
)

// TestBatchMetrics runs a job on the sample with --metrics-push (a fake
// Pushgateway) and --metrics-file: both get the job's counts under the
// job label, the same as its summary, and its last success's time; a job
// that fails then pushes its failure time and leaves the file as it was;
// a Pushgateway that refuses the push is logged as an error and leaves a
// complete job's exit status 0.
func TestBatchMetrics(t *testing.T) {
	var (
		mu     sync.Mutex
		bodies []string
		calls  []string
		status = http.StatusOK
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		calls = append(calls, r.Method+" "+r.URL.Path)
		bodies = append(bodies, string(body))
		code := status
		mu.Unlock()
		w.WriteHeader(code)
	}))
	defer srv.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "neardup.prom")
	out := filepath.Join(dir, "out")
	sample := filepath.Join("..", "..", "testdata", "sample", "sample.jsonl.gz")
	args := []string{"--out", out, "--quiet", "--workers", "2", "--metrics-push", srv.URL, "--metrics-file", file, "--metrics-job", "weekly", sample}
	var stdout, stderr bytes.Buffer
	if exit := Main("coordinator", args, Coordinator(), &stdout, &stderr); exit != 0 {
		t.Fatalf("exit %d\n%s", exit, stderr.String())
	}
	var sum summary
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fromFile, err := metricstest.Parse(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 1 || calls[0] != "PUT /metrics/job/weekly" {
		t.Fatalf("pushes %v, want one PUT /metrics/job/weekly", calls)
	}
	pushed, err := metricstest.Parse(strings.NewReader(bodies[0]))
	if err != nil {
		t.Fatal(err)
	}
	s := metricstest.Series
	for name, want := range map[string]float64{
		"neardup_job_documents":  float64(sum.Counts.Docs),
		"neardup_job_duplicates": float64(sum.Counts.Duplicates),
		"neardup_job_pairs":      float64(sum.Counts.Pairs),
	} {
		if got := fromFile[s(name, "job", "weekly")]; got != want || want == 0 {
			t.Errorf("--metrics-file: %s = %v, want %v", name, got, want)
		}
		if got := pushed[name]; got != want {
			t.Errorf("--metrics-push: %s = %v, want %v", name, got, want)
		}
	}
	if ts := fromFile[s("neardup_last_success_timestamp_seconds", "job", "weekly")]; ts == 0 || ts != pushed["neardup_last_success_timestamp_seconds"] {
		t.Errorf("last success %v in the file, %v pushed", ts, pushed["neardup_last_success_timestamp_seconds"])
	}

	// A job that fails (its input is gone): a failure pushed, the file kept.
	stdout.Reset()
	stderr.Reset()
	failing := append(args[:len(args)-1:len(args)-1], "--out", filepath.Join(dir, "out2"), filepath.Join(dir, "missing.jsonl"))
	if exit := Main("coordinator", failing, Coordinator(), &stdout, &stderr); exit != 1 {
		t.Fatalf("exit %d, want 1\n%s", exit, stderr.String())
	}
	if len(calls) != 2 || calls[1] != "POST /metrics/job/weekly" || !strings.Contains(bodies[1], "neardup_last_failure_timestamp_seconds") {
		t.Errorf("pushes %v, want a POST of the failure after the PUT:\n%s", calls, bodies[len(bodies)-1])
	}
	if after, _ := os.ReadFile(file); !bytes.Equal(after, data) {
		t.Errorf("a failed job changed --metrics-file:\n%s", after)
	}

	// A complete job whose push is refused: logged, exit 0 all the same.
	mu.Lock()
	status = http.StatusInternalServerError
	mu.Unlock()
	stdout.Reset()
	stderr.Reset()
	refused := append(args[:len(args)-1:len(args)-1], "--out", filepath.Join(dir, "out3"), sample)
	if exit := Main("coordinator", refused, Coordinator(), &stdout, &stderr); exit != 0 {
		t.Fatalf("exit %d, want 0 for a complete job whose push was refused\n%s", exit, stderr.String())
	}
	if !strings.Contains(stderr.String(), "the job's metrics were not reported") || !strings.Contains(stderr.String(), "500") {
		t.Errorf("no error logged for the refused push:\n%s", stderr.String())
	}
}
