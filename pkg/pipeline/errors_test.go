package pipeline

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/control"
)

// TestSentinelErrors checks that every error a caller tells apart with
// errors.Is says where it comes from, and that a job another coordinator
// runs is ErrJobBusy, naming the output and what the control plane found.
func TestSentinelErrors(t *testing.T) {
	for _, err := range []error{ErrInvalidOptions, ErrComplete, ErrJobBusy, ErrNotComplete} {
		if !strings.HasPrefix(err.Error(), "neardup: ") {
			t.Errorf("%q: want the prefix neardup:", err)
		}
	}
	inner := fmt.Errorf("%w (it took the lease first)", control.ErrJobBusy)
	err := error(&busyError{out: "out/x", err: inner})
	if !errors.Is(err, ErrJobBusy) || !errors.Is(err, control.ErrJobBusy) {
		t.Errorf("%v: not ErrJobBusy", err)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "neardup: job into out/x: ") || !strings.Contains(msg, "took the lease first") {
		t.Errorf("%q: want the output and the control plane's reason", msg)
	}
}

// TestDefaults checks the defaults the API states as its own against the
// control plane's.
func TestDefaults(t *testing.T) {
	if DefaultDiskFullTimeout != control.DefaultDiskFullTimeout {
		t.Errorf("DefaultDiskFullTimeout %v, the control plane's %v", DefaultDiskFullTimeout, control.DefaultDiskFullTimeout)
	}
}
