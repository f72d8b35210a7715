package storage

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// ErrLocked is returned by Lock when another process holds the lock.
var ErrLocked = errors.New("locked by another process")

// Lock takes an exclusive lock on the file name (created if needed) for as
// long as this process runs or until unlock is called. The operating system
// releases it when the process dies, so a crash never leaves it behind.
// An object store has no locks: there Lock does nothing, and the job's
// lease in NATS is what keeps two coordinators off one output.
func (d *Dir) Lock(name string) (unlock func(), err error) {
	if d.bucket != nil {
		return func() {}, nil
	}
	f, err := os.OpenFile(d.Path(name), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("storage: lock %s: %w", name, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("storage: %s: %w", d.Path(name), ErrLocked)
		}
		return nil, fmt.Errorf("storage: lock %s: %w", name, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
