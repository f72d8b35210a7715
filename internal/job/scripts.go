package job

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/neardup/neardup/pkg/shingle"
)

// ThinShingles is the fewest distinct shingles of a document that is not
// thin: a thin document (1 to ThinShingles-1 shingles) has so few that
// its similarity to another moves in steps of a quarter or more, and its
// near copies are found only when they are nearly identical.
const ThinShingles = 5

// ScriptStats counts documents of one script (shingle.DominantScript):
// all of them, the thin ones, and their shingle counts in ShingleBin bins.
type ScriptStats struct {
	Docs int64   `json:"docs"`
	Thin int64   `json:"thin"`
	Hist []int64 `json:"shingles_hist"`
}

// shingleBins is the number of ShingleBin bins: counts up to 2^31.
const shingleBins = 32 + 26*8

// ShingleBin is the bin of a shingle count n >= 0: n itself below 32,
// then 8 bins per power of two (so a bin's counts are within 1/8 of its
// lower bound, ShingleBinLow).
func ShingleBin(n int64) int {
	if n < 32 {
		return int(max(n, 0))
	}
	e := bits.Len64(uint64(n)) - 1 // >= 5
	return min(32+(e-5)*8+int(n>>(e-3)&7), shingleBins-1)
}

// ShingleBinLow is the least count of bin b.
func ShingleBinLow(b int) int64 {
	if b < 32 {
		return int64(b)
	}
	e, sub := (b-32)/8+5, (b-32)%8
	return int64(8+sub) << (e - 3)
}

// AddDoc counts a document of script s with n distinct shingles in
// stats, a map made by the caller.
func AddDoc(stats map[string]*ScriptStats, s shingle.Script, n int64) {
	st := stats[s.String()]
	if st == nil {
		st = &ScriptStats{}
		stats[s.String()] = st
	}
	st.Docs++
	if n > 0 && n < ThinShingles {
		st.Thin++
	}
	b := ShingleBin(n)
	if len(st.Hist) <= b {
		st.Hist = slices.Grow(st.Hist, b+1-len(st.Hist))[:b+1]
	}
	st.Hist[b]++
}

// Merge adds o to s.
func (s *ScriptStats) Merge(o *ScriptStats) {
	s.Docs += o.Docs
	s.Thin += o.Thin
	if len(s.Hist) < len(o.Hist) {
		s.Hist = slices.Grow(s.Hist, len(o.Hist)-len(s.Hist))[:len(o.Hist)]
	}
	for i, n := range o.Hist {
		s.Hist[i] += n
	}
}

// MedianShingles is the lower median shingle count of the documents (of
// an even number, the lesser of the middle two), as the lower bound of its
// bin: exact below 32, within 1/8 above.
func (s *ScriptStats) MedianShingles() int64 {
	var seen int64
	for b, n := range s.Hist {
		if seen += n; 2*seen >= s.Docs && s.Docs > 0 {
			return ShingleBinLow(b)
		}
	}
	return 0
}

// ScriptSummary is one script's line in the manifest.
type ScriptSummary struct {
	Script string `json:"script"`
	// Covered is false for documents of scripts the tokenizer has no
	// rule for ("other"), cut into words at spaces and punctuation, and
	// for documents without letters ("none").
	Covered        bool  `json:"covered"`
	Docs           int64 `json:"docs"`
	Thin           int64 `json:"thin"`
	MedianShingles int64 `json:"median_shingles"`
}

// SummariseScripts lists stats by script, most documents first.
func SummariseScripts(stats map[string]*ScriptStats) []ScriptSummary {
	out := []ScriptSummary{}
	for name, st := range stats {
		covered := name != shingle.ScriptOther.String() && name != shingle.ScriptNone.String()
		out = append(out, ScriptSummary{Script: name, Covered: covered,
			Docs: st.Docs, Thin: st.Thin, MedianShingles: st.MedianShingles()})
	}
	slices.SortFunc(out, func(a, b ScriptSummary) int {
		return cmp.Or(cmp.Compare(b.Docs, a.Docs), cmp.Compare(a.Script, b.Script))
	})
	return out
}
