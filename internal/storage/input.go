package storage

import (
	"context"
	"fmt"
	"os"
	"time"
)

// OpenFile opens an input file by local path or object-store URL. An
// object is read in ranges (see objectFile), so memory does not grow with
// its size; closing the file releases its bucket.
func OpenFile(ctx context.Context, location string) (File, error) {
	l, err := ParseLocation(location)
	if err != nil {
		return nil, err
	}
	if l.Local() {
		return openLocal(l.Path)
	}
	b, err := openBucket(ctx, l)
	if err != nil {
		return nil, err
	}
	f, err := openObject(ctx, b, l.Key, location)
	if err != nil {
		b.close()
		return nil, err
	}
	return &ownedFile{File: f, b: b}, nil
}

// StatFile returns the size and modification time of an input file, by
// local path or object-store URL.
func StatFile(ctx context.Context, location string) (int64, time.Time, error) {
	l, err := ParseLocation(location)
	if err != nil {
		return 0, time.Time{}, err
	}
	if l.Local() {
		st, err := os.Stat(l.Path)
		if err != nil {
			return 0, time.Time{}, err
		}
		return st.Size(), st.ModTime(), nil
	}
	b, err := openBucket(ctx, l)
	if err != nil {
		return 0, time.Time{}, err
	}
	defer b.close()
	a, err := b.attributes(ctx, l.Key)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("storage: %s: %w", location, err)
	}
	return a.Size, a.ModTime, nil
}

// ownedFile is an object whose bucket was opened for it alone.
type ownedFile struct {
	File
	b bucket
}

func (f *ownedFile) Close() error {
	f.File.Close()
	return f.b.close()
}

// Object is one object found by ListObjects.
type Object struct {
	URL     string // s3://bucket/key?query
	Name    string // the key's last element
	Size    int64
	ModTime time.Time
}

// ListObjects returns the objects under an object-store URL taken as a
// prefix (a "directory": URL/...), sorted by key, or the object itself
// when the URL names one. hidden skips the keys with an element it
// reports true for (below the prefix).
func ListObjects(ctx context.Context, location string, hidden func(name string) bool) ([]Object, error) {
	l, err := ParseLocation(location)
	if err != nil {
		return nil, err
	}
	if l.Local() {
		return nil, fmt.Errorf("storage: %s is not an object-store URL", location)
	}
	b, err := openBucket(ctx, l)
	if err != nil {
		return nil, err
	}
	defer b.close()
	if l.Key != "" {
		if a, err := b.attributes(ctx, l.Key); err == nil {
			return []Object{{URL: l.String(), Name: lastElem(l.Key), Size: a.Size, ModTime: a.ModTime}}, nil
		}
	}
	objs, err := listKeys(ctx, b, l.Key)
	if err != nil {
		return nil, fmt.Errorf("storage: list %s: %w", location, err)
	}
	var out []Object
	for _, o := range objs {
		rel := o.Key[len(l.Key):]
		if skipKey(rel, hidden) {
			continue
		}
		k := l
		k.Key = o.Key
		out = append(out, Object{URL: k.String(), Name: lastElem(o.Key), Size: o.Size, ModTime: o.ModTime})
	}
	return out, nil
}

// skipKey reports whether an element of rel (a key below a prefix) is
// hidden.
func skipKey(rel string, hidden func(string) bool) bool {
	if hidden == nil {
		return false
	}
	start := 0
	for i := 0; i <= len(rel); i++ {
		if i == len(rel) || rel[i] == '/' {
			if e := rel[start:i]; e != "" && hidden(e) {
				return true
			}
			start = i + 1
		}
	}
	return false
}

func lastElem(key string) string {
	for i := len(key) - 1; i >= 0; i-- {
		if key[i] == '/' {
			return key[i+1:]
		}
	}
	return key
}
