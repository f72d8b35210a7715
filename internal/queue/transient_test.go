package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func TestTransient(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("write x: %w", &os.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}), true},
		{fmt.Errorf("quota: %w", syscall.EDQUOT), true},
		{syscall.EIO, true},
		{fmt.Errorf("put: %w", context.DeadlineExceeded), true},
		{fmt.Errorf("open: %w", syscall.EACCES), false},
		{errors.New("corrupt file"), false},
		{Permanent(errors.New("bad task")), false},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), true},
		{Permanent(fmt.Errorf("dial: %w", syscall.ECONNREFUSED)), false},
		{fmt.Errorf("put: %w", nats.ErrTimeout), true},
		{fmt.Errorf("put: %w", nats.ErrNoResponders), true},
		{fmt.Errorf("put: %w", nats.ErrConnectionReconnecting), true},
		{fmt.Errorf("put: %w", jetstream.ErrJetStreamNotEnabled), true},
		{fmt.Errorf("put: %w", &jetstream.APIError{Code: 503, ErrorCode: 10023, Description: "insufficient resources"}), true},
		{fmt.Errorf("get: %w", jetstream.ErrKeyNotFound), false},
		{fmt.Errorf("put: %w", &jetstream.APIError{Code: 400, ErrorCode: 10003, Description: "bad request"}), false},
	}
	for _, tt := range tests {
		if got := Transient(tt.err); got != tt.want {
			t.Errorf("Transient(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// TestTransientRetry runs tasks that fail with a full disk for a while:
// one that recovers within TransientRetry succeeds in its first delivery;
// one that does not is then retried as any failure is, and fails for good
// after MaxDeliver deliveries.
func TestTransientRetry(t *testing.T) {
	srv, err := StartEmbedded(t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	q, err := srv.Open(ctx, "test", Config{AckWait: 2 * time.Second, MaxDeliver: 2, TransientRetry: 2500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	full := &os.PathError{Op: "write", Path: "bands/x", Err: syscall.ENOSPC}
	var mu sync.Mutex
	calls, deliveries := map[string]int{}, map[string]map[int]bool{}
	done, failed := map[string]bool{}, map[string]bool{}
	finished := make(chan string, 4)
	handler := func(ctx context.Context, d Delivery) error {
		task := string(d.Data)
		mu.Lock()
		calls[task]++
		n := calls[task]
		if deliveries[task] == nil {
			deliveries[task] = map[int]bool{}
		}
		deliveries[task][d.Attempt] = true
		mu.Unlock()
		switch {
		case task == "brief" && n <= 2: // full for about 3 s of back-off (1 s, 2 s)
			return full
		case task == "stays":
			return full
		}
		mu.Lock()
		done[task] = true
		mu.Unlock()
		finished <- task
		return nil
	}
	record := func(ctx context.Context, d Delivery, err error) error {
		mu.Lock()
		failed[string(d.Data)] = true
		mu.Unlock()
		finished <- string(d.Data)
		return nil
	}
	for _, task := range []string{"brief", "stays"} {
		if err := q.Publish(ctx, "job", "r1", task, []byte(task)); err != nil {
			t.Fatal(err)
		}
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan struct{})
	go func() { defer close(served); q.Serve(sctx, 2, handler, record, slog.New(slog.DiscardHandler)) }()
	for range 2 {
		select {
		case <-finished:
		case <-ctx.Done():
			t.Fatal("tasks did not finish")
		}
	}
	stop()
	<-served
	mu.Lock()
	defer mu.Unlock()
	if !done["brief"] || failed["brief"] || len(deliveries["brief"]) != 1 {
		t.Errorf("brief spell: done %v, failed %v, deliveries %v; want done in its first delivery", done["brief"], failed["brief"], deliveries["brief"])
	}
	if done["stays"] || !failed["stays"] || len(deliveries["stays"]) != 2 {
		t.Errorf("a disk that stays full: done %v, failed %v, deliveries %v; want failed after 2 deliveries", done["stays"], failed["stays"], deliveries["stays"])
	}
}
