package storage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckName checks which names stay in their store.
func TestCheckName(t *testing.T) {
	for _, tt := range []struct {
		name string
		ok   bool
	}{
		{"docs/chunk-000000.parquet", true},
		{"@against-0/bands/part=00001/chunk-000000.parquet", true},
		{"_SUCCESS", true},
		{"a..b/c", true},
		{"", false},
		{"../outside/secret.parquet", false},
		{"bands/../../outside/secret.parquet", false},
		{"bands/..", false},
		{"/etc/passwd", false},
		{"docs/./x", false},
		{"docs//x", false},
		{"docs/", false},
		{"docs/x\x00.parquet", false},
	} {
		err := CheckName(tt.name)
		if tt.ok != (err == nil) || err != nil && !errors.Is(err, ErrBadName) {
			t.Errorf("CheckName(%q) = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}

// TestOpenStaysInStore checks that a store refuses, naming it, a name that
// leaves it, by ".." or as an absolute name (local and S3), or through a
// symbolic link (local), though the file it names exists and is readable.
func TestOpenStaysInStore(t *testing.T) { stores(t, testOpenStaysInStore) }

func testOpenStaysInStore(t *testing.T, d *Dir) {
	ctx := context.Background()
	base := t.TempDir()
	secret := filepath.Join(base, "outside", "secret.parquet")
	if err := os.MkdirAll(filepath.Dir(secret), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := []string{"../outside/secret.parquet", "../../outside/secret.parquet", "bands/../../../outside/secret.parquet", secret}
	if d.Local() {
		// The store's own files, beside the secret's folder.
		if d2, err := NewDir(filepath.Join(base, "out")); err != nil {
			t.Fatal(err)
		} else {
			d = d2
		}
		if err := os.Symlink(filepath.Join(base, "outside"), d.Path("bands")); err != nil {
			t.Fatal(err)
		}
		bad = append(bad, "bands/secret.parquet")
	}
	if !d.Local() {
		// The objects that ".." would reach from bucket/jobs/out, written
		// through the same bucket at its root.
		top := &Dir{loc: Location{Scheme: d.loc.Scheme, Bucket: d.loc.Bucket, Query: d.loc.Query}, bucket: d.bucket}
		top.root = top.loc.String()
		for _, key := range []string{"jobs/outside/secret.parquet", "outside/secret.parquet"} {
			if err := WriteFile(ctx, top, key, []byte("secret")); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, name := range bad {
		f, err := d.Open(ctx, name)
		if err == nil {
			f.Close()
			t.Errorf("Open(%q) opened it", name)
			continue
		}
		if !errors.Is(err, ErrBadName) || !strings.Contains(err.Error(), name) {
			t.Errorf("Open(%q): %v, want an error wrapping ErrBadName naming it", name, err)
		}
		if _, err := d.Create(ctx, name); !errors.Is(err, ErrBadName) {
			t.Errorf("Create(%q): %v, want an error wrapping ErrBadName", name, err)
		}
		if err := d.Remove(ctx, name); !errors.Is(err, ErrBadName) {
			t.Errorf("Remove(%q): %v, want an error wrapping ErrBadName", name, err)
		}
	}
	if _, err := os.Stat(secret); err != nil {
		t.Fatalf("the file outside the store: %v", err)
	}
}

// TestAbsLocation checks that local paths are made absolute (as jobs
// record them, and as a series compares them) and URLs kept as they are.
func TestAbsLocation(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ in, want string }{
		{"out/w01", filepath.Join(wd, "out/w01")},
		{"/data/out", "/data/out"},
		{"s3://bucket/weekly/w01?region=x", "s3://bucket/weekly/w01?region=x"},
		{"file:///data/out", "file:///data/out"},
	} {
		if got := AbsLocation(tt.in); got != tt.want {
			t.Errorf("AbsLocation(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
