// Package storage keeps a job's files, in a local directory or under an
// object-store prefix (s3:// through the AWS SDK's S3 client in every
// build; gs:// and azblob:// through gocloud.dev/blob in builds with the
// tags gcs and azure):
// a tree of files each of which appears whole or not at all. Locally a
// file is written under a temporary name, then renamed; on object storage
// the upload itself is the commit (see object.go).
package storage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/neardup/neardup/internal/localfile"
)

// TempMarker is part of the name of every file being written; readers and
// listings ignore such files.
const TempMarker = ".tmp-"

// File is an open file: readable sequentially and at offsets.
type File interface {
	io.Reader
	io.ReaderAt
	io.Closer
	Size() int64
}

// Writer is a file being written. Nothing is visible under its name until
// Commit returns nil; Abort discards it.
type Writer interface {
	io.Writer
	Commit() error
	Abort() error
}

// Creator creates files that appear whole or not at all.
type Creator interface {
	// Create starts writing name; nothing is visible under it until the
	// Writer's Commit.
	Create(ctx context.Context, name string) (Writer, error)
}

// Opener opens complete files for reading.
type Opener interface {
	// Open opens name; a missing file gives an error wrapping
	// fs.ErrNotExist.
	Open(ctx context.Context, name string) (File, error)
}

// FS is the storage of a job's files: every reader and writer of a job
// goes through it, and fault injection wraps it (package faults).
type FS interface {
	Creator
	Opener
	// Remove deletes name and, for a directory, everything below it.
	Remove(ctx context.Context, name string) error
}

// Dir is an FS rooted at a local directory or an object-store prefix.
type Dir struct {
	root   string
	loc    Location
	bucket bucket // nil for a local directory
	// Fsync makes Commit flush a file to disk before renaming it. Renaming
	// alone already makes a file appear whole or not at all when a process
	// dies; fsync adds durability across power loss, at a few milliseconds
	// per file.
	Fsync bool
}

// NewDir returns a store rooted at root, creating it if needed.
func NewDir(root string) (*Dir, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("storage: %s: %w", root, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	return &Dir{root: abs, loc: Location{Path: abs}}, nil
}

// Open returns the store at a location: a local path or file:// URL (the
// directory is created if needed), or an s3://, gs:// or azblob:// prefix,
// whose bucket must be reachable. An unknown scheme gives an error
// wrapping ErrScheme.
func Open(ctx context.Context, location string) (*Dir, error) {
	l, err := ParseLocation(location)
	if err != nil {
		return nil, err
	}
	return OpenLocation(ctx, l)
}

// OpenLocation is Open of a location already parsed.
func OpenLocation(ctx context.Context, l Location) (*Dir, error) {
	if l.Local() {
		return NewDir(l.Path)
	}
	b, err := openBucket(ctx, l)
	if err != nil {
		return nil, err
	}
	if err := b.check(ctx); err != nil {
		b.close()
		return nil, fmt.Errorf("storage: %s: %w", l, err)
	}
	return &Dir{root: l.String(), loc: l, bucket: b}, nil
}

// Close releases the store's connections.
func (d *Dir) Close() error {
	if d.bucket != nil {
		return d.bucket.close()
	}
	return nil
}

// Root is the store's absolute path, or its URL.
func (d *Dir) Root() string { return d.root }

// Local reports whether the store is a local directory.
func (d *Dir) Local() bool { return d.bucket == nil }

// key is the object key of name.
func (d *Dir) key(name string) string { return d.loc.Join(name).Key }

// Path is the local path of name; for a local store only.
func (d *Dir) Path(name string) string {
	return filepath.Join(d.root, filepath.FromSlash(name))
}

type localFile struct {
	*os.File
	size int64
}

func (f localFile) Size() int64 { return f.size }

// Abs is l with a local path made absolute; an object-store location is
// kept as it is.
func (l Location) Abs() Location {
	if l.Local() {
		if abs, err := filepath.Abs(l.Path); err == nil {
			l.Path = abs
		}
	}
	return l
}

// AbsLocation is a local path made absolute; a URL is kept as it is.
func AbsLocation(p string) string {
	if IsURL(p) {
		return p
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// IsLocal tells whether f is a file on a local disk, whose random reads
// cost a system call each, not a request to an object store.
func IsLocal(f File) bool {
	_, ok := f.(localFile)
	return ok
}

// Map maps the bytes of f, a local file (see IsLocal), into memory, read
// only (localfile.Map); ok is false, and nothing is mapped, for a file of
// an object store, or a local one that could not be mapped (err says
// why).
func Map(f File) (b []byte, unmap func() error, ok bool, err error) {
	lf, ok := f.(localFile)
	if !ok {
		return nil, nil, false, nil
	}
	b, unmap, err = localfile.Map(lf.File, lf.size)
	return b, unmap, err == nil, err
}

// Open opens name for reading. A missing file gives an error that wraps
// fs.ErrNotExist; a name that would leave the store (see CheckName), or a
// local one that a symbolic link leads out of it, one that wraps
// ErrBadName, and nothing is opened.
func (d *Dir) Open(ctx context.Context, name string) (File, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := CheckName(name); err != nil {
		return nil, fmt.Errorf("storage: open %s: %w", d.root, err)
	}
	if d.bucket != nil {
		return openObject(ctx, d.bucket, d.key(name), name)
	}
	f, err := openUnder(d.root, name)
	if err != nil {
		return nil, fmt.Errorf("storage: open %s: %w", name, err)
	}
	return f, nil
}

// openLocal opens a local input file; its errors name the path. Only a
// regular file opens: a named pipe, a socket or a device (or a link to
// one) gives an error wrapping localfile.ErrNotRegular, without blocking.
func openLocal(path string) (File, error) {
	f, st, err := localfile.Open(path)
	if err != nil {
		return nil, err
	}
	return localFile{File: f, size: st.Size()}, nil
}

type localWriter struct {
	root  *os.Root // the store's, which the file stays under
	f     *os.File
	tmp   string // name of f under root
	name  string // the final name under root
	final string // its path
	done  bool
	fsync bool
}

// Create starts writing name. The data goes to a temporary file beside it
// and replaces name atomically on Commit. A name that would leave the
// store gives an error wrapping ErrBadName.
func (d *Dir) Create(ctx context.Context, name string) (Writer, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := CheckName(name); err != nil {
		return nil, fmt.Errorf("storage: create in %s: %w", d.root, err)
	}
	if d.bucket != nil {
		return createObject(ctx, d.bucket, d.key(name), name)
	}
	var nonce [6]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, fmt.Errorf("storage: create %s: %w", name, err)
	}
	root, err := os.OpenRoot(d.root)
	if err != nil {
		return nil, fmt.Errorf("storage: create %s: %w", name, err)
	}
	w := &localWriter{root: root, name: filepath.FromSlash(name), final: d.Path(name), fsync: d.Fsync}
	w.tmp = w.name + TempMarker + hex.EncodeToString(nonce[:])
	err = root.MkdirAll(filepath.Dir(w.name), 0o755)
	if err == nil {
		w.f, err = root.OpenFile(w.tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	}
	if err != nil {
		root.Close()
		return nil, fmt.Errorf("storage: create %s: %w", name, rootedErr(d.root, name, err))
	}
	return w, nil
}

func (w *localWriter) Write(p []byte) (int, error) { return w.f.Write(p) }

func (w *localWriter) Commit() error {
	if w.done {
		return errors.New("storage: commit of a finished writer")
	}
	w.done = true
	defer w.root.Close()
	if w.fsync {
		if err := w.f.Sync(); err != nil {
			w.f.Close()
			w.root.Remove(w.tmp)
			return fmt.Errorf("storage: sync %s: %w", w.final, err)
		}
	}
	if err := w.f.Close(); err != nil {
		w.root.Remove(w.tmp)
		return fmt.Errorf("storage: close %s: %w", w.final, err)
	}
	if err := w.root.Rename(w.tmp, w.name); err != nil {
		w.root.Remove(w.tmp)
		return fmt.Errorf("storage: rename %s: %w", w.final, err)
	}
	return nil
}

func (w *localWriter) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	defer w.root.Close()
	w.f.Close()
	if err := w.root.Remove(w.tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("storage: abort %s: %w", w.final, err)
	}
	return nil
}

// walkFiles calls fn for every file under prefix (a directory name
// relative to the root); a missing directory has none.
func (d *Dir) walkFiles(ctx context.Context, prefix string, fn func(path string, e fs.DirEntry) error, skip ...string) error {
	base := d.Path(prefix)
	skipped := map[string]bool{}
	for _, name := range skip {
		skipped[d.Path(name)] = true
	}
	return filepath.WalkDir(base, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				if p == base || e != nil && e.IsDir() {
					return filepath.SkipDir
				}
				return nil // gone while we walked
			}
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if e.IsDir() {
			if skipped[p] {
				return filepath.SkipDir
			}
			return nil
		}
		return fn(p, e)
	})
}

// List returns the names of the complete files under prefix (a directory
// name relative to the root), sorted. A missing directory lists nothing.
func (d *Dir) List(ctx context.Context, prefix string) ([]string, error) {
	var names []string
	if d.bucket != nil {
		objs, err := listKeys(ctx, d.bucket, d.key(prefix))
		if err != nil {
			return nil, fmt.Errorf("storage: list %s: %w", prefix, err)
		}
		for _, o := range objs {
			names = append(names, strings.TrimPrefix(strings.TrimPrefix(o.Key, d.loc.Key), "/"))
		}
		return names, nil
	}
	err := d.walkFiles(ctx, prefix, func(p string, e fs.DirEntry) error {
		if strings.Contains(e.Name(), TempMarker) {
			return nil
		}
		rel, err := filepath.Rel(d.root, p)
		if err != nil {
			return err
		}
		names = append(names, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("storage: list %s: %w", prefix, err)
	}
	sort.Strings(names)
	return names, nil
}

// RemoveTemporaries deletes the temporary files (names holding
// TempMarker) under prefix that writers left behind: a process killed
// while writing leaves its temporary file. It returns how many it removed.
// Run it only when no writer is active under prefix; directories named in
// skip (relative to the root) are not entered.
func (d *Dir) RemoveTemporaries(ctx context.Context, prefix string, skip ...string) (int, error) {
	if d.bucket != nil {
		return 0, nil // uploads leave no temporary objects
	}
	n := 0
	err := d.walkFiles(ctx, prefix, func(p string, e fs.DirEntry) error {
		if !strings.Contains(e.Name(), TempMarker) {
			return nil
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		n++
		return nil
	}, skip...)
	if err != nil {
		return n, fmt.Errorf("storage: remove temporaries under %s: %w", prefix, err)
	}
	return n, nil
}

// Remove deletes name and, for a directory, everything below it; a name
// that would leave the store gives an error wrapping ErrBadName.
func (d *Dir) Remove(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := CheckName(name); err != nil {
		return fmt.Errorf("storage: remove in %s: %w", d.root, err)
	}
	if d.bucket != nil {
		return d.removeObjects(ctx, name)
	}
	if err := rooted(d.root, name, (*os.Root).RemoveAll); err != nil {
		return fmt.Errorf("storage: remove %s: %w", name, err)
	}
	return nil
}

// removeObjects deletes the object name and every object under name/.
func (d *Dir) removeObjects(ctx context.Context, name string) error {
	key := d.key(name)
	objs, err := listKeys(ctx, d.bucket, key)
	if err != nil {
		return fmt.Errorf("storage: remove %s: %w", name, err)
	}
	for _, o := range objs {
		if err := d.bucket.remove(ctx, o.Key); err != nil {
			return fmt.Errorf("storage: remove %s: %w", o.Key, err)
		}
	}
	if err := d.bucket.remove(ctx, key); err != nil {
		return fmt.Errorf("storage: remove %s: %w", name, err)
	}
	return nil
}

// WriteFile writes data to name atomically.
func WriteFile(ctx context.Context, s Creator, name string, data []byte) error {
	w, err := s.Create(ctx, name)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		w.Abort()
		return fmt.Errorf("storage: write %s: %w", name, err)
	}
	return w.Commit()
}

// ReadFile reads all of name.
func ReadFile(ctx context.Context, s Opener, name string) ([]byte, error) {
	f, err := s.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("storage: read %s: %w", name, err)
	}
	return data, nil
}

// ReadJSON decodes the JSON of name into v.
func ReadJSON(ctx context.Context, s Opener, name string, v any) error {
	data, err := ReadFile(ctx, s, name)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// WriteJSON writes v to name atomically as indented JSON (for people
// reading it), or as compact JSON (for files of many entries).
func WriteJSON(ctx context.Context, s Creator, name string, v any, indent bool) error {
	var data []byte
	var err error
	if indent {
		data, err = json.MarshalIndent(v, "", "  ")
		data = append(data, '\n')
	} else {
		data, err = json.Marshal(v)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return WriteFile(ctx, s, name, data)
}
