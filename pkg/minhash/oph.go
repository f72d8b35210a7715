package minhash

import (
	"fmt"
	"math/bits"
)

// MaxOPHK is the largest K accepted by [NewOPH]; the densification tables
// take 4*K*K bytes (64 KiB for K=128, 4 MiB for K=1024).
const MaxOPHK = 1024

// empty marks an empty bin while sketching; bin values are at most empty-1.
const empty = ^uint32(0)

// OPH is one-permutation hashing with K bins and optimal-style
// densification.
//
// Binning: each hash x is first re-keyed by the seed, y = (x xor s) * m
// mod 2^64 with s and odd m from a splitmix64 stream of the seed (a
// bijection, so distinct hashes stay distinct; it makes sketches with
// different seeds use different partitions). y goes to bin
// floor(y*K / 2^64) (its top log2 K bits when K is a power of two) and the
// bin keeps the minimum of min(uint32(y), 2^32-2), the low 32 bits, which
// are independent of the bin for random hashes.
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
// at most a cut-off (SparseCutoff) and probing above it, so densification
// costs O(K^1.5) at worst; both methods give identical signatures (tested),
// so the choice never affects results. The cut-off was chosen by measuring
// both methods (see BenchmarkDensify).
//
// An OPH is immutable and safe for concurrent use.
type OPH struct {
	k      int
	xor    uint64 // re-keying: y = (x ^ xor) * mul
	mul    uint64
	shift  uint // 64 - log2 K if K is a power of two
	pow2   bool
	sparse int      // rank method when the number of non-empty bins is <= sparse
	order  []uint16 // order[j*K+t] is the bin probed at attempt t for bin j
	rank   []uint16 // rank[j*K+c] is the attempt at which bin j probes bin c
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
// is used: about 1.5*sqrt(K), from BenchmarkDensify (the rank method costs
// nz table reads per empty bin, probing about K/nz reads with a less
// predictable loop).
func sparseCutoff(k int) int {
	c := 1
	for (c+1)*(c+1)*4 <= 9*k {
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
	for i := range sig {
		sig[i] = empty
	}
	xor, mul := o.xor, o.mul
	if o.pow2 {
		shift := o.shift & 63 // K=1: shift 0, mask 0
		for _, x := range hashes {
			y := (x ^ xor) * mul
			b := (y >> shift) & uint64(k-1)
			sig[b] = min(sig[b], min(uint32(y), empty-1))
		}
	} else {
		for _, x := range hashes {
			y := (x ^ xor) * mul
			b := mulHi(y, uint64(k))
			sig[b] = min(sig[b], min(uint32(y), empty-1))
		}
	}
	o.densify(sig, -1)
	return sig
}

// densify fills the empty bins of sig. method forces the rank method (0)
// or probing (1); -1 chooses by the number of non-empty bins.
func (o *OPH) densify(sig Signature, method int) {
	k := o.k
	var occ [MaxOPHK / 64]uint64
	nz := 0
	for c, v := range sig {
		if v != empty {
			occ[c>>6] |= 1 << (c & 63)
			nz++
		}
	}
	if nz == k || nz == 0 {
		return
	}
	if method == 0 || method < 0 && nz <= o.sparse {
		nonEmpty := make([]uint16, 0, 64) // on the stack while nz <= 64
		for c, v := range sig {
			if v != empty {
				nonEmpty = append(nonEmpty, uint16(c))
			}
		}
		for j, v := range sig {
			if v != empty {
				continue
			}
			rank := o.rank[j*k : (j+1)*k]
			best := ^uint32(0) // rank<<16 | bin, so that min picks the least rank
			for _, c := range nonEmpty {
				best = min(best, uint32(rank[c])<<16|uint32(c))
			}
			sig[j] = sig[best&0xffff]
		}
		return
	}
	for j, v := range sig {
		if v != empty {
			continue
		}
		for _, c := range o.order[j*k : (j+1)*k] {
			if occ[c>>6]>>(c&63)&1 != 0 {
				sig[j] = sig[c]
				break
			}
		}
	}
}

// mulHi returns the high 64 bits of x*y.
func mulHi(x, y uint64) uint64 {
	hi, _ := bits.Mul64(x, y)
	return hi
}
