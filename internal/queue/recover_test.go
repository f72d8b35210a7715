package queue

import (
	"context"
	"testing"
	"time"
)

// TestRecoverJetStream turns JetStream off on an embedded server as the
// server does when its store runs out of space: puts then fail with a
// transient error, and after Recover the bucket is back with what it
// held, and takes puts again.
func TestRecoverJetStream(t *testing.T) {
	ctx, srv, q := embeddedServer(t)
	st, err := q.State(ctx, "job")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, "before", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if was, err := srv.Recover(); was || err != nil {
		t.Fatalf("Recover with JetStream on: %v, %v", was, err)
	}

	srv.srv.ShutdownJetStream() // what the server does when its store runs out of space
	pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
	err = st.Put(pctx, "during", []byte("2"))
	pcancel()
	if err == nil || !Transient(err) {
		t.Fatalf("put with JetStream off: %v, want a transient error", err)
	}
	t.Logf("put with JetStream off: %v", err)

	if was, err := srv.Recover(); !was || err != nil {
		t.Fatalf("Recover: %v, %v", was, err)
	}
	var v []byte
	err = Retry(ctx, func(ctx context.Context) error {
		if err := st.Put(ctx, "after", []byte("3")); err != nil {
			return err
		}
		v, err = st.Get(ctx, "before")
		return err
	})
	if err != nil || string(v) != "1" {
		t.Fatalf("after Recover: %q, %v", v, err)
	}
}
