package dataroot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/neardup/neardup/internal/redact"
	"github.com/neardup/neardup/internal/storage"
)

// Roots are the directories (or files) a worker may read and write.
// A job names its output directory and input files in its spec and plan,
// which anyone who can write the job's state bucket can forge; a worker
// with roots refuses a task whose paths lie outside all of them. No roots
// means every path is allowed.
type Roots struct {
	roots []string // absolute, symlinks resolved; or object-store URLs
	// local holds the local roots, so that a path is judged by a lookup
	// of each of its parents, not by a comparison with every root: an
	// embedded worker's roots are every input file of its job.
	local map[string]bool
}

// add adds a root: a resolved local path, or an object-store URL.
func (r *Roots) add(root string, object bool) {
	r.roots = append(r.roots, root)
	if object {
		return
	}
	if r.local == nil {
		r.local = map[string]bool{}
	}
	r.local[root] = true
}

// Resolve returns the roots at paths, each made absolute with its
// symbolic links resolved. Every root must exist.
//
// A root may also be an object-store URL (s3://bucket/prefix?options):
// it admits the objects under that prefix of that bucket, reached with the
// same options (so a forged job cannot send the worker's credentials to
// another endpoint).
func Resolve(paths []string) (Roots, error) {
	return resolveAll(paths, func(p string) (string, error) {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", err
		}
		return filepath.EvalSymlinks(abs)
	})
}

// resolveAll makes roots of paths: object-store URLs as they are, local
// paths as resolve gives them.
func resolveAll(paths []string, resolve func(string) (string, error)) (Roots, error) {
	var r Roots
	for _, p := range paths {
		if l, ok, err := objectLocation(p); err != nil {
			return Roots{}, fmt.Errorf("data root %s: %w", redact.URL(p), err)
		} else if ok {
			r.add(l.String(), true)
			continue
		}
		real, err := resolve(p)
		if err != nil {
			return Roots{}, fmt.Errorf("data root %s: %w", redact.URL(p), err)
		}
		r.add(real, false)
	}
	return r, nil
}

// ForJob returns the roots of an embedded coordinator's own workers: the
// job's output and inputs, as the coordinator planned them. An input that
// cannot be resolved now (a broken link, a file gone since) is kept by
// the path it was planned with, so that its map task reaches it and lists
// it as an unreadable reject rather than refusing it as outside the roots.
func ForJob(paths []string) (Roots, error) {
	return resolveAll(paths, resolveOrParent)
}

// resolveOrParent is resolvePath, but a last component that cannot be
// resolved for another reason than its absence (a link loop, a directory
// that cannot be searched) is kept by name under its resolved parent: the
// file cannot be read there, which its map task reports as a reject.
func resolveOrParent(path string) (string, error) {
	real, err := RealPath(path)
	if err == nil {
		return real, nil
	}
	parent, perr := RealPath(filepath.Dir(path))
	if perr != nil {
		return "", err
	}
	return filepath.Join(parent, filepath.Base(path)), nil
}

// Empty tells whether there are no roots, so that every path is allowed.
func (r Roots) Empty() bool { return len(r.roots) == 0 }

// String lists the roots: the first few of many, and how many.
func (r Roots) String() string {
	const shown = 8
	if len(r.roots) <= shown {
		return strings.Join(r.roots, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(r.roots[:shown], ", "), len(r.roots)-shown)
}

// Check returns an error naming path and the roots when path, with ".."
// and symbolic links resolved, lies outside every root. A path that does
// not exist yet is judged by its longest existing parent.
func (r Roots) Check(path string) error {
	if r.Empty() {
		return nil
	}
	if l, ok, err := objectLocation(path); err != nil {
		return fmt.Errorf("path %s: %w", path, err)
	} else if ok {
		for _, root := range r.roots {
			if rl, isObj, _ := objectLocation(root); isObj && rl.Holds(l) {
				return nil
			}
		}
		return fmt.Errorf("location %s is outside the worker's data roots (%s)", path, r)
	}
	real, err := resolveOrParent(path)
	if err != nil {
		return fmt.Errorf("path %s: %w", path, err)
	}
	if ok, _ := r.covers(real); ok {
		return nil
	}
	if real != path {
		return fmt.Errorf("path %s (%s) is outside the worker's data roots (%s)", path, real, r)
	}
	return fmt.Errorf("path %s is outside the worker's data roots (%s)", path, r)
}

// covers tells whether real, an absolute path with its links resolved
// (clean), is a local root or lies under one, as storage.Within would
// tell for some root, and how many roots or paths it compared: it looks
// real and each of its parents up among the roots, one lookup a path
// element, whatever the number of roots.
func (r Roots) covers(real string) (ok bool, compared int) {
	for p := real; ; {
		compared++
		if r.local[p] {
			return true, compared
		}
		parent := filepath.Dir(p)
		if parent == p {
			return false, compared
		}
		p = parent
	}
}

// RealPath makes path absolute and resolves its symbolic links and
// ".." in the order the system would: a ".." after a symbolic link leaves
// the link's target, not the link. A path that does not exist yet is
// resolved up to its longest existing prefix, and the rest is joined to it.
func RealPath(path string) (string, error) {
	p := path
	if !filepath.IsAbs(p) {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		p = wd + string(filepath.Separator) + p // not Join: it would drop ".." before links are resolved
	}
	var rest []string
	for {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		i := strings.LastIndexByte(p, filepath.Separator)
		if i < 0 {
			return "", err
		}
		rest = append([]string{p[i+1:]}, rest...)
		p = p[:i]
		if p == "" {
			p = string(filepath.Separator)
		}
	}
}

// objectLocation parses path when it is an object-store URL (ok true); a
// file:// URL or a plain path gives ok false.
func objectLocation(path string) (storage.Location, bool, error) {
	if !storage.IsURL(path) {
		return storage.Location{}, false, nil
	}
	l, err := storage.ParseLocation(path)
	if err != nil {
		return storage.Location{}, false, err
	}
	return l, !l.Local(), nil
}
