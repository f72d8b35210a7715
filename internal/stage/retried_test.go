package stage

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"testing"

	"github.com/neardup/neardup/internal/storage"
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

// removeFS is a storage.FS whose Remove answers from a map of names to
// errors, and records the names it was asked to remove.
type removeFS struct {
	storage.FS
	errs    map[string]error
	mu      sync.Mutex
	removed []string
}

func (f *removeFS) Remove(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.removed = append(f.removed, name)
	return f.errs[name]
}

// TestRemoveLater checks the background removals of a job's work files:
// WaitRemovals returns once every one is done, with the error of one that
// failed for good, naming its directory.
func TestRemoveLater(t *testing.T) {
	denied := errors.New("access denied")
	for _, tt := range []struct {
		name    string
		dirs    []string
		errs    map[string]error
		wantErr string
	}{
		{"none", nil, nil, ""},
		{"two", []string{"_work/sets", "_work/other"}, nil, ""},
		{"one fails", []string{"_work/sets", "_work/other"}, map[string]error{"_work/other": denied}, "removing _work/other: access denied"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fs := &removeFS{errs: tt.errs}
			j := &Job{Out: fs}
			for _, d := range tt.dirs {
				j.RemoveLater(t.Context(), d)
			}
			err := j.WaitRemovals()
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr || !errors.Is(err, denied)) {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
			fs.mu.Lock()
			defer fs.mu.Unlock()
			if len(fs.removed) != len(tt.dirs) {
				t.Fatalf("removed %q, want %q", fs.removed, tt.dirs)
			}
		})
	}
}
