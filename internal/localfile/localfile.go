// Package localfile opens local input files for reading, and only
// regular files: a named pipe, a socket or a device is never opened in a
// way that can block (a FIFO's open waits for a writer; /dev/zero and
// /dev/urandom read for ever), and the file opened is checked again
// through its descriptor, so that a file swapped for a FIFO between a
// check and the open is refused too. Symbolic links count by their
// target.
package localfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular is wrapped by the error of a file that is not a regular
// file.
var ErrNotRegular = errors.New("not a regular file")

// NotRegularError is a path that is not a regular file, and what it is.
type NotRegularError struct {
	Path string
	Type string // TypeOf its mode: "named pipe (FIFO)", "socket", ...
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s: %s: %s", e.Path, ErrNotRegular, e.Type)
}

// Unwrap makes errors.Is(err, ErrNotRegular) true.
func (e *NotRegularError) Unwrap() error { return ErrNotRegular }

// Reason is what a listing of skipped or rejected files says of it,
// without the path: "not a regular file: named pipe (FIFO)".
func (e *NotRegularError) Reason() string { return ErrNotRegular.Error() + ": " + e.Type }

// TypeOf names the type of a file of mode m.
func TypeOf(m fs.FileMode) string {
	switch t := m.Type(); {
	case t == 0:
		return "regular file"
	case t&fs.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case t&fs.ModeSocket != 0:
		return "socket"
	case t&fs.ModeCharDevice != 0:
		return "character device"
	case t&fs.ModeDevice != 0:
		return "block device"
	case t&fs.ModeDir != 0:
		return "directory"
	case t&fs.ModeSymlink != 0:
		return "symbolic link"
	}
	return "irregular file"
}

// Check returns a *NotRegularError when st, the file at path, is not a
// regular file.
func Check(path string, st fs.FileInfo) error {
	if st.Mode().IsRegular() {
		return nil
	}
	return &NotRegularError{Path: path, Type: TypeOf(st.Mode())}
}

// Stat returns what os.Stat does (a symbolic link counts by its target),
// or a *NotRegularError for a file that is not a regular file.
func Stat(path string) (fs.FileInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := Check(path, st); err != nil {
		return nil, err
	}
	return st, nil
}

// Open opens the regular file at path for reading, with what it is. The
// path is looked at first (a device is not even opened), then opened
// with O_NONBLOCK, so that a file swapped for a FIFO since does not wait
// for a writer, and the descriptor is looked at again: anything but a
// regular file is closed and refused with a *NotRegularError.
func Open(path string) (*os.File, fs.FileInfo, error) {
	if _, err := Stat(path); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := Opened(f)
	if err != nil {
		return nil, nil, err
	}
	return f, st, nil
}

// Opened checks f, a file just opened with O_NONBLOCK, through its
// descriptor: a regular file is made blocking again and described; any
// other is closed and refused with a *NotRegularError.
func Opened(f *os.File) (fs.FileInfo, error) {
	st, err := f.Stat()
	if err == nil {
		err = Check(f.Name(), st)
	}
	if err == nil {
		err = syscall.SetNonblock(int(f.Fd()), false)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return st, nil
}
