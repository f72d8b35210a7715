package localfile

import (
	"fmt"
	"os"
	"syscall"
)

// Map maps the first size bytes of the open file f into memory, read only,
// so that random reads of them cost no system call. The bytes must not be
// modified, and not touched once unmap has been called; the file must not
// shrink while they are mapped. A size of 0 maps nothing (nil bytes).
func Map(f *os.File, size int64) (b []byte, unmap func() error, err error) {
	if size <= 0 {
		return nil, func() error { return nil }, nil
	}
	if int64(int(size)) != size {
		return nil, nil, fmt.Errorf("map %s: %d bytes do not fit the address space", f.Name(), size)
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, nil, fmt.Errorf("map %s: %w", f.Name(), err)
	}
	var merr error
	if err := rc.Control(func(fd uintptr) {
		b, merr = syscall.Mmap(int(fd), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	}); err != nil {
		return nil, nil, fmt.Errorf("map %s: %w", f.Name(), err)
	}
	if merr != nil {
		return nil, nil, fmt.Errorf("map %s: %w", f.Name(), merr)
	}
	return b, func() error { return syscall.Munmap(b) }, nil
}
