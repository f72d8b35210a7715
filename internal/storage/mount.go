package storage

import (
	"context"
	"fmt"
	"strings"
)

// Mounted is an FS that also reads other locations: a name whose first
// element is one of Mounts ("@against-0/docs/chunk-000000.parquet") is
// opened in that location (as "docs/chunk-000000.parquet"). A mounted
// location is never written: creating or removing a name in a mount is an
// error.
type Mounted struct {
	FS
	Mounts map[string]Opener
}

// Open opens name in its mount, or in the base FS.
func (m Mounted) Open(ctx context.Context, name string) (File, error) {
	if mount, rest, ok := SplitMount(name); ok {
		if o, ok := m.Mounts[mount]; ok {
			return o.Open(ctx, rest)
		}
	}
	return m.FS.Open(ctx, name)
}

// Create creates name in the base FS; a name in a mount is refused.
func (m Mounted) Create(ctx context.Context, name string) (Writer, error) {
	if mount, _, ok := SplitMount(name); ok {
		return nil, fmt.Errorf("%s: %s is mounted read-only", name, mount)
	}
	return m.FS.Create(ctx, name)
}

// Remove removes name from the base FS; a name in a mount is refused.
func (m Mounted) Remove(ctx context.Context, name string) error {
	if mount, _, ok := SplitMount(name); ok {
		return fmt.Errorf("%s: %s is mounted read-only", name, mount)
	}
	return m.FS.Remove(ctx, name)
}

// SplitMount splits a mounted name into its mount and the name inside it;
// ok is false for a name of the base FS. A mount's name starts with "@".
func SplitMount(name string) (mount, rest string, ok bool) {
	if !strings.HasPrefix(name, "@") {
		return "", name, false
	}
	mount, rest, ok = strings.Cut(name, "/")
	return mount, rest, ok
}

// InMountOf names inner, a name relative to the location of outer's
// mount, as seen from the base FS: a file that a mounted file names.
func InMountOf(outer, inner string) string {
	if mount, _, ok := SplitMount(outer); ok {
		return mount + "/" + inner
	}
	return inner
}
