package queue

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"
)

// TestServeStopsWithServerGone stops the NATS server while a task is
// running, makes the task fail for good, and stops the worker: recording
// the failure cannot reach the server, and Serve still returns within the
// ack-wait of its context ending.
func TestServeStopsWithServerGone(t *testing.T) {
	const ackWait = 2 * time.Second
	srv, err := StartEmbedded(t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q, err := srv.Open(ctx, "test", Config{AckWait: ackWait, MaxDeliver: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if err := q.Publish(ctx, "job", "r1", "t1", []byte("t1")); err != nil {
		t.Fatal(err)
	}
	running, serverGone := make(chan struct{}), make(chan struct{})
	handler := func(context.Context, Delivery) error {
		close(running)
		<-serverGone
		return Permanent(errors.New("the task cannot finish"))
	}
	// Recording a failure needs the server: like the worker's recorder, it
	// retries until its context ends.
	record := func(ctx context.Context, d Delivery, err error) error { <-ctx.Done(); return ctx.Err() }
	done := make(chan struct{})
	go func() {
		defer close(done)
		q.Serve(ctx, 2, handler, record, slog.New(slog.DiscardHandler))
	}()
	<-running
	srv.Shutdown()
	close(serverGone)
	time.Sleep(200 * time.Millisecond)
	stopped := time.Now()
	cancel()
	select {
	case <-done:
		if d := time.Since(stopped); d > ackWait+time.Second {
			t.Fatalf("Serve returned %v after its context ended, more than the ack-wait %v", d, ackWait)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return within 20 s of its context ending, the server gone")
	}
}
