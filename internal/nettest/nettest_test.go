package nettest

import (
	"errors"
	"net"
	"syscall"
	"testing"
	"time"
)

// TestRefusedAddr checks that a connection to the address is refused and
// that no listener can take its port while the test runs.
func TestRefusedAddr(t *testing.T) {
	addr := RefusedAddr(t)
	if _, err := net.DialTimeout("tcp", addr, 5*time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dial %s: %v, want connection refused", addr, err)
	}
	if l, err := net.Listen("tcp", addr); err == nil {
		l.Close()
		t.Errorf("listened on %s, which RefusedAddr holds", addr)
	}
}
