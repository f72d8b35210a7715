package simhash

import "math"

// The functions below give the random-hyperplane model of the distance
// between the fingerprints of two shingle sets (Charikar 2002). Bit i of a
// fingerprint is the sign of the projection of the set's 0/1 indicator
// vector onto a pseudo-random direction, so two sets disagree on it with
// probability θ/π, θ the angle between their indicator vectors,
// independently for the 64 bits. For sets A and B,
// cos θ = |A∩B| / sqrt(|A| |B|); for sets of equal size with Jaccard
// similarity J it is 2J/(1+J). At a given J, sets of unequal size have a
// larger cosine (the arithmetic mean of |A| and |B| is at least their
// geometric mean), so the equal-size figures are the least favourable
// case. With few shingles the ±1 votes flip a bit slightly less often than
// θ/π (about 0.6% less for 300 shingles at J = 0.8), so the model is
// slightly pessimistic there too. It describes [Fingerprint]; with
// [FingerprintWeighted] the angle is that of the count vectors instead.

// FlipProbability returns the probability q = θ/π that one bit of the
// fingerprints of two sets of equal size and Jaccard similarity j differs,
// where cos θ = 2j/(1+j). It falls from 1/2 at j = 0 (unrelated sets) to 0
// at j = 1; at j = 0.8 it is 0.151. j is clamped to [0, 1].
func FlipProbability(j float64) float64 {
	j = min(max(j, 0), 1)
	return math.Acos(min(2*j/(1+j), 1)) / math.Pi
}

// ExpectedDistance returns the expected Hamming distance between the
// fingerprints of two sets of equal size and Jaccard similarity j,
// 64·[FlipProbability](j): 9.7 bits at j = 0.8.
func ExpectedDistance(j float64) float64 {
	return 64 * FlipProbability(j)
}

// CandidateProbability returns the probability that two sets of equal
// size and Jaccard similarity j share a key of b, that is that some block
// of their fingerprints holds no differing bit:
// 1 - Π (1 - (1-q)^w), over the blocks of widths w, q = [FlipProbability](j).
// At j = 0 it is the rate at which unrelated documents become candidates.
// The zero Blocks gives 0.
func CandidateProbability(j float64, b Blocks) float64 {
	if b.N() == 0 {
		return 0
	}
	same := 1 - FlipProbability(j)
	logNone := 0.0 // log P(every block holds a differing bit)
	for i := range b.N() {
		logNone += math.Log1p(-math.Pow(same, float64(b.Width(i))))
	}
	return -math.Expm1(logNone) // accurate down to 2^-64 at j = 0, k = 0
}

// FoundProbability returns the probability that the fingerprints of two
// sets of equal size and Jaccard similarity j are within Hamming distance
// k: P(D <= k) for D ~ Binomial(64, q), q = [FlipProbability](j). Such a
// pair always shares a key of the blocks for k (pigeonhole), so this is
// the probability that a search at distance k finds it. It is 0 for k < 0
// and 1 for k >= 64.
func FoundProbability(j float64, k int) float64 {
	const n = 64
	q := FlipProbability(j)
	switch {
	case k < 0:
		return 0
	case k >= n || q == 0:
		return 1
	}
	// q <= 1/2, so 1-q >= 1/2 and (1-q)^64 >= 2^-64 does not underflow.
	term := math.Pow(1-q, n) // P(D = 0)
	sum := term
	odds := q / (1 - q)
	for i := range k {
		term *= float64(n-i) / float64(i+1) * odds // P(D = i+1)
		sum += term
	}
	return min(sum, 1)
}
