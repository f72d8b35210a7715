package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/neardup/neardup/internal/localfile"
)

// ErrBadName marks a file name that would leave its store: an absolute
// name, one with a ".." element or a NUL byte, or one that a symbolic
// link inside a local store leads out of it. File names come from a job's
// state (its index, its task results), which anyone who can write that
// state can forge, so every name is checked before a file is opened,
// created or removed.
var ErrBadName = errors.New("file name leaves its store")

// CheckName returns an error wrapping ErrBadName, naming name, unless name
// is a non-empty, slash-separated name relative to a store's root with no
// "..", "." or empty element and no NUL byte.
func CheckName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty name", ErrBadName)
	case strings.IndexByte(name, 0) >= 0:
		return fmt.Errorf("%w: %q holds a NUL byte", ErrBadName, name)
	case strings.HasPrefix(name, "/") || filepath.IsAbs(name):
		return fmt.Errorf("%w: %q is not a relative name", ErrBadName, name)
	}
	for elem := range strings.SplitSeq(name, "/") {
		if elem == ".." || elem == "." || elem == "" {
			return fmt.Errorf("%w: %q has a %q element", ErrBadName, name, elem)
		}
	}
	if !filepath.IsLocal(filepath.FromSlash(name)) { // a reserved name on Windows
		return fmt.Errorf("%w: %q is not a local name", ErrBadName, name)
	}
	return nil
}

// rooted runs op on name (checked by CheckName) under the local
// directory root, through an os.Root, so that no symbolic link leads it
// out of root: where one would, the error wraps ErrBadName. A file op
// fails to find is named by its path.
func rooted(root, name string, op func(r *os.Root, name string) error) error {
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	return rootedErr(root, name, op(r, filepath.FromSlash(name)))
}

// rootedErr is err, from an operation on name under root, wrapped in
// ErrBadName when name leads out of root, and naming the file by its path.
func rootedErr(root, name string, err error) error {
	if err == nil {
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) && escapes(root, name) {
		return fmt.Errorf("%w: %q leads out of %s through a symbolic link", ErrBadName, name, root)
	}
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) && !filepath.IsAbs(pe.Path) {
		pe.Path = filepath.Join(root, pe.Path) // as a plain open would
	}
	return err
}

// openUnder opens the file name under the local directory root (see
// rooted).
func openUnder(root, name string) (File, error) {
	var f *os.File
	var st fs.FileInfo
	err := rooted(root, name, func(r *os.Root, name string) (err error) {
		// Non-blocking, and checked through the descriptor: a FIFO put in
		// a store's place is refused, never waited on.
		if f, err = r.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			st, err = localfile.Opened(f)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return localFile{File: f, size: st.Size()}, nil
}

// escapes tells whether name, with the symbolic links under root resolved
// (up to its longest existing prefix), lies outside root.
func escapes(root, name string) bool {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return false
	}
	for p := filepath.Join(root, filepath.FromSlash(name)); p != root && len(p) > len(root); p = filepath.Dir(p) {
		real, err := filepath.EvalSymlinks(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return false
		}
		return !Within(realRoot, real)
	}
	return false
}

// Within tells whether path is root or lies under it, comparing whole
// path components (/data-other is not under /data). Both are absolute,
// with their symbolic links resolved.
func Within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	if err != nil || filepath.IsAbs(rel) {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
