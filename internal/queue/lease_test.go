package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
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

// overLoopback starts a server listening on loopback and connects to it
// by its URL, as to an outside server; both end with the test, whose
// context bounds it to a minute.
func overLoopback(t *testing.T) (context.Context, *Embedded, *Queue) {
	t.Helper()
	srv, err := StartEmbedded(t.TempDir(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	q, err := Connect(ctx, ConnConfig{URL: srv.URL(), ConnectTimeout: 10 * time.Second}, "test", DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(q.Close)
	return ctx, srv, q
}

// lostReply is a bucket whose next Create or Update first runs before (on
// the bucket: the write itself, whose reply is then lost, another
// coordinator's, or nothing, a write the server never stored) and then
// fails as a timeout does, its outcome unknown to the writer.
type lostReply struct {
	jetstream.KeyValue
	before func(kv jetstream.KeyValue, value []byte, rev uint64)
	done   bool
}

func (l *lostReply) fail(value []byte, rev uint64) error {
	if l.done {
		return nil
	}
	l.done = true
	l.before(l.KeyValue, value, rev)
	return context.DeadlineExceeded
}

func (l *lostReply) Create(ctx context.Context, key string, value []byte, opts ...jetstream.KVCreateOpt) (uint64, error) {
	if err := l.fail(value, 0); err != nil {
		return 0, err
	}
	return l.KeyValue.Create(ctx, key, value, opts...)
}

func (l *lostReply) Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	if err := l.fail(value, rev); err != nil {
		return 0, err
	}
	return l.KeyValue.Update(ctx, key, value, rev)
}

// TestTakeLeaseAfterLostReply takes the lease, with none there and over a
// stale one of the same output (an earlier run of this coordinator's job),
// when the write's reply is lost: a write that happened makes the lease
// this coordinator's; one that did not is an error naming the server and
// what JetStream says, never ErrJobBusy; only another coordinator's lease
// written meanwhile is ErrJobBusy, naming it.
func TestTakeLeaseAfterLostReply(t *testing.T) {
	ctx, srv, q := overLoopback(t)
	me := Lease{Holder: "coordinator 2 (pid 2)", Out: "/out"}
	stale, _ := json.Marshal(Lease{Holder: "coordinator 1 (pid 1)", Out: "/out"})
	other, _ := json.Marshal(Lease{Holder: "coordinator 9 on elsewhere", Out: "/elsewhere"})
	written := func(kv jetstream.KeyValue, value []byte, rev uint64) {
		var err error
		if rev == 0 {
			_, err = kv.Create(ctx, LeaseKey, value)
		} else {
			_, err = kv.Update(ctx, LeaseKey, value, rev)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	notWritten := func(jetstream.KeyValue, []byte, uint64) {}
	othersWritten := func(kv jetstream.KeyValue, _ []byte, _ uint64) {
		if _, err := kv.Put(ctx, LeaseKey, other); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name   string
		stale  bool // a lease of an earlier run of the same output is there
		before func(jetstream.KeyValue, []byte, uint64)
		want   string // "" to hold the lease; else the error says it
		busy   bool
	}{
		{"created, reply lost", false, written, "", false},
		{"taken over, reply lost", true, written, "", false},
		{"create not stored", false, notWritten, "answers, but the job's state (stream KV_neardup-", false},
		{"takeover not stored", true, notWritten, "answers, but the job's state (stream KV_neardup-", false},
		{"another created it", false, othersWritten, "coordinator 9 on elsewhere writing /elsewhere", true},
		{"another took it over", true, othersWritten, "coordinator 9 on elsewhere writing /elsewhere", true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := q.State(ctx, fmt.Sprintf("lostreply%d", i))
			if err != nil {
				t.Fatal(err)
			}
			if tt.stale {
				if err := st.Put(ctx, LeaseKey, stale); err != nil {
					t.Fatal(err)
				}
			}
			st.kv = &lostReply{KeyValue: st.kv, before: tt.before}
			held, err := st.TakeLease(ctx, me, slog.New(slog.DiscardHandler), func(error) {})
			if err == nil {
				defer held.Release()
			}
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("TakeLease: %v, want the lease", err)
			case tt.want == "":
				if err := held.Confirm(ctx); err != nil {
					t.Errorf("the lease taken is not this coordinator's: %v", err)
				}
			case err == nil || !strings.Contains(err.Error(), tt.want):
				t.Fatalf("TakeLease: %v, want an error saying %q", err, tt.want)
			case errors.Is(err, ErrJobBusy) != tt.busy:
				t.Errorf("TakeLease: %v; ErrJobBusy %v, want %v", err, errors.Is(err, ErrJobBusy), tt.busy)
			case !tt.busy && (!errors.Is(err, ErrStoreFailed) || !strings.Contains(err.Error(), srv.URL())):
				t.Errorf("TakeLease: %v, want ErrStoreFailed naming the server %s", err, srv.URL())
			}
		})
	}
}

// refusing is a bucket whose updates JetStream refuses while on, as it
// does past its limits (max_file_store): an answer, not a lost reply.
type refusing struct {
	jetstream.KeyValue
	on atomic.Bool
}

func (r *refusing) Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	if r.on.Load() {
		return 0, &jetstream.APIError{Code: 503, ErrorCode: 10023, Description: "insufficient resources"}
	}
	return r.KeyValue.Update(ctx, key, value, rev)
}

// TestLeaseRefreshRefused refuses the lease's refreshes: they count as
// failing (the lease, still this coordinator's as it was, is not taken
// for one renewed by a refresh whose reply was lost), with JetStream's
// error, which StoreFault gives naming the server; refreshes that succeed
// again end it.
func TestLeaseRefreshRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for two refreshes")
	}
	ctx, srv, q := overLoopback(t)
	st, err := q.State(ctx, "refused")
	if err != nil {
		t.Fatal(err)
	}
	kv := &refusing{KeyValue: st.kv}
	st.kv = kv
	held, err := st.TakeLease(ctx, Lease{Holder: "me", Out: "/out"}, slog.New(slog.DiscardHandler), func(err error) { t.Errorf("lost: %v", err) })
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	kv.on.Store(true)
	time.Sleep(leaseRefresh + 2*time.Second)
	if held.Unrefreshed() == 0 || held.RefreshError() == nil {
		t.Fatalf("refreshes refused: unrefreshed %v, last error %v; want them failing", held.Unrefreshed(), held.RefreshError())
	}
	err = st.StoreFault(ctx, "for a while", held.RefreshError())
	if !errors.Is(err, ErrStoreFailed) || !strings.Contains(err.Error(), "insufficient resources") || !strings.Contains(err.Error(), srv.URL()) {
		t.Errorf("StoreFault = %v, want ErrStoreFailed naming the server %s and JetStream's error", err, srv.URL())
	}
	kv.on.Store(false)
	time.Sleep(leaseRefresh + time.Second)
	if held.Unrefreshed() != 0 || held.RefreshError() != nil {
		t.Errorf("refreshes stored again: unrefreshed %v, last error %v; want none", held.Unrefreshed(), held.RefreshError())
	}
}

// TestTakeLeaseUnlocked takes a job's lease on an output without a lock
// (an object store) twice: while the first holder refreshes it, the second
// taker waits and is refused with ErrJobBusy (it took the live lease over
// at once, and two coordinators ran one job); once the first holder is
// gone (its lease written and never refreshed, as a crash leaves it), the
// second waits the lease out and takes it. A locked taker (a local output)
// still takes a lease naming its output over at once.
func TestTakeLeaseUnlocked(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out a lease")
	}
	_, q := embeddedQueue(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	log := slog.New(slog.DiscardHandler)
	st, err := q.State(ctx, "job1")
	if err != nil {
		t.Fatal(err)
	}
	out := "s3://bucket/out"
	first, err := st.TakeLease(ctx, Lease{Holder: "first", Out: out, Unlocked: true}, log, func(error) {})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := st.TakeLease(ctx, Lease{Holder: "second", Out: out, Unlocked: true}, log, func(error) {}); !errors.Is(err, ErrJobBusy) || !strings.Contains(err.Error(), "alive") {
		t.Fatalf("taking a live lease of an unlocked output: %v, want ErrJobBusy saying its holder is alive", err)
	}
	if d := time.Since(start); d > leaseRefresh+2*time.Second {
		t.Errorf("refused after %v, want within a refresh period (%v)", d, leaseRefresh)
	}
	first.Release()

	// A crashed holder's lease: written once, never refreshed.
	crashed, _ := json.Marshal(Lease{Holder: "crashed", Out: out})
	if err := st.Put(ctx, LeaseKey, crashed); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	second, err := st.TakeLease(ctx, Lease{Holder: "second", Out: out, Unlocked: true}, log, func(error) {})
	if err != nil {
		t.Fatalf("taking a crashed holder's lease: %v", err)
	}
	defer second.Release()
	if d := time.Since(start); d < leaseTTL-time.Second {
		t.Errorf("took a crashed holder's lease after %v, want it waited out (%v)", d, leaseTTL)
	}

	// Locked: taken over at once.
	second.Release()
	if err := st.Put(ctx, LeaseKey, crashed); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	third, err := st.TakeLease(ctx, Lease{Holder: "third", Out: out}, log, func(error) {})
	if err != nil {
		t.Fatal(err)
	}
	defer third.Release()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("a locked taker waited %v for a lease naming its output", d)
	}
}
