package workfile

import (
	"slices"

	"github.com/neardup/neardup/pkg/records"
)

// SortBandRecords sorts the band records of one partition of a map run
// into CompareBand's order (band, key, doc), using scratch (grown as
// needed, and returned for the next call). Map appends a partition's
// records in document order, so a stable sort by (band, key) is that
// order: a least-significant-byte-first radix sort over the key's eight
// bytes, then the band, moves each record once a byte that differs
// between records, instead of the n log n comparisons of a comparison
// sort (0.22 s of the 100k job's map CPU before). Records not in document
// order, or of a band over 255, are sorted by comparison. The passes are
// package radix's, over 72-bit keys that do not pack into its uint64s: a
// generic radix sort taking a digit function measured twice as slow
// (BenchmarkSortBandRecords, 1.3-1.5 against 2.2-3.4 ms).
func SortBandRecords(recs, scratch []records.BandRecord) []records.BandRecord {
	n := len(recs)
	if n <= smallBandSort || !bandRadixable(recs) {
		slices.SortFunc(recs, CompareBand)
		return scratch
	}
	if cap(scratch) < n {
		scratch = make([]records.BandRecord, n)
	}
	var counts [9][256]int
	for i := range recs {
		k := uint64(recs[i].Key) ^ 1<<63 // signed order as unsigned
		for d := range 8 {
			counts[d][byte(k>>(8*d))]++
		}
		counts[8][byte(recs[i].Band)]++
	}
	src, dst := recs, scratch[:n]
	for d := range counts {
		c := &counts[d]
		if c[bandDigit(&src[0], d)] == n {
			continue // every record has this byte: the pass would move nothing
		}
		off := 0
		for i, k := range c {
			c[i], off = off, off+k
		}
		if d == 8 {
			for i := range src {
				b := byte(src[i].Band)
				dst[c[b]] = src[i]
				c[b]++
			}
		} else {
			shift := 8 * uint(d)
			for i := range src {
				b := byte((uint64(src[i].Key) ^ 1<<63) >> shift)
				dst[c[b]] = src[i]
				c[b]++
			}
		}
		src, dst = dst, src
	}
	if &src[0] != &recs[0] {
		copy(recs, src)
	}
	return scratch
}

// bandDigit is the byte of a record that pass d of sortBandRecords sorts
// by: byte d of its key (in signed order) for d < 8, then its band.
func bandDigit(r *records.BandRecord, d int) byte {
	if d == 8 {
		return byte(r.Band)
	}
	return byte((uint64(r.Key) ^ 1<<63) >> (8 * uint(d)))
}

// smallBandSort is the length up to which sortBandRecords compares:
// below it, counting costs more than comparing.
const smallBandSort = 256

// bandRadixable tells whether recs are in document order with bands that
// fit a byte, which sortBandRecords's radix sort needs.
func bandRadixable(recs []records.BandRecord) bool {
	for i := range recs {
		if recs[i].Band < 0 || recs[i].Band > 255 || i > 0 && recs[i].Doc < recs[i-1].Doc {
			return false
		}
	}
	return true
}
