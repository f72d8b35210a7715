package workfile

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"

	"github.com/neardup/neardup/pkg/records"
)

// pairKind is what a block's pairs hold once each: the method, and
// whether hamming is null.
type pairKind struct {
	method  string
	hamming bool
}

// pairValues adds the values of the pair of the row just added, whose
// numbers are not negative.
func (b *verifiedBlock) pairValues(p records.Pair) {
	kind := pairKind{p.Method, p.Hamming != nil}
	k := slices.Index(b.kinds, kind)
	if k < 0 {
		k = len(b.kinds)
		b.kinds = append(b.kinds, kind)
	}
	est := math.Float64bits(p.Estimate)
	e, ok := b.estimate[est]
	if !ok {
		if b.estimate == nil {
			b.estimate = map[uint64]int{}
		}
		e = len(b.estimates)
		b.estimate[est] = e
		b.estimates = append(b.estimates, est)
	}
	sim := math.Float64bits(p.Similarity)
	n := leadingBytes(sim)
	b.vals = append(b.vals, byte(n|min(k, 15)<<4))
	if k >= 15 {
		b.vals = binary.AppendUvarint(b.vals, uint64(k))
	}
	for i := range n {
		b.vals = append(b.vals, byte(sim>>(56-8*i)))
	}
	b.vals = binary.AppendUvarint(b.vals, uint64(e))
	if p.Hamming != nil {
		b.vals = binary.AppendUvarint(b.vals, uint64(*p.Hamming))
	}
	b.vals = binary.AppendUvarint(b.vals, uint64(p.BandsCollided))
	b.vals = binary.AppendUvarint(b.vals, uint64(p.FirstBand))
}

// leadingBytes is how many bytes of v, from its most significant, hold
// all of its set bits.
func leadingBytes(v uint64) int { return 8 - bits.TrailingZeros64(v)/8 }

// pairValues decodes the values of block b into its pairs.
func (r *verifiedReader) pairValues(b *readBlock, pairs []records.Pair) error {
	d := valueDecoder{p: b.vals}
	kinds := make([]pairKind, d.uvarint(len(b.vals)))
	for i := range kinds {
		kinds[i] = pairKind{d.string(), d.uvarint(2) == 1}
	}
	estimates := make([]float64, d.uvarint(len(b.vals)/8))
	for i := range estimates {
		estimates[i] = math.Float64frombits(d.uint64())
	}
	if d.failed {
		return r.corrupt(b.valsAt, "bad kinds or estimates")
	}
	var hamming []int32 // the block's pairs' Hamming point into it
	for i := range pairs {
		start := b.valsAt + int64(d.at)
		c := d.byte()
		k := int(c >> 4)
		if k == 15 {
			k = d.uvarint(len(kinds))
		}
		n := int(c & 15)
		if n > 8 || k >= len(kinds) {
			d.failed = true
		}
		var sim uint64
		for j := range min(n, 8) {
			sim |= uint64(d.byte()) << (56 - 8*j)
		}
		pr := &pairs[i]
		pr.Similarity = math.Float64frombits(sim)
		if e := d.uvarint(len(estimates)); !d.failed {
			pr.Estimate = estimates[e]
		}
		if !d.failed && kinds[k].hamming {
			if hamming == nil {
				hamming = make([]int32, 0, len(pairs))
			}
			hamming = append(hamming, int32(d.uvarint(math.MaxInt32+1)))
			pr.Hamming = &hamming[len(hamming)-1]
		}
		pr.BandsCollided, pr.FirstBand = int32(d.uvarint(math.MaxInt32+1)), int32(d.uvarint(math.MaxInt32+1))
		if d.failed {
			return r.corrupt(start, "bad values of row %d of the block", i)
		}
		pr.Method = kinds[k].method
	}
	if d.at != len(b.vals) {
		return r.corrupt(b.valsAt+int64(d.at), "%d bytes after the rows", len(b.vals)-d.at)
	}
	return nil
}

// valueDecoder reads the values of a block; a value that does not
// decode, or is out of its range, leaves it failed (and reads as 0).
type valueDecoder struct {
	p      []byte
	at     int
	failed bool
}

func (d *valueDecoder) byte() byte {
	if d.at >= len(d.p) {
		d.failed = true
		return 0
	}
	d.at++
	return d.p[d.at-1]
}

// uvarint reads a uvarint below bound.
func (d *valueDecoder) uvarint(bound int) int {
	v, k := binary.Uvarint(d.p[min(d.at, len(d.p)):])
	if k <= 0 || v >= uint64(bound) {
		d.failed = true
		return 0
	}
	d.at += k
	return int(v)
}

func (d *valueDecoder) uint64() uint64 {
	if len(d.p)-d.at < 8 {
		d.failed = true
		return 0
	}
	d.at += 8
	return binary.LittleEndian.Uint64(d.p[d.at-8:])
}

func (d *valueDecoder) string() string {
	l := d.uvarint(len(d.p) - d.at + 1)
	if d.failed || l > len(d.p)-d.at {
		d.failed = true
		return ""
	}
	d.at += l
	return string(d.p[d.at-l : d.at])
}
