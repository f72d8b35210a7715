package storage

import (
	"context"
	"os"
	"reflect"
	"testing"
)

func TestListEntries(t *testing.T) { stores(t, testListEntries) }

// testListEntries lists the directories and files one level down, not
// deeper ones, and nothing for a missing directory.
func testListEntries(t *testing.T, d *Dir) {
	ctx := context.Background()
	for _, name := range []string{"series/2026-W01/_SUCCESS", "series/2026-W01/pairs/p.parquet",
		"series/2026-W02/index/index.json", "series/top.txt", "other/x"} {
		if err := WriteFile(ctx, d, name, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		prefix string
		want   []Entry
	}{
		{"series", []Entry{{"2026-W01", KindDir}, {"2026-W02", KindDir}, {"top.txt", KindFile}}},
		{"series/2026-W01", []Entry{{"_SUCCESS", KindFile}, {"pairs", KindDir}}},
		{"", []Entry{{"other", KindDir}, {"series", KindDir}}},
		{"missing", nil},
	}
	for _, tt := range tests {
		got, err := d.ListEntries(ctx, tt.prefix)
		if err != nil {
			t.Fatalf("ListEntries(%q): %v", tt.prefix, err)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ListEntries(%q) = %v, want %v", tt.prefix, got, tt.want)
		}
	}
}

// TestListEntriesSymlink lists a local symbolic link to a directory as a
// link, not as the directory it points to.
func TestListEntriesSymlink(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(root+"/real", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", root+"/link"); err != nil {
		t.Fatal(err)
	}
	d, err := Open(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.ListEntries(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if want := []Entry{{"link", KindSymlink}, {"real", KindDir}}; !reflect.DeepEqual(got, want) {
		t.Errorf("ListEntries = %v, want %v", got, want)
	}
}
