package cli

import (
	"context"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInterruptible checks how a command meets SIGINT and SIGTERM: the
// first cancels its context, and a command that does not heed it (one
// stuck in a blocking call) is ended by a second signal or after the
// grace period, with the status a shell gives a process the signal
// killed; a command that stops, or was not signalled, is never ended.
func TestInterruptible(t *testing.T) {
	const noExit = -1
	tests := []struct {
		name  string
		deaf  bool // the command ignores its context
		sigs  []os.Signal
		grace time.Duration
		exit  int    // the status exit is called with, noExit for none
		said  string // what stderr says
	}{
		{"not signalled", false, nil, time.Hour, noExit, ""},
		{"stops when signalled", false, []os.Signal{syscall.SIGTERM}, time.Hour, noExit, ""},
		{"deaf: a second signal", true, []os.Signal{syscall.SIGTERM, syscall.SIGINT}, time.Hour, 128 + 15, "interrupt again: stopping at once"},
		{"deaf: the grace period", true, []os.Signal{os.Interrupt}, 10 * time.Millisecond, 128 + 2, "still running 10ms after interrupt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sigs := make(chan os.Signal, len(tt.sigs))
			for _, s := range tt.sigs {
				sigs <- s
			}
			release := make(chan struct{})
			defer close(release)
			run := func(ctx context.Context) int {
				if tt.deaf {
					<-release
					return 0
				}
				if len(tt.sigs) > 0 {
					<-ctx.Done()
				}
				return 3
			}
			exited := make(chan int, 1)
			returned := make(chan int, 1)
			r, w := io.Pipe()
			said := make(chan string, 1)
			go func() { b, _ := io.ReadAll(r); said <- string(b) }()
			go func() {
				returned <- interruptible(run, sigs, tt.grace, w, "test", func(code int) { exited <- code; w.Close() })
			}()
			select {
			case code := <-exited:
				if code != tt.exit {
					t.Errorf("exit(%d), want %d", code, tt.exit)
				}
				if s := <-said; !strings.Contains(s, tt.said) {
					t.Errorf("stderr %q, want %q", s, tt.said)
				}
			case code := <-returned:
				if tt.exit != noExit {
					t.Fatalf("returned %d, want exit(%d)", code, tt.exit)
				}
				if code != 3 {
					t.Errorf("returned %d, want the command's 3", code)
				}
				select {
				case code := <-exited:
					t.Errorf("exit(%d) after the command returned", code)
				case <-time.After(50 * time.Millisecond):
				}
			case <-time.After(time.Minute):
				t.Fatal("neither returned nor exited")
			}
		})
	}
}
