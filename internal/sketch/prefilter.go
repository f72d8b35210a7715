package sketch

import "math"

// prefilterRisk is the largest probability with which the signature
// pre-filter may reject a pair whose Jaccard similarity is at the
// threshold (less for pairs above it).
const prefilterRisk = 1e-6

// prefilterMatches returns the number of equal signature values below
// which a candidate pair is rejected without computing its exact Jaccard
// similarity: the largest c such that P(X < c) <= risk for X ~ Binomial(k,
// t), the number of equal values of two K-value MinHash signatures of sets
// at similarity t (the values of neardup's sketches are independent, so X
// is binomial). It is 0, rejecting nothing, when even no match at all is
// likelier than risk.
func prefilterMatches(t float64, k int, risk float64) int {
	if t >= 1 {
		return k // only identical signatures can be identical sets
	}
	if t <= 0 {
		return 0
	}
	// P(X < c) = sum_{i<c} pmf(i), summed upward in log space.
	lt, lu := math.Log(t), math.Log1p(-t)
	var cum float64
	for c := 0; c <= k; c++ {
		lg, _ := math.Lgamma(float64(k + 1))
		li, _ := math.Lgamma(float64(c + 1))
		lr, _ := math.Lgamma(float64(k - c + 1))
		pmf := math.Exp(lg - li - lr + float64(c)*lt + float64(k-c)*lu)
		if cum+pmf > risk {
			return c
		}
		cum += pmf
	}
	return k
}

// sizesAllow reports whether two shingle sets of na and nb values can
// have a Jaccard similarity of at least t. |A ∩ B| <= min(na, nb) and
// |A ∪ B| >= max(na, nb), so J <= min/max; as floating-point division
// rounds monotonically, shingle.Jaccard's value is at most the rounded
// min/max too, and a pair whose rounded min/max is below t is surely below
// it: the check is exact, and costs nothing. Two empty sets are allowed
// (their Jaccard similarity, 0, decides).
func sizesAllow(na, nb int, t float64) bool {
	lo, hi := min(na, nb), max(na, nb)
	return hi == 0 || float64(lo)/float64(hi) >= t
}
