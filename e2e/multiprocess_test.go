package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/queue"
)

// TestMultiProcess runs a NATS server on loopback, two worker processes and
// a coordinator process, and checks that the job completes with the same
// pairs and clusters as an embedded run.
func TestMultiProcess(t *testing.T) {
	in := t.TempDir()
	run(t, "gencorpus", "-n", "800", "-seed", "11", "-format", "jsonl", "-files", "4", "-out", in)

	srv, err := queue.StartEmbedded(t.TempDir(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	url := srv.URL()

	var workers []*exec.Cmd
	var logs []*bytes.Buffer
	for range 2 {
		w := command("worker", "--nats", url, "--slots", "1", "--ack-wait", "10s")
		var buf bytes.Buffer
		w.Stdout, w.Stderr = &buf, &buf
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		workers = append(workers, w)
		logs = append(logs, &buf)
	}
	defer func() {
		for _, w := range workers {
			w.Process.Kill()
		}
	}()

	out := filepath.Join(t.TempDir(), "out")
	run(t, "coordinator", "--nats", url, "--out", out, "--chunk-bytes", "200000", "--partitions", "4", "--ack-wait", "10s", "--quiet", in)
	if _, err := os.Stat(filepath.Join(out, "_SUCCESS")); err != nil {
		t.Fatal("no _SUCCESS")
	}

	// Both workers shut down cleanly and promptly on SIGTERM.
	for i, w := range workers {
		w.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- w.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("worker %d exited with %v\n%s", i, err, logs[i])
			}
		case <-time.After(15 * time.Second):
			t.Errorf("worker %d did not stop within 15s of SIGTERM", i)
		}
	}

	// The same job, embedded, gives byte-identical results.
	ref := filepath.Join(t.TempDir(), "ref")
	run(t, "coordinator", "--out", ref, "--chunk-bytes", "200000", "--partitions", "4", "--workers", "2", "--quiet", in)
	sameResults(t, ref, out)
}
