package simhash

import "math/bits"

// Fingerprint returns the 64-bit SimHash of the set of shingle hashes:
// bit i is set when the sum over the distinct hashes of +1 (bit i of the
// hash is 1) or -1 (bit i is 0) is positive; a tie, and an empty set, give
// 0. Repeats and order do not matter, and hashes is not modified.
//
// A strictly increasing slice, as returned by shingle.SortUnique, takes
// the fast path: a sortedness check and one bit-sliced pass. Any other
// input is first deduplicated through a hash table, which costs a few
// nanoseconds per hash and allocates above 512 hashes.
func Fingerprint(hashes []uint64) uint64 {
	if strictlyIncreasing(hashes) {
		return majority(hashes)
	}
	return distinctMajority(hashes)
}

// FingerprintWeighted returns the 64-bit SimHash with term-frequency
// weights: hashes may contain repeats, and each distinct hash votes with
// its number of occurrences: the vote is the sum of +1 or -1 over every
// element of hashes. Bit i is set when that sum is positive (a tie, and an
// empty slice, give 0). Order does not matter. It is a single bit-sliced
// pass over hashes, which it does not modify.
func FingerprintWeighted(hashes []uint64) uint64 {
	return majority(hashes)
}

// Distance returns the Hamming distance between two fingerprints, the
// number of bits in which they differ.
func Distance(a, b uint64) int {
	return bits.OnesCount64(a ^ b)
}

// strictlyIncreasing reports whether every element of h is greater than
// the one before it.
func strictlyIncreasing(h []uint64) bool {
	for i := 1; i < len(h); i++ {
		if h[i] <= h[i-1] {
			return false
		}
	}
	return true
}

// smallSet is the largest input that distinctMajority deduplicates without
// allocating.
const smallSet = 512

// distinctMajority returns majority of the distinct elements of h, with
// the tables of distinct on the stack for up to smallSet elements.
func distinctMajority(h []uint64) uint64 {
	var tabStack [2 * smallSet]uint64
	var outStack [smallSet]uint64
	lg := max(4, bits.Len(uint(2*len(h)-1))) // 2^lg >= 2*len(h)
	if len(h) <= smallSet {
		return majority(distinct(outStack[:0], tabStack[:1<<lg], h, lg))
	}
	return majority(distinct(make([]uint64, 0, len(h)), make([]uint64, 1<<lg), h, lg))
}

// distinct appends to out the distinct elements of h in order of first
// occurrence and returns it; out must have room for them. It inserts every
// element into tab, a zeroed open addressing table of 2^lg >= 2*len(h)
// slots (linear probing, load at most 1/2, home slot from the top bits of
// a multiplicative hash of the value, 0 marking an empty slot and the
// value 0 tracked apart).
func distinct(out, tab, h []uint64, lg int) []uint64 {
	mask := uint64(len(tab) - 1)
	zero := false
	for _, v := range h {
		if v == 0 {
			if !zero {
				zero = true
				out = append(out, 0)
			}
			continue
		}
		i := v * 0x9e3779b97f4a7c15 >> (64 - uint(lg))
		for {
			t := tab[i&mask]
			if t == v {
				break
			}
			if t == 0 {
				tab[i&mask] = v
				out = append(out, v)
				break
			}
			i++
		}
	}
	return out
}

// csa is a carry-save adder of three bit vectors: for every bit position,
// the two-bit number hi:lo is a+b+c. Operand c is used last, so the
// longest dependency chain (the running sum) should go through it.
func csa(a, b, c uint64) (hi, lo uint64) {
	u := a ^ b
	return a&b | u&c, u ^ c
}

// majority returns the word whose bit i is set when more than half of the
// elements of h have bit i set, that is when the count of ones in column i
// is at least len(h)/2+1.
//
// The 64 column counts are kept bit-sliced: plane j holds bit j of every
// count. Sixteen words at a time go through a Harley-Seal carry-save adder
// tree into the planes of weight 1, 2, 4 and 8; its carry out, the word of
// weight 16, is rippled into the higher planes, of which there are just
// enough for counts up to len(h) (so the ripple never overflows). A short
// tail is padded with zero words, which add nothing to the counts. The
// comparison with the threshold is then done on the planes, for all 64
// columns at once.
func majority(h []uint64) uint64 {
	n := len(h)
	var planes [64]uint64
	top := bits.Len(uint(n)) // bits needed by a count in 0..n
	high := planes[4:max(4, top)]
	var ones, twos, fours, eights uint64
	var pad [16]uint64
	for len(h) > 0 {
		if len(h) < 16 {
			copy(pad[:], h)
			h = pad[:]
		}
		d := (*[16]uint64)(h[:16])
		h = h[16:]

		twosA, o := csa(d[0], d[1], ones)
		twosB, o := csa(d[2], d[3], o)
		foursA, t := csa(twosA, twosB, twos)
		twosA, o = csa(d[4], d[5], o)
		twosB, o = csa(d[6], d[7], o)
		foursB, t := csa(twosA, twosB, t)
		eightsA, f := csa(foursA, foursB, fours)
		twosA, o = csa(d[8], d[9], o)
		twosB, o = csa(d[10], d[11], o)
		foursA, t = csa(twosA, twosB, t)
		twosA, o = csa(d[12], d[13], o)
		twosB, o = csa(d[14], d[15], o)
		foursB, t = csa(twosA, twosB, t)
		eightsB, f := csa(foursA, foursB, f)
		carry, e := csa(eightsA, eightsB, eights)
		ones, twos, fours, eights = o, t, f, e

		for j := range high {
			c := high[j] & carry
			high[j] ^= carry
			carry = c
		}
	}
	planes[0], planes[1], planes[2], planes[3] = ones, twos, fours, eights

	// Bit-sliced count >= t, from the most significant plane down: gt
	// marks the columns already known to be greater than t, eq those
	// equal to t so far.
	t := uint64(n)/2 + 1
	gt, eq := uint64(0), ^uint64(0)
	for j := max(1, top) - 1; j >= 0; j-- {
		p := planes[j]
		m := -(t >> uint(j) & 1) // all ones when bit j of t is 1
		gt |= eq & p &^ m
		eq &^= p ^ m
	}
	return gt | eq
}
