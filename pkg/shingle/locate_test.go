package shingle

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestLocate checks Locate against the reference model: its spans hold
// the tokens of Tokens, one each, and its shingles are those of Shingles
// in order (hashed with HashString), each covering the tokens it is made of.
func TestLocate(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	texts := []string{"", "  ", "One", "Jack London traveled to Oakland, then to Glen Ellen.", "cafe\u0301s Straße", "ab\xffcd\xc3(ef \uFFFDx"}
	for range 400 {
		texts = append(texts, randomText(r, 15))
	}
	opts := append(slices.Clone(modelOptions), Options{Words: 2, StripDiacritics: true}, Options{CharGrams: 1}, Options{CharGrams: 4, DigitsToZero: true})
	for _, o := range opts {
		for _, text := range texts {
			spans, located := Locate(text, o)
			toks := Tokens(text, o)
			if len(spans) != len(toks) {
				t.Fatalf("options %+v text %q: %d spans, %d tokens", o, text, len(spans), len(toks))
			}
			for i, s := range spans {
				if got := Tokens(text[s.Start:s.End], o); len(got) != 1 || got[0] != toks[i] {
					t.Fatalf("options %+v text %q: span %d %q holds tokens %q, want %q", o, text, i, text[s.Start:s.End], got, toks[i])
				}
			}
			shingles := Shingles(text, o)
			if len(located) != len(shingles) {
				t.Fatalf("options %+v text %q: %d located shingles, %d shingles", o, text, len(located), len(shingles))
			}
			for i, l := range located {
				if l.Hash != HashString(shingles[i], o) {
					t.Fatalf("options %+v text %q: shingle %d %q: hash %x, want %x", o, text, i, shingles[i], l.Hash, HashString(shingles[i], o))
				}
				if l.First > l.Last || l.First < 0 && o.CharGrams == 0 || l.Last >= len(toks) {
					t.Fatalf("options %+v text %q: shingle %d covers tokens %d..%d of %d", o, text, i, l.First, l.Last, len(toks))
				}
				if o.CharGrams == 0 {
					if want := shingles[i]; strings.Join(toks[l.First:l.Last+1], " ") != want {
						t.Fatalf("options %+v text %q: shingle %q covers tokens %q", o, text, want, toks[l.First:l.Last+1])
					}
				}
			}
		}
	}
}
