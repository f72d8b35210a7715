package queue

import (
	"fmt"
	"testing"
	"time"
)

// TestDropConsumer checks that DropConsumer deletes the workers' consumer
// and that opening the queue again creates it, with the tasks the stream
// still holds: a finished job's server may drop it before it stops, and
// a job resumed on the same store finds its queue as before.
func TestDropConsumer(t *testing.T) {
	ctx, srv, q := embeddedServer(t)
	for i := range 2 {
		if err := q.Publish(ctx, "testjob", "r1", fmt.Sprint(i), []byte("t")); err != nil {
			t.Fatal(err)
		}
	}
	srv.DropConsumer(ctx)
	if n, err := q.Pending(ctx); err == nil {
		t.Fatalf("after DropConsumer the consumer still answers: %d tasks pending", n)
	}
	again, err := srv.Open(ctx, "test-again", DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	var n int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if n, err = again.Pending(ctx); err != nil {
			t.Fatal(err)
		}
		if n == 2 {
			return
		}
	}
	t.Fatalf("the queue opened again holds %d tasks, want the 2 published before", n)
}
