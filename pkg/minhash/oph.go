package minhash

import (
	"fmt"
	"math/bits"
)

// MaxOPHK is the largest K accepted by [NewOPH]; the densification tables
// take 4*K*K bytes (64 KiB for K=128, 4 MiB for K=1024).
const MaxOPHK = 1024

// empty marks an empty bin while sketching.
const empty = ^uint32(0)

// OPH is one-permutation hashing with K bins and optimal-style
// densification.
//
// Binning: each hash x is first re-keyed by the seed, y = (x xor s) * m
// mod 2^64 with s and odd m from a splitmix64 stream of the seed (a
// bijection, so distinct hashes stay distinct; it makes sketches with
// different seeds use different partitions). y goes to bin
// floor(y*K / 2^64) (its top log2 K bits when K is a power of two) and the
// bin keeps the minimum of uint32(y), the low 32 bits, which are
// independent of the bin for random hashes. A bin whose minimum is 2^32-1
// counts as empty (probability 2^-32 per bin; still a function of the set
// alone, so equal sets keep equal signatures).
//
// Densification: every bin j has a fixed probe order, a pseudo-random
// permutation of the K bins drawn from (seed, j) only (Fisher-Yates on a
// splitmix64 stream); an empty bin j takes the value of the first bin in
// its order that is non-empty. Since the order does not depend on the set,
// equal sets give equal signatures, and for two sets A and B, bin j agrees
// exactly when the first bin of its order that is non-empty in A ∪ B has
// its A ∪ B minimum in A ∩ B, which happens with probability J(A, B): the
// scheme stays an unbiased estimator and a valid LSH. It is "optimal
// densification" (Shrivastava 2017) with probing without replacement.
//
// Cost bound: with nz non-empty bins, probing costs about K/nz per empty
// bin, O(K^2) in total for tiny sets. The same result, the first non-empty
// bin in j's order, is also the non-empty bin of least rank in that order,
// found in nz steps per empty bin. Sketch uses the rank method when nz is
// at most a cut-off (SparseCutoff, floor(sqrt(K)), chosen by measuring both
// methods, see sparseCutoff) and probing above it, so densification costs
// O(K^1.5) at worst (at K=128 about 1.2 µs per document at worst, against
// 4 µs for probing a set that fills two bins); both methods give
// identical signatures (tested), so the choice never affects results.
//
// Small sets: a set of n << K shingles fills about n bins and the other
// bins copy their values, so the bins of a band are correlated. Estimate
// stays unbiased (with a larger variance than sqrt(J(1-J)/K)), but the
// probability that two documents share a band key deviates from
// 1-(1-J^r)^b; for sets of at least 2K shingles OPH behaves like K
// independent values (see the statistical tests of this package and of
// package bands).
//
// An OPH is immutable and safe for concurrent use.
type OPH struct {
	k       int
	xor     uint64 // re-keying: y = (x ^ xor) * mul
	mul     uint64
	shift   uint // 64 - log2 K if K is a power of two
	pow2    bool
	sparse  int       // rank method when the number of non-empty bins is <= sparse
	order   []uint16  // order[j*K+t] is the bin probed at attempt t for bin j
	rank    []uint16  // rank[j*K+c] is the attempt at which bin j probes bin c
	empties Signature // K times empty, to reset a signature by copy
}

// NewOPH returns an OPH sketch with k bins (1..MaxOPHK).
func NewOPH(k int, seed uint64) (*OPH, error) {
	if k < 1 || k > MaxOPHK {
		return nil, fmt.Errorf("minhash: OPH K = %d, want 1..%d: %w", k, MaxOPHK, ErrInvalidK)
	}
	o := &OPH{
		k:      k,
		order:  make([]uint16, k*k),
		rank:   make([]uint16, k*k),
		sparse: sparseCutoff(k),
	}
	g := splitmix64{seed}
	o.xor, o.mul = g.next(), g.next()|1
	o.empties = make(Signature, k)
	for i := range o.empties {
		o.empties[i] = empty
	}
	if k&(k-1) == 0 {
		o.pow2 = true
		o.shift = uint(64 - bits.TrailingZeros(uint(k)))
	}
	for j := 0; j < k; j++ {
		g := splitmix64{seed ^ (uint64(j)+1)*0xd1b54a32d192ed03}
		perm := o.order[j*k : (j+1)*k]
		for t := range perm {
			perm[t] = uint16(t)
		}
		for t := k - 1; t > 0; t-- {
			u, _ := bits.Mul64(g.next(), uint64(t+1))
			perm[t], perm[u] = perm[u], perm[t]
		}
		rank := o.rank[j*k : (j+1)*k]
		for t, c := range perm {
			rank[c] = uint16(t)
		}
	}
	return o, nil
}

// sparseCutoff is the number of non-empty bins up to which the rank method
// is used: floor(sqrt(K)). Measured at K=128 (BenchmarkDensify, one core):
// rank vs probing 1.03 vs 1.48 µs at 8 non-empty bins, 1.30 vs 0.98 µs at
// 12; the rank method costs about nz steps per empty bin and probing about
// K/nz, so the crossover scales as sqrt(K).
func sparseCutoff(k int) int {
	c := 1
	for (c+1)*(c+1) <= k {
		c++
	}
	return c
}

// K returns the number of bins.
func (o *OPH) K() int { return o.k }

// SparseCutoff returns the number of non-empty bins up to which Sketch
// densifies with the rank method instead of probing.
func (o *OPH) SparseCutoff() int { return o.sparse }

// Sketch returns the signature of the set of hashes (repeats allowed),
// reusing dst. It returns dst[:0] when hashes is empty.
func (o *OPH) Sketch(dst Signature, hashes []uint64) Signature {
	if len(hashes) == 0 {
		return dst[:0]
	}
	k := o.k
	sig := resize(dst, k)
	copy(sig, o.empties)
	xor, mul := o.xor, o.mul
	switch {
	case k == 1:
		m := empty
		for _, x := range hashes {
			m = min(m, uint32((x^xor)*mul))
		}
		sig[0] = m
	case o.pow2:
		shift := o.shift & 63
		for _, x := range hashes {
			y := (x ^ xor) * mul
			b := y >> shift
			sig[b] = min(sig[b], uint32(y))
		}
	default:
		for _, x := range hashes {
			y := (x ^ xor) * mul
			b := mulHi(y, uint64(k))
			sig[b] = min(sig[b], uint32(y))
		}
	}
	o.densify(sig, -1)
	return sig
}

// densify fills the empty bins of sig. method forces the rank method (0)
// or probing (1); -1 chooses by the number of non-empty bins.
func (o *OPH) densify(sig Signature, method int) {
	k := o.k
	nw := (k + 63) >> 6
	// occ has bit c set if bin c is non-empty (computed without branches).
	var occ [MaxOPHK / 64]uint64
	nz := 0
	for w := range nw {
		chunk := sig[w<<6 : min(k, w<<6+64)]
		// Bit c of bm: chunk[c] is not empty. Built from the top, four bins
		// at a time, with constant shifts only.
		var bm uint64
		c := len(chunk)
		for ; c >= 4; c -= 4 {
			q := chunk[c-4 : c]
			bm = bm<<4 | full(q[3])<<3 | full(q[2])<<2 | full(q[1])<<1 | full(q[0])
		}
		for ; c > 0; c-- {
			bm = bm<<1 | full(chunk[c-1])
		}
		occ[w&(MaxOPHK/64-1)] = bm
		nz += bits.OnesCount64(bm)
	}
	if nz == k || nz == 0 {
		return
	}
	if nz == 1 { // every order leads to the one non-empty bin
		v := empty
		for _, x := range sig {
			v = min(v, x)
		}
		for i := range sig {
			sig[i] = v
		}
		return
	}
	if method == 0 || method < 0 && nz <= o.sparse {
		nonEmpty := make([]uint16, 0, 64) // on the stack while nz <= 64
		for w := range nw {
			for bm := occ[w]; bm != 0; bm &= bm - 1 {
				nonEmpty = append(nonEmpty, uint16(w<<6+bits.TrailingZeros64(bm)))
			}
		}
		for w := range nw {
			for em := ^occ[w] & lowBits(k-w<<6); em != 0; em &= em - 1 {
				j := w<<6 + bits.TrailingZeros64(em)
				rank := o.rank[j*k : (j+1)*k]
				best := ^uint32(0) // rank<<16 | bin, so that min picks the least rank
				for _, c := range nonEmpty {
					best = min(best, uint32(rank[c])<<16|uint32(c))
				}
				sig[j] = sig[best&0xffff]
			}
		}
		return
	}
	for w := range nw {
		for em := ^occ[w] & lowBits(k-w<<6); em != 0; em &= em - 1 {
			j := w<<6 + bits.TrailingZeros64(em)
			for _, c := range o.order[j*k : (j+1)*k] {
				if occ[c>>6&(MaxOPHK/64-1)]>>(c&63)&1 != 0 {
					sig[j] = sig[c]
					break
				}
			}
		}
	}
}

// full returns 1 if bin value v is not empty, else 0.
func full(v uint32) uint64 { return 1 ^ (uint64(v)+1)>>32 }

// lowBits returns a word with the low min(n, 64) bits set.
func lowBits(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return 1<<uint(n) - 1
}

// mulHi returns the high 64 bits of x*y.
func mulHi(x, y uint64) uint64 {
	hi, _ := bits.Mul64(x, y)
	return hi
}
