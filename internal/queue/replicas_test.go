package queue

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestConfigCheck checks the replica counts --replicas accepts.
func TestConfigCheck(t *testing.T) {
	tests := []struct {
		replicas int
		ok       bool
	}{{-1, false}, {0, false}, {1, true}, {3, true}, {5, true}, {6, false}}
	for _, tt := range tests {
		c := DefaultConfig()
		c.Replicas = tt.replicas
		err := c.Check()
		if tt.ok != (err == nil) || err != nil && !strings.Contains(err.Error(), "--replicas") {
			t.Errorf("Check() with %d replicas = %v, want ok %v", tt.replicas, err, tt.ok)
		}
	}
}

// TestReplicasRefused checks, on a single server, that replicas it cannot
// keep fail at once with an error naming the flag, and that a stream or
// bucket which exists with another replica count is not changed: the error
// names it, its replicas and the flag.
func TestReplicasRefused(t *testing.T) {
	srv, err := StartEmbedded(t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r := func(n int) Config { c := DefaultConfig(); c.Replicas = n; return c }

	started := time.Now()
	if q, err := srv.Open(ctx, "test", r(3)); err == nil {
		q.Close()
		t.Fatal("a single server took a stream with 3 replicas")
	} else if !strings.Contains(err.Error(), "--replicas 3 needs a JetStream cluster") {
		t.Errorf("R3 on one server: %v", err)
	}
	if d := time.Since(started); d > 3*time.Second {
		t.Errorf("R3 on one server failed after %v, not at once", d)
	}

	q, err := srv.Open(ctx, "test", r(1)) // creates the stream, R1
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if _, err := q.State(ctx, "job1"); err != nil {
		t.Fatal(err)
	}
	if q2, err := srv.Open(ctx, "test", r(2)); err == nil {
		q2.Close()
		t.Fatal("opened an R1 stream with --replicas 2")
	} else if want := "stream NEARDUP_TASKS has 1 replica(s), but --replicas is 2"; !strings.Contains(err.Error(), want) {
		t.Errorf("R2 on an R1 stream: %v, want %q", err, want)
	}

	// A bucket made with another replica count (the stream matching).
	q2 := *q
	q2.cfg.Replicas = 2
	started = time.Now()
	if _, err := q2.State(ctx, "job1"); err == nil {
		t.Fatal("opened an R1 bucket with --replicas 2")
	} else if want := "state bucket neardup-job1 has 1 replica(s), but --replicas is 2"; !strings.Contains(err.Error(), want) {
		t.Errorf("R2 on an R1 bucket: %v, want %q", err, want)
	}
	if d := time.Since(started); d > 3*time.Second {
		t.Errorf("R2 on an R1 bucket failed after %v, not at once", d)
	}
	// The refusals changed nothing: the stream and the bucket still open.
	if q3, err := srv.Open(ctx, "test", r(1)); err != nil {
		t.Fatal(err)
	} else {
		q3.Close()
	}
	if _, err := q.State(ctx, "job1"); err != nil {
		t.Fatal(err)
	}
}
