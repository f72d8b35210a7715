package simhash

import (
	"errors"
	"fmt"
	"slices"
)

// MaxK is the largest distance accepted by [NewBlocks]. At k = 15 the 16
// blocks are 4 bits wide, so a random pair of fingerprints shares one of
// the 16 block keys about once (16 * 2^-4): the index then costs as much
// as comparing every pair, and a larger k (3-bit blocks) only costs more.
// Useful values are well below: a pair is a candidate with probability
// about 6e-5 for k = 3 and 0.013 for k = 6.
const MaxK = 15

// ErrInvalidK is wrapped by the error of [NewBlocks] for a distance out of
// range.
var ErrInvalidK = errors.New("invalid Hamming distance")

// Blocks cuts a 64-bit fingerprint into k+1 contiguous blocks, bits 0 up,
// whose widths differ by at most one (the first 64 mod (k+1) blocks have
// one bit more). Two fingerprints within Hamming distance k agree exactly
// on at least one block (pigeonhole), so they share at least one of the
// keys returned by [Blocks.Keys]. The zero Blocks has no block; use
// [NewBlocks]. A Blocks is a small value, safe for concurrent use.
type Blocks struct {
	k     int
	shift [MaxK + 1]uint8  // shift[i]: lowest bit of block i
	mask  [MaxK + 1]uint64 // mask[i]: block i's bits once shifted down
}

// NewBlocks returns the k+1 blocks for Hamming distance k (0..MaxK).
func NewBlocks(k int) (Blocks, error) {
	if k < 0 || k > MaxK {
		return Blocks{}, fmt.Errorf("simhash: blocks for distance %d, want 0..%d: %w", k, MaxK, ErrInvalidK)
	}
	b := Blocks{k: k}
	n := k + 1
	lo := 0
	for i := range n {
		w := 64 / n
		if i < 64%n {
			w++
		}
		b.shift[i] = uint8(lo)
		b.mask[i] = ^uint64(0) >> (64 - w)
		lo += w
	}
	return b, nil
}

// K returns the Hamming distance the blocks were made for.
func (b Blocks) K() int { return b.k }

// N returns the number of blocks, K()+1 (0 for the zero Blocks).
func (b Blocks) N() int {
	if b.mask[0] == 0 {
		return 0
	}
	return b.k + 1
}

// Keys appends to dst one key per block of fp, in block order, and returns
// it. The key of block i is a bijective mix (the splitmix64 finaliser) of
// the block's bits with i placed above them (blocks are at most 32 bits
// wide when there are several), so distinct (block index, block bits)
// pairs never give equal keys, and keys of different blocks never collide.
// Keys are well mixed, fit for hash partitioning (bands.Partition). Keys
// made with different k are not comparable.
func (b Blocks) Keys(dst []uint64, fp uint64) []uint64 {
	n := b.N()
	dst = slices.Grow(dst, n)
	for i := range n {
		v := fp>>b.shift[i]&b.mask[i] | uint64(i)<<32
		dst = append(dst, mix(v))
	}
	return dst
}

// mix is the splitmix64 finaliser applied to v plus a constant, a
// bijection of 64-bit words with full avalanche (the constant keeps the
// key of the all-zero block away from 0).
func mix(v uint64) uint64 {
	z := v + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
