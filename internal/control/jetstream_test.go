package control

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/queue"
)

// fakeJetStream is a server whose JetStream is off for offFor calls of
// Recover (forever when negative, never when 0), then on.
type fakeJetStream struct {
	mu     sync.Mutex
	offFor int
	calls  int
}

func (f *fakeJetStream) StoreDir() string { return "/data/store" }

func (f *fakeJetStream) Recover() (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	switch {
	case f.offFor == 0:
		return false, nil
	case f.offFor < 0 || f.calls <= f.offFor:
		return true, errors.New("insufficient resources")
	case f.calls == f.offFor+1:
		return true, nil
	}
	return false, nil
}

// TestWatchJetStream: JetStream that stays on stops nothing; JetStream
// that was off is turned on again and stops the job, naming the store and
// how to resume; JetStream that stays off stops it within the bound.
func TestWatchJetStream(t *testing.T) {
	for _, tt := range []struct {
		name        string
		offFor      int
		unrefreshed time.Duration
		wantStop    bool
		want        string
	}{
		{"on", 0, 0, false, ""},
		{"on, lease failing a while", 0, 300 * time.Millisecond, false, ""},
		{"on again", 1, 0, true, "it is on again"},
		{"stays off", -1, 0, true, "could not be turned on again"},
		{"on, lease failing too long", 0, 400 * time.Millisecond, true, "could not be read or written for"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			stopped := make(chan error, 1)
			start := time.Now()
			unrefreshed := func() time.Duration { return tt.unrefreshed }
			go watchJetStream(ctx, &fakeJetStream{offFor: tt.offFor}, unrefreshed, 400*time.Millisecond, slog.New(slog.DiscardHandler), func(err error) { stopped <- err })
			select {
			case err := <-stopped:
				if !tt.wantStop {
					t.Fatalf("stopped: %v", err)
				}
				if !errors.Is(err, ErrDiskFull) || !strings.Contains(err.Error(), "/data/store") || !strings.Contains(err.Error(), tt.want) ||
					!strings.Contains(err.Error(), "run the same command again") || time.Since(start) > time.Second {
					t.Fatalf("stopped after %v with %v, want ErrDiskFull naming /data/store within the bound", time.Since(start), err)
				}
			case <-ctx.Done():
				if tt.wantStop {
					t.Fatal("JetStream stayed off and the job was not stopped")
				}
			}
		})
	}
}

// fakeStore is an outside server: fault is what StoreFault says (nil: the
// server does not answer).
type fakeStore struct{ fault error }

func (f fakeStore) StoreFault(_ context.Context, failed string, werr error) error {
	if f.fault == nil {
		return nil
	}
	return fmt.Errorf("%w could not be written %s (%v); run the same command again to resume", f.fault, failed, werr)
}

// fakeLease is a lease whose refreshes have failed for unrefreshed, the
// last with err.
type fakeLease struct {
	unrefreshed time.Duration
	err         error
}

func (f fakeLease) Unrefreshed() time.Duration { return f.unrefreshed }
func (f fakeLease) RefreshError() error        { return f.err }

// TestWatchStore: the job's state written stops nothing; a server that
// answers while the state could not be written for the bound stops the
// job within it, naming the server, JetStream's error, the last write's
// and how to resume; a server that does not answer is waited for.
func TestWatchStore(t *testing.T) {
	fault := fmt.Errorf("%w: the NATS server nats://h:4222 (n1) answers; JetStream's error: no space left on device", queue.ErrStoreFailed)
	werr := errors.New("context deadline exceeded")
	for _, tt := range []struct {
		name        string
		fault       error
		unrefreshed time.Duration
		wantStop    bool
	}{
		{"written", fault, 0, false},
		{"failing a while", fault, 300 * time.Millisecond, false},
		{"failing too long, the server answers", fault, 400 * time.Millisecond, true},
		{"failing too long, the server away", nil, time.Hour, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			stopped := make(chan error, 1)
			start := time.Now()
			go watchStore(ctx, fakeStore{tt.fault}, fakeLease{tt.unrefreshed, werr}, 400*time.Millisecond, slog.New(slog.DiscardHandler), func(err error) { stopped <- err })
			select {
			case err := <-stopped:
				if !tt.wantStop {
					t.Fatalf("stopped: %v", err)
				}
				if !errors.Is(err, queue.ErrStoreFailed) || !strings.Contains(err.Error(), "nats://h:4222") || !strings.Contains(err.Error(), "no space left on device") ||
					!strings.Contains(err.Error(), "for 400ms (context deadline exceeded)") || time.Since(start) > time.Second {
					t.Fatalf("stopped after %v with %v, want ErrStoreFailed naming the server, the errors and how long within the bound", time.Since(start), err)
				}
			case <-ctx.Done():
				if tt.wantStop {
					t.Fatal("the store did not write and the job was not stopped")
				}
			}
		})
	}
}
