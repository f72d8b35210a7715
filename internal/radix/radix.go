// Package radix sorts unsigned 64-bit keys with a least-significant-digit
// radix sort, byte by byte. It is for the reduce and gather stages'
// records, packed into keys whose order is theirs (see stage's
// ordinalCode): a comparison sort of n records calls its comparator
// n log n times, this reads each key once to count its bytes and twice a
// byte that differs between keys, skipping the bytes all keys share (the
// high bytes of a narrow packing).
package radix

import "slices"

// smallSort is the length up to which Sort uses slices.Sort: below it,
// clearing and summing the counts costs more than comparing.
const smallSort = 1024

// Sort sorts s in increasing order. buf is scratch space: a buf shorter
// than s is replaced by one Sort allocates.
func Sort(s, buf []uint64) {
	n := len(s)
	if n <= smallSort {
		slices.Sort(s)
		return
	}
	if len(buf) < n {
		buf = make([]uint64, n)
	}
	counts := countBytes(s)
	src, dst := s, buf[:n]
	// Least significant byte first: each pass is stable, so among keys
	// of an equal byte the order of the earlier passes survives.
	for d := range counts {
		c := &counts[d]
		shift := 8 * uint(d)
		if c[byte(src[0]>>shift)] == n {
			continue // every key has this byte: the pass would move nothing
		}
		offsets(c)
		for _, v := range src {
			b := byte(v >> shift)
			dst[c[b]] = v
			c[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &s[0] {
		copy(s, src)
	}
}

// countBytes counts, for each of the 8 bytes of the keys, how many keys
// have each value of that byte.
func countBytes(s []uint64) *[8][256]int {
	var counts [8][256]int
	for _, v := range s {
		counts[0][byte(v)]++
		counts[1][byte(v>>8)]++
		counts[2][byte(v>>16)]++
		counts[3][byte(v>>24)]++
		counts[4][byte(v>>32)]++
		counts[5][byte(v>>40)]++
		counts[6][byte(v>>48)]++
		counts[7][byte(v>>56)]++
	}
	return &counts
}

// offsets turns the counts of a byte's values into the position of each
// value's first key.
func offsets(c *[256]int) {
	off := 0
	for i, k := range c {
		c[i] = off
		off += k
	}
}
