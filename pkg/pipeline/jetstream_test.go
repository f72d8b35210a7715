package pipeline

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
// Recover (forever when negative), then on.
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
	case f.offFor < 0 || f.calls <= f.offFor:
		return true, errors.New("insufficient resources")
	case f.calls == f.offFor+1:
		return true, nil
	}
	return false, nil
}

// TestWatchJetStream: JetStream that comes back stops nothing; JetStream
// that stays off stops the job within the bound, naming the store.
func TestWatchJetStream(t *testing.T) {
	for _, tt := range []struct {
		name     string
		offFor   int
		wantStop bool
	}{
		{"on again", 1, false},
		{"stays off", -1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			stopped := make(chan error, 1)
			start := time.Now()
			go watchJetStream(ctx, &fakeJetStream{offFor: tt.offFor}, 400*time.Millisecond, slog.New(slog.DiscardHandler), func(err error) { stopped <- err })
			select {
			case err := <-stopped:
				if !tt.wantStop {
					t.Fatalf("stopped: %v", err)
				}
				if !errors.Is(err, ErrDiskFull) || !strings.Contains(err.Error(), "/data/store") || time.Since(start) > time.Second {
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
