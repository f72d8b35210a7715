// Package bands implements LSH banding of MinHash signatures: the
// signature is cut into b bands of r rows, each band is hashed to a key,
// and two documents become candidates when they share a band key. For two
// documents of Jaccard similarity s, that happens with probability
// 1-(1-s^r)^b (the S-curve, [Probability]); [Optimal] chooses b and r for a
// similarity threshold.
package bands

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/pkg/minhash"
)

// ErrInvalid is wrapped by the errors of this package.
var ErrInvalid = errors.New("invalid banding parameters")

// Params are the banding parameters: Bands bands of Rows signature values
// each; they use the first Bands*Rows values of a signature.
type Params struct{ Bands, Rows int }

// Validate reports whether p has at least one band of at least one row.
func (p Params) Validate() error {
	if p.Bands < 1 || p.Rows < 1 {
		return fmt.Errorf("bands: %d bands of %d rows: %w", p.Bands, p.Rows, ErrInvalid)
	}
	return nil
}

// K returns Bands*Rows, the number of signature values used.
func (p Params) K() int { return p.Bands * p.Rows }

// String formats p as "b=20,r=5".
func (p Params) String() string { return fmt.Sprintf("b=%d,r=%d", p.Bands, p.Rows) }

// Probability returns 1-(1-s^r)^b, the probability that two documents of
// Jaccard similarity s share at least one of b band keys of r rows.
func Probability(s float64, p Params) float64 {
	return -math.Expm1(float64(p.Bands) * math.Log1p(-math.Pow(s, float64(p.Rows))))
}

// missProbability returns (1-s^r)^b = 1 - Probability(s, p) without
// cancellation.
func missProbability(s float64, p Params) float64 {
	return math.Exp(float64(p.Bands) * math.Log1p(-math.Pow(s, float64(p.Rows))))
}

// ApproxThreshold returns (1/b)^(1/r), the usual approximation of the
// similarity at which the S-curve rises.
func ApproxThreshold(p Params) float64 {
	return math.Pow(1/float64(p.Bands), 1/float64(p.Rows))
}

// Steepest returns ((r-1)/(br-1))^(1/r), the similarity at which the
// S-curve is steepest (where the derivative of Probability peaks): 0 for
// r=1 and b>1, 1 for b=1 (P(s) = s^r, and P(s) = s for b=r=1).
func Steepest(p Params) float64 {
	b, r := float64(p.Bands), float64(p.Rows)
	if b*r == 1 {
		return 1 // P(s) = s: every point is equally steep
	}
	return math.Pow((r-1)/(b*r-1), 1/r)
}

// Keys appends the Bands band keys of sig to dst and returns it. Key i is
// the xxhash64 of the band index i (4 bytes, little-endian) followed by the
// Rows values sig[i*Rows:(i+1)*Rows] (4 bytes each, little-endian), so equal
// values in different bands give different keys. It does not allocate
// (beyond growing dst). An empty signature (a document without shingles)
// has no keys; a non-empty signature shorter than Bands*Rows panics.
func Keys(dst []uint64, sig minhash.Signature, p Params) []uint64 {
	if len(sig) == 0 {
		return dst
	}
	r := p.Rows
	if len(sig) < p.Bands*r {
		panic(fmt.Sprintf("bands: signature of %d values for %v", len(sig), p))
	}
	const small = 31 // rows that fit the stack buffer
	var buf [4 + 4*small + 4]byte
	if r <= small {
		// The buffer is written in 8-byte words (4 bytes for an odd last
		// value), the sizes xxhash reads, so its loads are forwarded from
		// the stores.
		n := 4 + 4*r
		for i := range p.Bands {
			band := sig[i*r : i*r+r]
			w := uint64(i) // the low half of the next 8-byte word
			j := 0
			for ; j+1 < len(band); j += 2 {
				binary.LittleEndian.PutUint64(buf[4*j:], w|uint64(band[j])<<32)
				w = uint64(band[j+1])
			}
			if j < len(band) { // r odd: the last value completes a word
				binary.LittleEndian.PutUint64(buf[4*j:], w|uint64(band[j])<<32)
			} else {
				binary.LittleEndian.PutUint32(buf[4*j:], uint32(w))
			}
			dst = append(dst, xxhash.Sum64(buf[:n]))
		}
		return dst
	}
	return keysLong(dst, sig, p)
}

// keysLong is Keys for bands of more than 31 rows, through a streaming
// digest.
func keysLong(dst []uint64, sig minhash.Signature, p Params) []uint64 {
	r := p.Rows
	var buf [128]byte
	var d xxhash.Digest
	for i := range p.Bands {
		d.Reset()
		binary.LittleEndian.PutUint32(buf[:], uint32(i))
		m := 4
		for _, v := range sig[i*r : i*r+r] {
			if m == len(buf) {
				d.Write(buf[:m])
				m = 0
			}
			binary.LittleEndian.PutUint32(buf[m:], v)
			m += 4
		}
		d.Write(buf[:m])
		dst = append(dst, d.Sum64())
	}
	return dst
}

// Partition returns key mod parts, the partition of a band key. parts
// must be positive; Partition panics otherwise.
func Partition(key uint64, parts int) int {
	if parts <= 0 {
		panic(fmt.Sprintf("bands: Partition into %d parts", parts))
	}
	return int(key % uint64(parts))
}
