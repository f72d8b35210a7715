package storage

import (
	"context"
	"reflect"
	"testing"
)

func TestListDirs(t *testing.T) { stores(t, testListDirs) }

// testListDirs lists the directories one level down, not files, not
// deeper ones, and nothing for a missing directory.
func testListDirs(t *testing.T, d *Dir) {
	ctx := context.Background()
	for _, name := range []string{"series/2026-W01/_SUCCESS", "series/2026-W01/pairs/p.parquet",
		"series/2026-W02/index/index.json", "series/top.txt", "other/x"} {
		if err := WriteFile(ctx, d, name, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		prefix string
		want   []string
	}{
		{"series", []string{"2026-W01", "2026-W02"}},
		{"series/2026-W01", []string{"pairs"}},
		{"", []string{"other", "series"}},
		{"missing", nil},
	}
	for _, tt := range tests {
		got, err := d.ListDirs(ctx, tt.prefix)
		if err != nil {
			t.Fatalf("ListDirs(%q): %v", tt.prefix, err)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ListDirs(%q) = %q, want %q", tt.prefix, got, tt.want)
		}
	}
}
