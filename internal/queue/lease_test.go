package queue

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/url"
	"sync"
	"testing"
	"time"
)

// TestLeaseAcrossOutage takes a lease on a server that listens on
// loopback, stops the server for longer than the refresh period and starts
// it again on the same store: the lease is renewed, not lost. Then another
// coordinator's lease is written over it: the next refresh reports it
// lost, with ErrJobBusy.
func TestLeaseAcrossOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out a server outage")
	}
	store := t.TempDir()
	srv, err := StartEmbedded(store, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	q, err := Connect(ctx, ConnConfig{URL: srv.URL(), ConnectTimeout: 10 * time.Second}, "test", DefaultConfig(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	st, err := q.State(ctx, "job1")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var lostErr error
	lostCh := make(chan struct{})
	lease, err := st.TakeLease(ctx, Lease{Holder: "me", Out: "/out"}, slog.New(slog.DiscardHandler), func(err error) {
		mu.Lock()
		lostErr = err
		mu.Unlock()
		close(lostCh)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()

	// An outage longer than the refresh period.
	srv.Shutdown()
	time.Sleep(leaseRefresh + 2*time.Second)
	if srv, err = StartEmbedded(store, u.Host); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Shutdown() }()
	time.Sleep(2*leaseRefresh + time.Second)
	select {
	case <-lostCh:
		t.Fatalf("lease lost across an outage with no other coordinator: %v", lostErr)
	default:
	}
	var held Lease
	if v, err := st.Get(ctx, LeaseKey); err != nil || json.Unmarshal(v, &held) != nil || held.Holder != "me" {
		t.Fatalf("after the outage the lease is %+v (%v), want still mine", held, err)
	}
	// And it is being refreshed again: its revision moves on.
	e1, err := st.kv.Get(ctx, LeaseKey)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(leaseRefresh + time.Second)
	if e2, err := st.kv.Get(ctx, LeaseKey); err != nil || e2.Revision() <= e1.Revision() {
		t.Fatalf("lease revision %d, then %v (%v): refreshes do not succeed after the outage", e1.Revision(), e2, err)
	}

	if err := lease.Confirm(ctx); err != nil {
		t.Fatalf("confirming a lease still held: %v", err)
	}

	// Another coordinator takes the job (as it may once the lease has
	// expired during an outage).
	other, _ := json.Marshal(Lease{Holder: "other", Out: "/elsewhere"})
	if err := st.Put(ctx, LeaseKey, other); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lostCh:
		mu.Lock()
		defer mu.Unlock()
		if !errors.Is(lostErr, ErrJobBusy) {
			t.Fatalf("lost with %v, want ErrJobBusy", lostErr)
		}
	case <-time.After(2 * leaseRefresh):
		t.Fatal("the lease was taken by another coordinator and this one did not notice")
	}
	if err := lease.Confirm(ctx); !errors.Is(err, ErrJobBusy) {
		t.Fatalf("confirming a lease another coordinator took: %v, want ErrJobBusy", err)
	}
	// Released, a lost lease is not deleted: it is the other's.
	lease.Release()
	if v, err := st.Get(ctx, LeaseKey); err != nil || string(v) != string(other) {
		t.Fatalf("after release the lease is %q (%v), want the other coordinator's", v, err)
	}
}
