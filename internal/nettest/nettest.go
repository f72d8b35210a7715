// Package nettest gives tests network addresses to fail against.
package nettest

import (
	"fmt"
	"syscall"
	"testing"
)

// RefusedAddr returns a loopback address ("127.0.0.1:PORT") where nothing
// listens, and where nothing can until the test ends: a socket that never
// listens holds its port, so that a connection is refused at once and no
// server started meanwhile (another package's test asking for any free
// port) is given it. A port a test listened on and closed is free for the
// next server that asks, and a client the test meant to be refused then
// joins that server: a worker of one test took tasks of another's job
// (2026-11-30).
func RefusedAddr(t testing.TB) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("nettest: socket: %v", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatalf("nettest: bind: %v", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatalf("nettest: getsockname: %v", err)
	}
	in, ok := sa.(*syscall.SockaddrInet4)
	if !ok || in.Port == 0 {
		t.Fatalf("nettest: bound to %v", sa)
	}
	return fmt.Sprintf("127.0.0.1:%d", in.Port)
}
