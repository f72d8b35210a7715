package storage

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestCreateCommitAbortList(t *testing.T) {
	ctx := context.Background()
	d, err := NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		commit bool
	}{
		{"a/one.parquet", true},
		{"a/b/two.parquet", true},
		{"a/aborted.parquet", false},
	}
	for _, tt := range tests {
		w, err := d.Create(ctx, tt.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(tt.name)); err != nil {
			t.Fatal(err)
		}
		// Before commit, nothing is visible under the name.
		if _, err := d.Open(ctx, tt.name); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s visible before commit: %v", tt.name, err)
		}
		if names, _ := d.List(ctx, "a"); len(names) > 2 {
			t.Fatalf("list shows a file being written: %v", names)
		}
		if tt.commit {
			err = w.Commit()
		} else {
			err = w.Abort()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	names, err := d.List(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a/b/two.parquet", "a/one.parquet"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("List = %v, want %v", names, want)
	}
	got, err := ReadFile(ctx, d, "a/one.parquet")
	if err != nil || string(got) != "a/one.parquet" {
		t.Fatalf("ReadFile = %q, %v", got, err)
	}
	// No temporary file is left behind.
	entries, _ := os.ReadDir(filepath.Join(d.Root(), "a"))
	for _, e := range entries {
		if !e.IsDir() && filepath.Ext(e.Name()) != ".parquet" {
			t.Fatalf("left behind: %s", e.Name())
		}
	}
	if names, err := d.List(ctx, "missing"); err != nil || len(names) != 0 {
		t.Fatalf("List(missing) = %v, %v", names, err)
	}
}

func TestCommitReplacesAtomically(t *testing.T) {
	ctx := context.Background()
	d, _ := NewDir(t.TempDir())
	for _, content := range []string{"first", "second"} {
		if err := WriteFile(ctx, d, "x", []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := ReadFile(ctx, d, "x"); string(got) != "second" {
		t.Fatalf("got %q", got)
	}
}

func TestCreateFailsInReadOnlyDir(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores directory permissions")
	}
	ctx := context.Background()
	root := t.TempDir()
	d, _ := NewDir(root)
	if err := os.Chmod(root, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(root, 0o755)
	if _, err := d.Create(ctx, "f"); err == nil {
		t.Fatal("Create in a read-only directory succeeded")
	}
}

func TestLock(t *testing.T) {
	d, _ := NewDir(t.TempDir())
	unlock, err := d.Lock(".lock")
	if err != nil {
		t.Fatal(err)
	}
	// A second open file description is refused while the first holds it.
	if _, err := d.Lock(".lock"); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Lock: %v, want ErrLocked", err)
	}
	unlock()
	unlock2, err := d.Lock(".lock")
	if err != nil {
		t.Fatalf("Lock after unlock: %v", err)
	}
	unlock2()
}

// TestRemoveTemporaries checks that the sweep removes a killed writer's
// temporary files and nothing else.
func TestRemoveTemporaries(t *testing.T) {
	ctx := context.Background()
	d, err := NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(ctx, d, "bands/part=00001/chunk-000001.parquet", []byte("x")); err != nil {
		t.Fatal(err)
	}
	// Two writers that never commit, as killed processes leave them.
	for _, name := range []string{"bands/part=00001/chunk-000002.parquet", "pairs/chunk-000000.parquet"} {
		if _, err := d.Create(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	n, err := d.RemoveTemporaries(ctx, ".")
	if err != nil || n != 2 {
		t.Fatalf("removed %d, err %v; want 2", n, err)
	}
	var left []string
	filepath.WalkDir(d.Root(), func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			rel, _ := filepath.Rel(d.Root(), p)
			left = append(left, filepath.ToSlash(rel))
		}
		return nil
	})
	if len(left) != 1 || left[0] != "bands/part=00001/chunk-000001.parquet" {
		t.Fatalf("left %v, want only the committed file", left)
	}
	if n, err := d.RemoveTemporaries(ctx, "missing"); n != 0 || err != nil {
		t.Fatalf("missing prefix: %d, %v", n, err)
	}
}
