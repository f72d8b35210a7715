package stage

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
)

// TestRetried checks the clean-ups' retries: a transient error (a reset
// connection) is tried again until the operation succeeds; an error that
// time does not mend, or a cancelled context, ends them at once.
func TestRetried(t *testing.T) {
	permanent := errors.New("access denied")
	reset := fmt.Errorf("remove: %w", syscall.ECONNRESET)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name  string
		ctx   context.Context
		errs  []error // what the attempts return, then nil
		calls int
		want  error
	}{
		{"succeeds", context.Background(), nil, 1, nil},
		{"transient twice, then succeeds", context.Background(), []error{reset, reset}, 3, nil},
		{"permanent", context.Background(), []error{permanent, permanent}, 1, permanent},
		{"transient, context over", cancelled, []error{reset, reset}, 1, syscall.ECONNRESET},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			err := Retried(tt.ctx, func() error {
				calls++
				if calls <= len(tt.errs) {
					return tt.errs[calls-1]
				}
				return nil
			})
			if calls != tt.calls || !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("%d calls, error %v; want %d calls, error %v", calls, err, tt.calls, tt.want)
			}
		})
	}
}
