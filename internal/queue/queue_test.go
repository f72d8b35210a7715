package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// TestServe runs tasks through an embedded server and checks the delivery
// rules: success acknowledges, an error is retried until MaxDeliver and
// then recorded once, a permanent error and a panic are recorded at once.
func TestServe(t *testing.T) {
	srv, err := StartEmbedded(t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	q, err := srv.Open(ctx, "test", Config{AckWait: 2 * time.Second, MaxDeliver: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()

	tests := []struct {
		task         string
		wantAttempts int  // deliveries seen by the handler
		wantFailed   bool // recorded as failed
	}{
		{"ok", 1, false},
		{"fail-once", 2, false},
		{"fail-always", 3, true},
		{"permanent", 1, true},
		{"panic", 3, true},
	}
	var mu sync.Mutex
	attempts := map[string]int{}
	failed := map[string]int{}
	done := map[string]bool{}
	handler := func(ctx context.Context, d Delivery) error {
		task := string(d.Data)
		mu.Lock()
		attempts[task]++
		n := attempts[task]
		mu.Unlock()
		if n != d.Attempt {
			return Permanent(fmt.Errorf("delivery says attempt %d, handler saw %d", d.Attempt, n))
		}
		switch task {
		case "fail-once":
			if n == 1 {
				return errors.New("transient")
			}
		case "fail-always":
			return errors.New("always")
		case "permanent":
			return Permanent(errors.New("bad task"))
		case "panic":
			panic("boom")
		}
		mu.Lock()
		done[task] = true
		mu.Unlock()
		return nil
	}
	record := func(ctx context.Context, d Delivery, err error) error {
		mu.Lock()
		failed[string(d.Data)]++
		mu.Unlock()
		return nil
	}
	for _, tt := range tests {
		if err := q.Publish(ctx, "testjob", "r1", tt.task, []byte(tt.task)); err != nil {
			t.Fatal(err)
		}
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan struct{})
	go func() {
		q.Serve(sctx, 2, handler, record, slog.New(slog.DiscardHandler))
		close(served)
	}()
	// Retries back off by a second per attempt: allow for it.
	deadline := time.After(30 * time.Second)
	for {
		mu.Lock()
		finished := 0
		for _, tt := range tests {
			if done[tt.task] || failed[tt.task] > 0 {
				finished++
			}
		}
		mu.Unlock()
		if finished == len(tests) {
			break
		}
		select {
		case <-deadline:
			t.Fatalf("tasks not finished: attempts %v, failed %v, done %v", attempts, failed, done)
		case <-time.After(50 * time.Millisecond):
		}
	}
	stop()
	select {
	case <-served:
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, tt := range tests {
		if attempts[tt.task] != tt.wantAttempts {
			t.Errorf("%s: %d deliveries, want %d", tt.task, attempts[tt.task], tt.wantAttempts)
		}
		if (failed[tt.task] == 1) != tt.wantFailed || failed[tt.task] > 1 {
			t.Errorf("%s: recorded failed %d times, want failed=%v", tt.task, failed[tt.task], tt.wantFailed)
		}
	}
}

// TestPending checks the queue's count of tasks as they are published,
// run and acknowledged. The consumer's counts follow publishes a moment
// later: each is waited for.
func TestPending(t *testing.T) {
	ctx, q := embeddedQueue(t)
	waitPending := func(want int, when string) {
		t.Helper()
		var n int
		var err error
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if n, err = q.Pending(ctx); err != nil {
				t.Fatal(err)
			}
			if n == want {
				return
			}
		}
		t.Fatalf("%s: Pending = %d, want %d", when, n, want)
	}
	waitPending(0, "an empty queue")
	for i := range 3 {
		if err := q.Publish(ctx, "testjob", "r1", fmt.Sprint(i), []byte("t")); err != nil {
			t.Fatal(err)
		}
	}
	waitPending(3, "3 tasks published")
	// One slot holds one task unacknowledged: still pending.
	started, release := make(chan struct{}, 3), make(chan struct{})
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() {
		served <- q.Serve(sctx, 1, func(context.Context, Delivery) error {
			started <- struct{}{}
			<-release
			return nil
		}, func(context.Context, Delivery, error) error { return nil }, slog.New(slog.DiscardHandler))
	}()
	<-started
	waitPending(3, "3 tasks, one running")
	close(release)
	waitPending(0, "all tasks done")
	stop()
	<-served
}

// embeddedQueue opens a queue with the default rules on an embedded
// server, both closed when the test ends, and a context of 30 seconds.
func embeddedQueue(t *testing.T) (context.Context, *Queue) {
	t.Helper()
	ctx, _, q := embeddedServer(t)
	return ctx, q
}

// embeddedServer is embeddedQueue with its server.
func embeddedServer(t *testing.T) (context.Context, *Embedded, *Queue) {
	t.Helper()
	srv, err := StartEmbedded(t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	q, err := srv.Open(ctx, "test", DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(q.Close)
	return ctx, srv, q
}
