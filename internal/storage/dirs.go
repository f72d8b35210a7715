package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
)

// EntryKind is what an entry of a directory is.
type EntryKind string

// The kinds of entries ListEntries returns.
const (
	// KindDir is a directory (on object storage, a common prefix).
	KindDir EntryKind = "directory"
	// KindFile is a file, or anything else that is neither a directory
	// nor a symbolic link.
	KindFile EntryKind = "file"
	// KindSymlink is a symbolic link (local directories only), not
	// followed.
	KindSymlink EntryKind = "symbolic link"
)

// Entry is a name directly under a directory, and what it is.
type Entry struct {
	Name string
	Kind EntryKind
}

// ListEntries returns the entries directly under prefix (a directory name
// relative to the root; "" for the root itself), sorted by name: on
// object storage, the common prefixes one level down (found with a
// delimited listing that does not walk the files below them) and the
// objects at that level. A missing directory lists nothing.
func (d *Dir) ListEntries(ctx context.Context, prefix string) ([]Entry, error) {
	var entries []Entry
	if d.bucket != nil {
		key := d.loc.Key
		if prefix != "" {
			key = d.key(prefix)
		}
		if key != "" {
			key = strings.TrimSuffix(key, "/") + "/"
		}
		err := d.bucket.list(ctx, key, "/", func(o objectAttrs) error {
			name := strings.Trim(strings.TrimPrefix(o.Key, key), "/")
			if name == "" {
				return nil
			}
			kind := KindFile
			if o.IsDir {
				kind = KindDir
			}
			entries = append(entries, Entry{name, kind})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("storage: list %s: %w", d.loc.Join(prefix), err)
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
		return entries, nil
	}
	des, err := os.ReadDir(d.Path(prefix))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("storage: list %s: %w", prefix, err)
	}
	for _, e := range des {
		kind := KindFile
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			kind = KindSymlink
		case e.IsDir():
			kind = KindDir
		}
		entries = append(entries, Entry{e.Name(), kind})
	}
	return entries, nil
}
