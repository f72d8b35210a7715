package minhash

import "fmt"

// MaxClassicK is the largest K accepted by [NewClassic].
const MaxClassicK = 1 << 16

// Classic is classic MinHash with K multiply-shift permutations: value i of
// a signature is the minimum over the shingle hashes x of
// uint32((a_i*x + b_i) >> 32) mod 2^64, with a_i odd; a_i and b_i come from
// a splitmix64 stream of the seed. The shingle hashes must be well mixed
// (package shingle's are): multiply-shift over structured integers is
// measurably biased. A Classic is immutable and safe for concurrent use.
type Classic struct {
	a, b []uint64
}

// NewClassic returns a Classic sketch of length k (1..MaxClassicK).
func NewClassic(k int, seed uint64) (*Classic, error) {
	if k < 1 || k > MaxClassicK {
		return nil, fmt.Errorf("minhash: classic K = %d, want 1..%d: %w", k, MaxClassicK, ErrInvalidK)
	}
	g := splitmix64{seed}
	c := &Classic{a: make([]uint64, k), b: make([]uint64, k)}
	for i := range c.a {
		c.a[i] = g.next() | 1
		c.b[i] = g.next()
	}
	return c, nil
}

// K returns the signature length.
func (c *Classic) K() int { return len(c.a) }

// Sketch returns the signature of the set of hashes (repeats allowed),
// reusing dst. It returns dst[:0] when hashes is empty.
func (c *Classic) Sketch(dst Signature, hashes []uint64) Signature {
	if len(hashes) == 0 {
		return dst[:0]
	}
	k := len(c.a)
	sig := resize(dst, k)
	a, b := c.a[:k], c.b[:k]
	i := 0
	// Four permutations per pass over the hashes: four independent
	// dependency chains and one load per hash for four values.
	for ; i+4 <= k; i += 4 {
		a0, a1, a2, a3 := a[i], a[i+1], a[i+2], a[i+3]
		b0, b1, b2, b3 := b[i], b[i+1], b[i+2], b[i+3]
		m0, m1, m2, m3 := ^uint32(0), ^uint32(0), ^uint32(0), ^uint32(0)
		for _, x := range hashes {
			m0 = min(m0, uint32((a0*x+b0)>>32))
			m1 = min(m1, uint32((a1*x+b1)>>32))
			m2 = min(m2, uint32((a2*x+b2)>>32))
			m3 = min(m3, uint32((a3*x+b3)>>32))
		}
		sig[i], sig[i+1], sig[i+2], sig[i+3] = m0, m1, m2, m3
	}
	for ; i < k; i++ {
		sig[i] = classicValue(a[i], b[i], hashes)
	}
	return sig
}

// classicValue is the reference definition of one signature value.
func classicValue(a, b uint64, hashes []uint64) uint32 {
	m := ^uint32(0)
	for _, x := range hashes {
		m = min(m, uint32((a*x+b)>>32))
	}
	return m
}
