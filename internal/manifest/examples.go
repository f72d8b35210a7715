package manifest

import (
	"cmp"
	"math"
	"slices"
)

// MaxExamples is the most example pairs a job's manifest holds.
const MaxExamples = 5

// nearThreshold is how many of the examples are the pairs of lowest
// similarity.
const nearThreshold = 3

// ExampleChooser picks a job's example pairs (ExamplePairs) from its
// pairs, whatever order they come in, so that a job run again shows the
// same ones: the nearThreshold pairs of lowest similarity, the pair
// closest to halfway between the threshold and 1, and the pair of highest
// similarity below 1 (a pair of similarity 1 if there is none). Ties go
// to the smaller (a, b). Each choice is the least of the pairs by an
// order of its own, so choosers that saw parts of the pairs merge into
// the one that saw them all (Kept).
type ExampleChooser struct {
	mid          float64
	low          []Example // ascending by lessExample
	middle, high *Example
	identical    *Example
}

// NewExampleChooser returns a chooser for a job's threshold.
func NewExampleChooser(threshold float64) *ExampleChooser {
	return &ExampleChooser{mid: (threshold + 1) / 2}
}

// lessExample orders pairs by similarity, then (a, b).
func lessExample(x, y Example) int {
	return cmp.Or(cmp.Compare(x.Similarity, y.Similarity), cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B))
}

// lessAB orders pairs by (a, b).
func lessAB(x, y Example) int { return cmp.Or(cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B)) }

// Add considers one pair (its Why is not read). A pair added again is
// considered once.
func (c *ExampleChooser) Add(p Example) {
	if i, found := slices.BinarySearchFunc(c.low, p, lessExample); !found && i < nearThreshold {
		c.low = slices.Insert(c.low, i, p)
		c.low = c.low[:min(len(c.low), nearThreshold)]
	}
	if m := c.middle; m == nil || cmp.Or(cmp.Compare(math.Abs(p.Similarity-c.mid), math.Abs(m.Similarity-c.mid)), lessExample(p, *m)) < 0 {
		c.middle = &p
	}
	if p.Similarity >= 1 {
		if c.identical == nil || lessAB(p, *c.identical) < 0 {
			c.identical = &p
		}
	} else if h := c.high; h == nil || cmp.Or(cmp.Compare(h.Similarity, p.Similarity), lessAB(p, *h)) < 0 {
		c.high = &p
	}
}

// Kept returns the pairs the chooser holds, at most nearThreshold+3:
// adding them to another chooser of the same threshold makes it choose as
// if it had seen every pair this one saw.
func (c *ExampleChooser) Kept() []Example {
	out := slices.Clone(c.low)
	for _, p := range []*Example{c.middle, c.high, c.identical} {
		if p != nil && !slices.ContainsFunc(out, func(e Example) bool { return lessAB(e, *p) == 0 }) {
			out = append(out, *p)
		}
	}
	return out
}

// Examples returns the chosen pairs, each once, by similarity then (a, b),
// each with why it was chosen.
func (c *ExampleChooser) Examples() []Example {
	var out []Example
	add := func(p *Example, why string) {
		if p == nil || slices.ContainsFunc(out, func(e Example) bool { return e.A == p.A && e.B == p.B }) {
			return
		}
		e := *p
		e.Why = why
		out = append(out, e)
	}
	for i := range c.low {
		add(&c.low[i], "near the threshold")
	}
	add(c.middle, "halfway between the threshold and 1")
	if c.high != nil {
		add(c.high, "highest similarity below 1")
	} else {
		add(c.identical, "identical shingle sets")
	}
	slices.SortFunc(out, lessExample)
	return out
}
