package control

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
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
