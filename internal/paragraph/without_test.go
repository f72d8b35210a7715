package paragraph

import (
	"testing"

	"github.com/neardup/neardup/pkg/shingle"
)

// TestWithout checks the text a document is sketched from with
// --shingle-after-strip: its units whose hash the set holds gone, with
// their line breaks, the rest as it was; the text itself when none is.
func TestWithout(t *testing.T) {
	o := shingle.Options{Words: 5}
	hash := func(kind, unit string) uint64 {
		c, err := NewCutter(kind, o)
		if err != nil {
			t.Fatal(err)
		}
		var h uint64
		if err := c.Cut(unit, func(u Unit) error { h = u.Hash; return nil }); err != nil {
			t.Fatal(err)
		}
		return h
	}
	tests := []struct {
		name, kind, text string
		drop             []string // units whose hash the set holds
		want             string
	}{
		{"header and footer lines", Line, "Home | About\nthe body line\n© 2026 Site\n", []string{"home about", "© 2026 site"}, "the body line\n"},
		{"normalised as shingles", Line, "HOME  |  about\r\nbody\n", []string{"Home about"}, "body\n"},
		{"nothing held", Line, "a\nb\n", []string{"c"}, "a\nb\n"},
		{"paragraphs", Paragraph, "menu a\nmenu b\n\nbody one\nbody two\n", []string{"menu a\nmenu b"}, "\nbody one\nbody two\n"},
		{"every unit", Line, "x\ny", []string{"x", "y"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := map[uint64]bool{}
			for _, u := range tt.drop {
				set[hash(tt.kind, u)] = true
			}
			w, err := NewWithout(tt.kind, o, func(h uint64) bool { return set[h] })
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range []*Without{w, w.Fork()} {
				got, err := w.Text([]byte(tt.text))
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != tt.want {
					t.Errorf("Text(%q) = %q, want %q", tt.text, got, tt.want)
				}
			}
		})
	}
}
