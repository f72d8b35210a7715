package workfile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/fileinfo"
)

// TestHashes writes hash files, loads their union and checks what it
// holds; a file of other bytes than written, or a set over the limit, is
// refused with the file's name or the count.
func TestHashes(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	a, err := WriteHashes(ctx, st, "h/a.hashes", []uint64{3, 9, 1 << 63})
	if err != nil {
		t.Fatal(err)
	}
	b, err := WriteHashes(ctx, st, "h/b.hashes", []uint64{4})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := WriteHashes(ctx, st, "h/c.hashes", []uint64{2, 1}); err == nil {
		t.Error("unsorted hashes written")
	}
	set, err := LoadHashes(ctx, st, []fileinfo.Info{a, b}, 4)
	if err != nil {
		t.Fatal(err)
	}
	for h, want := range map[uint64]bool{3: true, 4: true, 9: true, 1 << 63: true, 0: false, 5: false} {
		if set.Has(h) != want {
			t.Errorf("Has(%d) = %v", h, !want)
		}
	}
	if set.Len() != 4 {
		t.Errorf("Len() = %d, want 4", set.Len())
	}
	if _, err := LoadHashes(ctx, st, []fileinfo.Info{a, b}, 3); err == nil || !strings.Contains(err.Error(), "4 units") {
		t.Errorf("over the limit: %v", err)
	}
	if err := os.WriteFile(filepath.Join(st.Root(), "h/b.hashes"), []byte("12345678"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadHashes(ctx, st, []fileinfo.Info{a, b}, 4); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "h/b.hashes") {
		t.Errorf("a damaged file: %v, want ErrCorrupt naming it", err)
	}
}
