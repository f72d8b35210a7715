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
	n    int // number of blocks, k+1
	w    int // width of the narrow blocks, 64/n
	wide int // number of blocks of w+1 bits, 64%n
}

// NewBlocks returns the k+1 blocks for Hamming distance k (0..MaxK).
func NewBlocks(k int) (Blocks, error) {
	if k < 0 || k > MaxK {
		return Blocks{}, fmt.Errorf("simhash: blocks for distance %d, want 0..%d: %w", k, MaxK, ErrInvalidK)
	}
	return Blocks{n: k + 1, w: 64 / (k + 1), wide: 64 % (k + 1)}, nil
}

// K returns the Hamming distance the blocks were made for (-1 for the zero
// Blocks).
func (b Blocks) K() int { return b.n - 1 }

// N returns the number of blocks, K()+1.
func (b Blocks) N() int { return b.n }

// Width returns the width in bits of block i, 0 <= i < N(): the first
// 64 mod N() blocks are one bit wider than the others.
func (b Blocks) Width(i int) int {
	_, w := b.block(i)
	return w
}

// Keys appends to dst one key per block of fp, in block order, and returns
// it. The key of block i is a bijective mix (the splitmix64 finaliser) of
// the block's bits with i placed above them (blocks are at most 32 bits
// wide when there are several), so distinct (block index, block bits)
// pairs never give equal keys, and keys of different blocks never collide.
// Keys are well mixed, fit for hash partitioning (bands.Partition). Keys
// made with different k are not comparable.
func (b Blocks) Keys(dst []uint64, fp uint64) []uint64 {
	m := len(dst)
	dst = slices.Grow(dst, b.n)[:m+b.n]
	out := dst[m:]
	lo := 0
	for i := range out {
		wi := b.w
		if i < b.wide {
			wi++
		}
		out[i] = mix(fp>>uint(lo)&(^uint64(0)>>uint(64-wi)) | uint64(i)<<32)
		lo += wi
	}
	return dst
}

// block returns the lowest bit and the width of block i, as Keys cuts it.
func (b Blocks) block(i int) (shift, width int) {
	return i*b.w + min(i, b.wide), b.w + min(1, max(0, b.wide-i))
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
