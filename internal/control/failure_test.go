package control

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/queue"
)

// confirmFunc is a confirmer made of a function.
type confirmFunc func(ctx context.Context) error

func (f confirmFunc) Confirm(ctx context.Context) error { return f(ctx) }

// TestFailure checks the reason a failed run gives, including the race
// e2e/TestTakeover met: the lease goroutine finds the lease lost (and
// cancels the run with that cause) while the failed run is confirming
// its lease, so the confirmation ends with the context's error.
func TestFailure(t *testing.T) {
	taskErr := errors.New("map stage: task 3 failed")
	lost := fmt.Errorf("%w: the job's state was deleted", queue.ErrLeaseLost)
	full := fmt.Errorf("%w: the disk holding /out has been full", ErrDiskFull)
	cases := []struct {
		name    string
		setup   func(stop context.CancelCauseFunc) // before failure is called
		confirm func(ctx context.Context, stop context.CancelCauseFunc) error
		want    error  // errors.Is
		says    string // in the message
	}{
		{
			name: "lost while confirming",
			confirm: func(ctx context.Context, stop context.CancelCauseFunc) error {
				stop(lost)
				<-ctx.Done()
				return fmt.Errorf("confirming the coordinator lease: %w", ctx.Err())
			},
			want: queue.ErrLeaseLost, says: "state was deleted",
		},
		{
			name:  "lost before",
			setup: func(stop context.CancelCauseFunc) { stop(lost) },
			want:  queue.ErrLeaseLost, says: "state was deleted",
		},
		{
			name:  "disk full",
			setup: func(stop context.CancelCauseFunc) { stop(full) },
			want:  ErrDiskFull, says: "full",
		},
		{
			name: "taken, found by confirming",
			confirm: func(context.Context, context.CancelCauseFunc) error {
				return fmt.Errorf("%w: the lease was taken by B", queue.ErrLeaseLost)
			},
			want: ErrJobBusy, says: "taken by B",
		},
		{
			name:    "still held",
			confirm: func(context.Context, context.CancelCauseFunc) error { return nil },
			want:    taskErr, says: "task 3",
		},
		{
			name:  "interrupted",
			setup: func(stop context.CancelCauseFunc) { stop(nil) },
			want:  context.Canceled, says: "run the same command again",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, stop := context.WithCancelCause(context.Background())
			defer stop(nil)
			if c.setup != nil {
				c.setup(stop)
			}
			confirmed := false
			err := failure(ctx, taskErr, confirmFunc(func(cctx context.Context) error {
				confirmed = true
				if c.confirm == nil {
					t.Fatal("confirmed the lease of a run already stopped")
				}
				return c.confirm(cctx, stop)
			}))
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("got %v, want %v saying %q", err, c.want, c.says)
			}
			if c.confirm != nil && !confirmed {
				t.Fatal("the lease was not confirmed")
			}
		})
	}
}
