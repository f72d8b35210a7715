// Package minhash computes MinHash signatures of shingle sets.
//
// Two sketches are provided, both over the 64-bit shingle hashes of package
// shingle (which are already well mixed):
//
//   - [Dart], the default: value j is the least of the points that the
//     set's elements throw, each independently, into column j of a grid of
//     cells (see [Dart]). Expected cost O(n + K log K) per document with n
//     shingle hashes: about 3.6 draws of a pseudo-random stream per hash
//     for n = 300 and K = 128, 2 for large n.
//   - [Classic], K multiply-shift hash functions, the signature value i
//     being the minimum of h_i over the shingles. Cost O(n K).
//
// For both, Pr[sig(A)[i] == sig(B)[i]] = J(A, B) for every i (up to 32-bit
// value collisions), so [Estimate] is an unbiased estimate of the Jaccard
// similarity and band keys (package bands) are a valid LSH scheme. The
// values of a signature are independent (exactly for Dart, to the
// precision of the hash family for Classic), so the number of equal values
// of two signatures is binomial and two documents share a band of r values
// out of b with probability 1-(1-J^r)^b, at every set size.
// Equal sets give equal signatures; repeats among the hashes do not matter.
package minhash

import (
	"errors"
	"math"
)

// Signature is a MinHash signature: K 32-bit values. A document without
// shingles has an empty signature.
type Signature []uint32

// Sketcher is implemented by [Dart] and [Classic].
type Sketcher interface {
	// Sketch returns the signature of the set of hashes, reusing dst.
	Sketch(dst Signature, hashes []uint64) Signature
	// K returns the signature length.
	K() int
}

// ErrInvalidK is wrapped by the constructors' errors for a bad K.
var ErrInvalidK = errors.New("invalid signature length")

// Estimate returns the fraction of positions at which a and b are equal:
// an unbiased estimate of the Jaccard similarity of the two sets. It is 0
// when the signatures are empty or of different lengths (a document without
// shingles is similar to nothing).
func Estimate(a, b Signature) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	b = b[:len(a)]
	eq := 0
	for i, v := range a {
		if v == b[i] {
			eq++
		}
	}
	return float64(eq) / float64(len(a))
}

// StdErr returns the standard error sqrt(p(1-p)/k) of an estimate p from k
// independent positions. It returns NaN for k <= 0.
func StdErr(p float64, k int) float64 {
	if k <= 0 {
		return math.NaN()
	}
	return math.Sqrt(p * (1 - p) / float64(k))
}

// splitmix64 is a tiny deterministic generator for parameters.
type splitmix64 struct{ s uint64 }

func (g *splitmix64) next() uint64 {
	g.s += 0x9e3779b97f4a7c15
	z := g.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// resize returns dst resliced (or reallocated) to length k.
func resize(dst Signature, k int) Signature {
	if cap(dst) < k {
		return make(Signature, k)
	}
	return dst[:k]
}
