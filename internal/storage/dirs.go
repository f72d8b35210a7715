package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"

	"gocloud.dev/blob"
)

// ListDirs returns the names of the directories directly under prefix (a
// directory name relative to the root; "" for the root itself), sorted:
// on object storage, the common prefixes one level down, found with a
// delimited listing that does not walk the files below them. A missing
// directory lists nothing.
func (d *Dir) ListDirs(ctx context.Context, prefix string) ([]string, error) {
	var names []string
	if d.bucket != nil {
		key := d.loc.Key
		if prefix != "" {
			key = d.key(prefix)
		}
		if key != "" {
			key = strings.TrimSuffix(key, "/") + "/"
		}
		it := d.bucket.List(&blob.ListOptions{Prefix: key, Delimiter: "/"})
		for {
			o, err := it.Next(ctx)
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("storage: list %s: %w", d.loc.Join(prefix), err)
			}
			if o.IsDir {
				if name := strings.Trim(strings.TrimPrefix(o.Key, key), "/"); name != "" {
					names = append(names, name)
				}
			}
		}
		sort.Strings(names)
		return names, nil
	}
	entries, err := os.ReadDir(d.Path(prefix))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("storage: list %s: %w", prefix, err)
	}
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}
