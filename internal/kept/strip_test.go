package kept

import (
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/paragraph"
	"github.com/neardup/neardup/pkg/shingle"
)

// TestStripper checks one document's stripping: the units held by the
// first document are kept there with keep-first, the others removed, and
// a text left with fewer than MinKeptChars characters (its ends' white
// space not counted) is short, one with exactly as many is not.
func TestStripper(t *testing.T) {
	cut, err := paragraph.NewCutter(paragraph.Line, shingle.Options{})
	if err != nil {
		t.Fatal(err)
	}
	text := "Menu Home\nbody text é\nFooter 2026\n"
	units := map[uint64]int64{xxhash.Sum64String("menu home"): 7, xxhash.Sum64String("footer 2026"): 3}
	tests := []struct {
		doc       int64
		keepFirst bool
		min       int
		want      string
		short     bool
	}{
		{7, true, 0, "Menu Home\nbody text é\n", false},
		{7, false, 0, "body text é\n", false},
		{3, true, 0, "body text é\nFooter 2026\n", false},
		{5, true, 11, "body text é\n", false}, // "body text é": 11 characters, 12 bytes
		{5, true, 12, "body text é\n", true},
	}
	for _, tt := range tests {
		s := &stripper{cut: cut, units: units, o: job.Strip{MinCount: 2, KeepFirst: tt.keepFirst, MinKeptChars: tt.min}}
		got, chars, short, err := s.strip(tt.doc, []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tt.want || short != tt.short {
			t.Errorf("doc %d, keep-first %v, min %d: %q (%d characters, short %v), want %q, short %v", tt.doc, tt.keepFirst, tt.min, got, chars, short, tt.want, tt.short)
		}
	}
}
