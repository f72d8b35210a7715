package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/queue"
	"github.com/neardup/neardup/pkg/pipeline"
)

// fifoJob writes a small corpus with a named pipe among its files (which
// no writer will ever open), and starts a NATS server for its job, whose
// output is out.
func fifoJob(t *testing.T) (in, pipe, nats, out string) {
	t.Helper()
	in = t.TempDir()
	run(t, "gencorpus", "-n", "200", "-seed", "5", "-format", "jsonl", "-files", "4", "-out", in)
	pipe = filepath.Join(in, "pipe.jsonl")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Fatal(err)
	}
	srv, err := queue.StartEmbedded(t.TempDir(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	return in, pipe, srv.URL(), filepath.Join(t.TempDir(), "out")
}

// TestFIFOInputStops gives a coordinator a directory holding a named pipe
// and sends it SIGTERM while it waits for workers: it exits promptly,
// saying how to resume, having rejected the pipe (a FIFO's open waited
// for a writer for ever, deaf to SIGTERM).
func TestFIFOInputStops(t *testing.T) {
	in, pipe, nats, out := fifoJob(t)
	coord := start(t, nil, "coordinator", "--out", out, "--nats", nats, "--quiet", in)
	time.Sleep(3 * time.Second) // planned by then, or stuck in the pipe's open
	coord.cmd.Process.Signal(syscall.SIGTERM)
	signalled := time.Now()
	err := coord.wait(t, 10*time.Second)
	if exitCode(err) == 0 || !strings.Contains(coord.output(), "run the same command again to resume") {
		t.Fatalf("exit %v %v after SIGTERM, output:\n%s", err, time.Since(signalled), coord.output())
	}
	if !strings.Contains(coord.output(), `msg="input file rejected: not read, listed in rejects/" path=`+pipe) {
		t.Errorf("the pipe was not rejected:\n%s", coord.output())
	}
}

// TestFIFOInput runs a job through a worker process on a directory that
// holds a named pipe, and swaps one of its files for another pipe after
// the job is planned, before any worker runs: the first is rejected at
// planning, the second by its map task, neither is opened to wait for a
// writer, both are listed in rejects/ with their type, and the job
// completes.
func TestFIFOInput(t *testing.T) {
	in, pipe, nats, out := fifoJob(t)
	common := []string{"--nats", nats, "--ack-wait", "5s"}
	coord := start(t, nil, "coordinator", append(append([]string{"--out", out}, common...), append(jobArgs, in)...)...)
	coord.waitFor(t, "job planned", time.Minute)
	files, _ := filepath.Glob(filepath.Join(in, "*.jsonl"))
	swapped := ""
	for _, f := range files {
		if f != pipe && !strings.HasPrefix(filepath.Base(f), "_") { // an input, not a side file
			swapped = f
			break
		}
	}
	// Swapped in one step: a pipe made beside it, renamed over it.
	tmp := filepath.Join(in, "_swap")
	if err := syscall.Mkfifo(tmp, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, swapped); err != nil {
		t.Fatal(err)
	}
	start(t, nil, "worker", append(common, "--slots", "2")...)
	if err := coord.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("coordinator: %v\n%s", err, coord.output())
	}
	if _, err := os.Stat(filepath.Join(out, "_SUCCESS")); err != nil {
		t.Fatal("no _SUCCESS")
	}
	got := map[string]string{}
	for r, err := range pipeline.Rejects(context.Background(), out) {
		if err != nil {
			t.Fatal(err)
		}
		if r.Offset == -1 {
			got[r.File] = r.Reason
		}
	}
	for _, f := range []string{pipe, swapped} {
		if got[f] != "not a regular file: named pipe (FIFO)" {
			t.Errorf("rejects/ lists %s as %q, want it as a named pipe (rejects at offset -1: %v)", f, got[f], got)
		}
	}
	data, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var man struct {
		Counts  map[string]int64 `json:"counts"`
		Reasons []struct {
			Reason string `json:"reason"`
			Count  int64  `json:"count"`
		} `json:"reject_reasons"`
		Changed []string `json:"changed_inputs"`
	}
	if err := json.Unmarshal(data, &man); err != nil {
		t.Fatal(err)
	}
	n := int64(0)
	for _, r := range man.Reasons {
		if r.Reason == "not a regular file" {
			n = r.Count
		}
	}
	if n != 2 || man.Counts["unread_files"] != 1 || len(man.Changed) != 1 || man.Changed[0] != swapped {
		t.Errorf("manifest: %d rejects as not a regular file (want 2), unread_files %d (want 1), changed_inputs %v (want %s)",
			n, man.Counts["unread_files"], man.Changed, swapped)
	}
}
