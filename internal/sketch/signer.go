package sketch

import (
	"encoding/binary"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/pkg/bands"
	"github.com/neardup/neardup/pkg/minhash"
	"github.com/neardup/neardup/pkg/simhash"
)

// signer turns a document's shingle hashes into the signature stored for
// verification and the band keys under which it meets its candidates.
type signer interface {
	// sign reads the hashes and returns the encoded signature (valid
	// until the next call) and the band keys appended to keys.
	sign(hashes, keys []uint64) (sig []byte, out []uint64)
	// counts reports whether sign needs every occurrence of a shingle
	// (term frequencies) rather than the sorted set.
	counts() bool
}

// Banding cuts a signature into the job's band keys: MinHash values in
// bands of r rows, or a SimHash fingerprint's blocks. Map's signers and
// verify's count of the bands a pair collides in both go through Keys, so
// the two cannot disagree.
type Banding struct {
	simhash bool
	bp      bands.Params
	blocks  simhash.Blocks
}

// NewBanding returns the banding of a job with parameters p.
func NewBanding(p job.Params) (Banding, error) {
	if p.Method == job.MethodSimHash {
		blocks, err := simhash.NewBlocks(p.Hamming)
		return Banding{simhash: true, blocks: blocks}, err
	}
	return Banding{bp: p.BandParams()}, nil
}

// N is the number of bands.
func (b Banding) N() int {
	if b.simhash {
		return b.blocks.N()
	}
	return b.bp.Bands
}

// Keys appends the band keys of sig to dst.
func (b Banding) Keys(dst []uint64, sig Signature) []uint64 {
	if b.simhash {
		return b.blocks.Keys(dst, sig.SimHash)
	}
	return bands.Keys(dst, sig.MinHash, b.bp)
}

// Collided returns how many bands have equal keys in a and b (the band
// keys of two documents, in band order) and the lowest such band, -1 if
// none.
func Collided(a, b []uint64) (n, first int32) {
	first = -1
	for i, k := range a {
		if i < len(b) && k == b[i] {
			if n == 0 {
				first = int32(i)
			}
			n++
		}
	}
	return n, first
}

// minhashSigner signs with a MinHash sketch cut into bands.
type minhashSigner struct {
	mh  minhasher
	bnd Banding
	sig minhash.Signature
	buf []byte // the encoded signature, reused
}

func (m *minhashSigner) counts() bool { return false }

func (m *minhashSigner) sign(hashes, keys []uint64) ([]byte, []uint64) {
	m.sig = m.mh.Sketch(m.sig, hashes)
	m.buf = AppendSig(m.buf[:0], m.sig)
	return m.buf, m.bnd.Keys(keys, Signature{MinHash: m.sig})
}

// simhashSigner signs with a 64-bit SimHash whose blocks are the bands.
type simhashSigner struct {
	bnd      Banding
	weighted bool
	buf      []byte // the encoded fingerprint, reused
}

func (s *simhashSigner) counts() bool { return s.weighted }

func (s *simhashSigner) sign(hashes, keys []uint64) ([]byte, []uint64) {
	var fp uint64
	if s.weighted {
		fp = simhash.FingerprintWeighted(hashes)
	} else {
		fp = simhash.Fingerprint(hashes)
	}
	s.buf = binary.LittleEndian.AppendUint64(s.buf[:0], fp)
	return s.buf, s.bnd.Keys(keys, Signature{SimHash: fp})
}

func newSigner(p job.Params) (signer, error) {
	bnd, err := NewBanding(p)
	if err != nil {
		return nil, err
	}
	if p.Method == job.MethodSimHash {
		return &simhashSigner{bnd: bnd, weighted: p.SimHashWeights == job.WeightsTF}, nil
	}
	mh, err := newMinhasher(p)
	if err != nil {
		return nil, err
	}
	return &minhashSigner{mh: mh, bnd: bnd}, nil
}
