package storage

import (
	"context"
	"strings"
)

// Mounted is an FS that also reads other locations: a name whose first
// element is one of Mounts ("@against-0/docs/chunk-000000.parquet") is
// opened in that location (as "docs/chunk-000000.parquet"). Creating and
// removing go to the base FS only, so a mounted location is never
// written.
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
