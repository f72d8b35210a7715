package reference

import (
	"slices"
	"testing"

	"github.com/neardup/neardup/pkg/shingle"
)

func TestJaccard(t *testing.T) {
	tests := []struct {
		a, b []uint64
		want float64
	}{
		{nil, nil, 0},
		{[]uint64{1}, nil, 0},
		{[]uint64{1, 2, 3}, []uint64{1, 2, 3}, 1},
		{[]uint64{1, 2, 3, 4}, []uint64{2, 3, 4, 5}, 3.0 / 5},
		{[]uint64{1, 3, 5}, []uint64{2, 4, 6}, 0},
	}
	for _, tt := range tests {
		if got := Jaccard(tt.a, tt.b); got != tt.want || Jaccard(tt.b, tt.a) != tt.want {
			t.Errorf("Jaccard(%v, %v) = %v, want %v (both ways)", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestSet(t *testing.T) {
	o := shingle.Options{Words: 2}
	a, b := Set("a b c a b", o), Set("A, b; c. A b!", o)
	if len(a) != 3 || Jaccard(a, b) != 1 {
		t.Errorf("sets %v and %v: want the same 3 shingles (ab, bc, ca)", a, b)
	}
	if len(Set("", o)) != 0 || len(Set("!!!", o)) != 0 {
		t.Error("a text without tokens has shingles")
	}
}

// TestUnits checks the reference's units of a small text, as lines and
// as paragraphs, and a text stripped of some.
func TestUnits(t *testing.T) {
	text := "Home\r\n\nAbout us\n---\nAbout  US!\n"
	tests := []struct {
		unit string
		want []Unit
	}{
		{"line", []Unit{{0, 0, 4, "home"}, {1, 7, 8, "about us"}, {2, 20, 10, "about us"}}},
		{"paragraph", []Unit{{0, 0, 4, "home"}, {1, 7, 23, "about us about us"}}},
	}
	for _, tc := range tests {
		if got := Units(text, tc.unit, shingle.Options{}); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.unit, got, tc.want)
		}
	}
	if got := Strip(text, "line", shingle.Options{}, func(u Unit) bool { return u.Norm == "about us" }); got != "Home\r\n\n---\n" {
		t.Errorf("stripped: %q", got)
	}
}
