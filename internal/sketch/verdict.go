package sketch

import (
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/pkg/minhash"
	"github.com/neardup/neardup/pkg/shingle"
	"github.com/neardup/neardup/pkg/simhash"
)

// Rule decides whether a pair of documents is a near-duplicate: neardup's
// one verdict. The verify stage judges every candidate pair of a job (and
// of --against) by it, and query every match, so the two cannot disagree.
//
// A pair is judged in two steps. Screen reads the two signatures and the
// sizes of the two shingle sets: with exact verification it rejects the
// pairs that cannot pass (a MinHash pair with fewer equal values than the
// pre-filter allows, a SimHash pair beyond the Hamming bound, a pair
// whose sizes alone keep its Jaccard similarity below the threshold) and
// sends the others to Exact; with signature verification it decides. Exact
// decides by the number of shingles the two sets have in common: the exact
// Jaccard similarity, at or above the threshold.
type Rule struct {
	method    job.Method
	exact     bool    // exact verification: the sets decide
	threshold float64 // the least similarity that passes
	// hamming is the most differing bits of a SimHash pair that passes by
	// its signature; -1: the estimate against threshold decides.
	hamming int
	// minMatches is the MinHash pre-filter's least equal values of k
	// (see prefilterMatches); -1: none.
	minMatches, k int
}

// NewRule returns the rule of a job with parameters p.
func NewRule(p job.Params) Rule {
	r := Rule{method: p.Method, exact: p.Verify == job.VerifyExact, threshold: p.Threshold, hamming: -1, minMatches: -1, k: p.K}
	if p.Method == job.MethodSimHash {
		r.hamming = p.Hamming
	}
	if p.Method == job.MethodMinHash && r.exact {
		r.minMatches = prefilterMatches(p.Threshold, p.K, prefilterRisk)
	}
	return r
}

// At returns the rule of the same job at threshold t instead of its own
// (query --threshold): a SimHash pair then passes by its estimate, and
// with exact verification its signature rejects nothing.
func (r Rule) At(t float64) Rule {
	r.threshold = t
	if r.method == job.MethodSimHash {
		r.hamming = -1
	}
	if r.minMatches >= 0 {
		r.minMatches = prefilterMatches(t, r.k, prefilterRisk)
	}
	return r
}

// Threshold is the least similarity a pair passes with.
func (r Rule) Threshold() float64 { return r.threshold }

// Exact reports whether the rule decides by the shingle sets (exact
// verification) rather than by the signatures.
func (r Rule) Exact() bool { return r.exact }

// Method is the method that names a similarity decided by the signatures.
func (r Rule) Method() string { return r.method.String() }

// Screening is what a pair's signatures and set sizes say of it.
type Screening struct {
	// Estimate is the signatures' estimate of the similarity.
	Estimate float64
	// Hamming is the SimHash distance, -1 for MinHash.
	Hamming int
	// SigPass is the signatures' own verdict: the pair passes by them.
	SigPass bool
	// Rejected: the pair cannot pass, and needs no exact check.
	Rejected bool
	// NeedsSets: the pair is decided by Exact. Otherwise (and not
	// Rejected) SigPass decides.
	NeedsSets bool
}

// Screen judges a pair by its signatures and the sizes of its shingle
// sets, na and nb.
func (r Rule) Screen(a, b Signature, na, nb int) Screening {
	var s Screening
	matches := 0
	if r.method == job.MethodSimHash {
		d := simhash.Distance(a.SimHash, b.SimHash)
		s.Estimate, s.Hamming = 1-float64(d)/64, d
		if r.hamming >= 0 {
			s.SigPass = d <= r.hamming
		} else {
			s.SigPass = s.Estimate >= r.threshold
		}
	} else {
		matches = Matches(a.MinHash, b.MinHash)
		s.Estimate, s.Hamming = minhash.Estimate(a.MinHash, b.MinHash), -1
		s.SigPass = s.Estimate >= r.threshold
	}
	if !r.exact {
		return s
	}
	switch {
	case r.minMatches >= 0 && matches < r.minMatches,
		r.method == job.MethodSimHash && r.hamming >= 0 && !s.SigPass,
		!sizesAllow(na, nb, r.threshold):
		s.Rejected = true
	default:
		s.NeedsSets = true
	}
	return s
}

// Similarity returns the exact Jaccard similarity of two sets of na and
// nb shingles with inter in common (the same float64 as shingle.Jaccard)
// and whether it passes.
func (r Rule) Similarity(inter, na, nb int) (sim float64, pass bool) {
	sim = shingle.JaccardCount(inter, na, nb)
	return sim, sim >= r.threshold
}

// Verdict is what the rule says of a pair of documents.
type Verdict struct {
	// Similarity is the exact Jaccard similarity when the sets decided,
	// else the signatures' estimate.
	Similarity float64
	// Estimate is the signatures' estimate.
	Estimate float64
	// Method is "exact" when the sets decided, else the signatures'
	// method ("minhash" or "simhash").
	Method string
	// Pass reports whether the pair is a near-duplicate.
	Pass bool
}

// Judge judges a pair of documents with signatures a and b and sorted
// shingle sets sa and sb. With exact verification, a pair whose sets are
// not both known (an index that kept only signatures) is decided by its
// signatures.
func (r Rule) Judge(a, b Signature, sa, sb []uint64) Verdict {
	exact := r.exact && len(sa) > 0 && len(sb) > 0
	rule := r
	rule.exact = exact
	s := rule.Screen(a, b, len(sa), len(sb))
	v := Verdict{Similarity: s.Estimate, Estimate: s.Estimate, Method: r.Method(), Pass: s.SigPass}
	switch {
	case s.Rejected:
		v.Pass = false
	case s.NeedsSets:
		v.Similarity, v.Pass = r.Similarity(shingle.Intersection(sa, sb), len(sa), len(sb))
		v.Method = "exact"
	}
	return v
}

// Matches counts the positions at which two MinHash signatures of equal
// length agree (0 for signatures of different lengths).
func Matches(a, b minhash.Signature) int {
	if len(a) != len(b) {
		return 0
	}
	n := 0
	for i, v := range a {
		if v == b[i] {
			n++
		}
	}
	return n
}
