package manifest

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestExampleChooser checks which pairs are chosen as examples, in which order
// and why, whatever order the pairs come in, and that choosers of parts
// of the pairs merged (Kept) choose as one chooser of them all.
func TestExampleChooser(t *testing.T) {
	pr := func(a, b int64, s float64) Example { return Example{A: a, B: b, Similarity: s} }
	type want struct {
		a, b int64
		why  string
	}
	tests := []struct {
		name      string
		threshold float64
		pairs     []Example
		want      []want
	}{
		{"none", 0.8, nil, nil},
		{"one", 0.8, []Example{pr(1, 2, 0.85)}, []want{{1, 2, "near the threshold"}}},
		{"identical only", 0.8, []Example{pr(3, 4, 1), pr(1, 2, 1), pr(1, 5, 1), pr(2, 6, 1)},
			// The middle and the highest are (1, 2) too: three examples.
			[]want{{1, 2, "near the threshold"}, {1, 5, "near the threshold"}, {2, 6, "near the threshold"}}},
		{"spread", 0.8, []Example{
			pr(1, 2, 0.80), pr(1, 3, 0.81), pr(1, 4, 0.81), pr(2, 3, 0.83), pr(5, 6, 0.84),
			pr(7, 8, 0.89), pr(7, 9, 0.91), pr(9, 10, 0.97), pr(9, 11, 0.99), pr(10, 11, 0.99), pr(12, 13, 1),
		}, []want{
			{1, 2, "near the threshold"}, {1, 3, "near the threshold"}, {1, 4, "near the threshold"},
			{7, 8, "halfway between the threshold and 1"}, // 0.89 and 0.91 are as close to 0.9: the lower wins
			{9, 11, "highest similarity below 1"},         // ties go to the smaller (a, b)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			for round := range 5 {
				pairs := slices.Clone(tt.pairs)
				if round > 0 {
					r.Shuffle(len(pairs), func(i, j int) { pairs[i], pairs[j] = pairs[j], pairs[i] })
				}
				c := NewExampleChooser(tt.threshold)
				for _, p := range pairs {
					c.Add(p)
				}
				// The same pairs cut into parts, each part chosen from
				// alone, then merged.
				merged := NewExampleChooser(tt.threshold)
				for lo := 0; lo < len(pairs); lo += round + 1 {
					part := NewExampleChooser(tt.threshold)
					for _, p := range pairs[lo:min(lo+round+1, len(pairs))] {
						part.Add(p)
					}
					for _, p := range part.Kept() {
						merged.Add(p)
					}
				}
				for name, c := range map[string]*ExampleChooser{"one chooser": c, "merged parts": merged} {
					var got []want
					for _, e := range c.Examples() {
						got = append(got, want{e.A, e.B, e.Why})
					}
					if !slices.Equal(got, tt.want) {
						t.Fatalf("round %d, %s: examples %v, want %v", round, name, got, tt.want)
					}
				}
			}
		})
	}
}
