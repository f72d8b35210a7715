package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/metrics/metricstest"
	"github.com/neardup/neardup/internal/queue"
)

// TestCommandLine runs a job the way a scheduler would, a coordinator and
// a worker process around a NATS server, with settings from flags after
// the inputs and from NEARDUP_* variables, JSON logs and metrics, and
// checks: the stdout summary against the manifest, every log line as
// JSON, the command line winning over the environment, the coordinator's
// metrics served during the job, the worker's counters against the
// manifest after it, and the Parquet files' created_by against --version.
func TestCommandLine(t *testing.T) {
	root := t.TempDir()
	in, out := filepath.Join(root, "in"), filepath.Join(root, "out")
	run(t, "gencorpus", "-n", "800", "-seed", "13", "-format", "jsonl", "-files", "3", "-out", in)
	broken := "{\"id\":\"b1\",\"text\":\"a b c\"}\nnot json\n{\"id\":\"b2\"}\n{\"id\":\"b3\",\"text\":\"d e f\"}\n"
	if err := os.WriteFile(filepath.Join(in, "broken.jsonl"), []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, err := queue.StartEmbedded(t.TempDir(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()

	workerMetrics := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	w := start(t, []string{"NEARDUP_NATS=" + srv.URL(), "NEARDUP_SLOTS=2", "NEARDUP_LOG_FORMAT=json", "NEARDUP_METRICS_ADDR=" + workerMetrics},
		"worker", "--data-root", root)

	coordMetrics := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	coord := command("coordinator", in, "--out", out, "--nats", srv.URL(), "--partitions", "4", "--log-format", "json", "--metrics-addr", coordMetrics)
	coord.Env = append(os.Environ(), "NEARDUP_CHUNK_BYTES=200000", "NEARDUP_PARTITIONS=9", "NEARDUP_QUIET=true")
	var stdout, stderr bytes.Buffer
	coord.Stdout, coord.Stderr = &stdout, &stderr
	if err := coord.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- coord.Wait() }()
	// Scrape the coordinator while the job runs.
	stageSeen := false
	var runErr error
	deadline := time.After(3 * time.Minute)
wait:
	for {
		select {
		case runErr = <-done:
			break wait
		case <-time.After(100 * time.Millisecond):
			if s, err := metricstest.Scrape(coordMetrics); err == nil {
				for k := range s {
					stageSeen = stageSeen || strings.HasPrefix(k, "neardup_tasks_pending{") || strings.HasPrefix(k, "neardup_stage_duration_seconds_total{")
				}
			}
		case <-deadline:
			coord.Process.Kill()
			t.Fatalf("coordinator still running after 3 minutes:\n%s", stderr.String())
		}
	}
	if runErr != nil {
		t.Fatalf("coordinator: %v\n%s", runErr, stderr.String())
	}
	if !stageSeen {
		t.Error("no scrape of the coordinator's metrics during the job showed a stage")
	}

	data, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	man, err := manifest.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if man.Params.ChunkBytes != 200000 || man.Params.Partitions != 4 {
		t.Errorf("chunk_bytes %d (from NEARDUP_CHUNK_BYTES: 200000), partitions %d (--partitions 4 over NEARDUP_PARTITIONS=9)",
			man.Params.ChunkBytes, man.Params.Partitions)
	}
	if man.Counts.Rejected < 2 || man.Chunks < 2 {
		t.Fatalf("the job should read several chunks and reject records: %d chunks, %d rejected", man.Chunks, man.Counts.Rejected)
	}

	// stdout: one JSON object, the summary.
	var sum struct {
		Status   string          `json:"status"`
		ExitCode int             `json:"exit_code"`
		Out      string          `json:"out"`
		Chunks   int             `json:"chunks"`
		Counts   manifest.Counts `json:"counts"`
	}
	dec := json.NewDecoder(bytes.NewReader(stdout.Bytes()))
	if err := dec.Decode(&sum); err != nil {
		t.Fatalf("stdout is not a JSON summary: %v\n%s", err, stdout.String())
	}
	if dec.More() || sum.Status != "complete" || sum.ExitCode != 0 || sum.Out != out || sum.Chunks != man.Chunks || sum.Counts != man.Counts {
		t.Errorf("summary %+v, want one object: complete, exit 0, out %s, the manifest's %d chunks and counts %+v", sum, out, man.Chunks, man.Counts)
	}
	// stderr: JSON log lines only.
	jobComplete := false
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		var rec struct{ Level, Msg string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.Level == "" || rec.Msg == "" {
			t.Errorf("not a JSON log line (%v): %s", err, line)
		}
		jobComplete = jobComplete || rec.Msg == "job complete"
	}
	if !jobComplete {
		t.Errorf("no \"job complete\" log line:\n%s", stderr.String())
	}

	// The worker ran every task: its counters are the manifest's.
	got, err := metricstest.Scrape(workerMetrics)
	if err != nil {
		t.Fatalf("scraping the worker: %v\n%s", err, w.output())
	}
	s := metricstest.Series
	var rejects float64
	for k, v := range got {
		if strings.HasPrefix(k, "neardup_rejects_total{") {
			rejects += v
		}
	}
	for _, r := range man.RejectReasons {
		if n := got[s("neardup_rejects_total", "reason", r.Reason)]; n != float64(r.Count) {
			t.Errorf("worker metrics: %d rejects of kind %q, manifest: %d", int64(n), r.Reason, r.Count)
		}
	}
	for _, c := range []struct {
		series string
		got    float64
		want   int64
	}{
		{"map tasks done", got[s("neardup_tasks_done_total", "stage", "map")], int64(man.Chunks)},
		{"map task durations", got[s("neardup_task_duration_seconds_count", "stage", "map")], int64(man.Chunks)},
		{"reduce tasks done", got[s("neardup_tasks_done_total", "stage", "reduce")], int64(stageTasks(man, "reduce"))},
		{"documents read", got["neardup_documents_read_total"], man.Counts.Docs},
		{"input bytes read", got["neardup_input_bytes_read_total"], man.Counts.InputBytes},
		{"text bytes read", got["neardup_text_bytes_read_total"], man.Counts.TextBytes},
		{"rejects", rejects, man.Counts.Rejected},
	} {
		if c.got != float64(c.want) {
			t.Errorf("worker metrics: %s = %v, manifest: %d", c.series, c.got, c.want)
		}
	}
	if n, ok := got["neardup_queue_tasks"]; !ok || n != 0 {
		t.Errorf("worker metrics: neardup_queue_tasks %v (present: %v), want 0 after the job", n, ok)
	}
	if got[s("neardup_tasks_started_total", "stage", "cluster")] < 1 || got[s("neardup_tasks_done_total", "stage", "verify")] < 1 {
		t.Errorf("worker metrics: no cluster or verify task counted")
	}
	w.cmd.Process.Signal(syscall.SIGTERM)
	if err := w.wait(t, 15*time.Second); err != nil {
		t.Errorf("worker: %v\n%s", err, w.output())
	}

	// created_by names the build that --version prints.
	version := strings.Fields(run(t, "coordinator", "--version"))
	f, err := os.Open(filepath.Join(out, "clusters.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	want := "neardup version " + strings.Trim(version[1], "()")
	if version[3] != "unknown" {
		want += " (build " + version[3] + ")"
	}
	if cb := pf.Metadata().CreatedBy; cb != want {
		t.Errorf("created_by %q, want %q (from --version: %q)", cb, want, version)
	}
}

// TestVersion checks --version of the built commands against what the Go
// toolchain reads from the binaries: module path and version, VCS revision
// (when stamped) and Go version.
func TestVersion(t *testing.T) {
	for _, name := range []string{"coordinator", "worker"} {
		cmd := command(name, "--version")
		got, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s --version: %v", name, err)
		}
		info, err := exec.Command("go", "version", "-m", cmd.Path).Output()
		if err != nil {
			t.Fatal(err)
		}
		want := []string{}
		rev, dirty := "unknown", false
		for i, line := range strings.Split(string(info), "\n") {
			f := strings.Fields(line)
			switch {
			case i == 0 && len(f) == 2:
				want = append(want, f[1]) // "<file>: go1.x"
			case len(f) >= 3 && f[0] == "mod":
				want = append(want, f[1]+" "+f[2]+" ")
			case len(f) == 2 && f[0] == "build" && strings.HasPrefix(f[1], "vcs.revision="):
				rev = strings.TrimPrefix(f[1], "vcs.revision=")
			case len(f) == 2 && f[0] == "build" && f[1] == "vcs.modified=true":
				dirty = true
			}
		}
		if dirty {
			rev += "-dirty"
		}
		want = append(want, "revision "+rev+" ")
		if len(want) != 3 || strings.Count(string(got), "\n") != 1 {
			t.Fatalf("%s --version printed %q; go version -m:\n%s", name, got, info)
		}
		for _, w := range want {
			if !strings.Contains(string(got), w) {
				t.Errorf("%s --version = %q, does not say %q (go version -m:\n%s)", name, got, w, info)
			}
		}
	}
}

// stageTasks is the number of tasks of a stage of the manifest.
func stageTasks(m *manifest.Manifest, name string) int {
	for _, st := range m.Stages {
		if st.Name == name {
			return st.Tasks
		}
	}
	return -1
}
