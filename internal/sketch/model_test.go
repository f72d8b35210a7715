package sketch

import (
	"testing"

	"github.com/neardup/neardup/internal/job"
)

// TestModelFingerprint checks that the fingerprint of the document model
// follows every parameter that changes a sketch.
func TestModelFingerprint(t *testing.T) {
	base := resolved(t, func(p *job.Params) {})
	fp0, err := ModelFingerprint(base)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := ModelFingerprint(base); again != fp0 {
		t.Fatalf("two fingerprints of one model: %s %s", fp0, again)
	}
	seen := map[string]string{fp0: "default"}
	for _, tc := range []struct {
		name string
		set  func(p *job.Params)
	}{
		{"seed", func(p *job.Params) { p.Seed = 2 }},
		{"words", func(p *job.Params) { p.Words = 4 }},
		{"tokenizer", func(p *job.Params) { p.Tokenizer = "words-only" }},
		{"char-grams", func(p *job.Params) { p.CharGrams = 4 }},
		{"digits-to-zero", func(p *job.Params) { p.DigitsToZero = true }},
		{"strip-diacritics", func(p *job.Params) { p.StripDiacritics = true }},
		{"perms", func(p *job.Params) { p.K = 64; p.Bands, p.Rows = 16, 4 }},
		{"sketch", func(p *job.Params) { p.Sketch = "classic" }},
		{"bands", func(p *job.Params) { p.Bands, p.Rows = 32, 4 }},
		{"simhash", func(p *job.Params) { p.Method = "simhash" }},
	} {
		fp, err := ModelFingerprint(resolved(t, tc.set))
		if err != nil {
			t.Fatal(err)
		}
		if other, ok := seen[fp]; ok {
			t.Errorf("--%s: fingerprint %s, the same as %s's", tc.name, fp, other)
		}
		seen[fp] = tc.name
	}

}
