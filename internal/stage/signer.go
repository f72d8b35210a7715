package stage

import (
	"encoding/binary"
	"fmt"

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

// banding cuts a signature into the job's band keys: MinHash values in
// bands of r rows, or a SimHash fingerprint's blocks. Map's signers and
// verify's count of the bands a pair collides in both go through keys, so
// the two cannot disagree.
type banding struct {
	simhash bool
	bp      bands.Params
	blocks  simhash.Blocks
}

func newBanding(p job.Params) (banding, error) {
	if p.Method == job.MethodSimHash {
		blocks, err := simhash.NewBlocks(p.Hamming)
		return banding{simhash: true, blocks: blocks}, err
	}
	return banding{bp: p.BandParams()}, nil
}

// n is the number of bands.
func (b banding) n() int {
	if b.simhash {
		return b.blocks.N()
	}
	return b.bp.Bands
}

// keys appends the band keys of a MinHash signature sig, or of a SimHash
// fingerprint fp, to dst.
func (b banding) keys(dst []uint64, sig minhash.Signature, fp uint64) []uint64 {
	if b.simhash {
		return b.blocks.Keys(dst, fp)
	}
	return bands.Keys(dst, sig, b.bp)
}

// collided returns how many bands have equal keys in a and b (the band
// keys of two documents, in band order) and the lowest such band, -1 if
// none.
func collided(a, b []uint64) (n, first int32) {
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
	sk  sketcher
	bnd banding
	sig minhash.Signature
	buf []byte // the encoded signature, reused
}

func (m *minhashSigner) counts() bool { return false }

func (m *minhashSigner) sign(hashes, keys []uint64) ([]byte, []uint64) {
	m.sig = m.sk.Sketch(m.sig, hashes)
	m.buf = appendSig(m.buf[:0], m.sig)
	return m.buf, m.bnd.keys(keys, m.sig, 0)
}

// simhashSigner signs with a 64-bit SimHash whose blocks are the bands.
type simhashSigner struct {
	bnd      banding
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
	return s.buf, s.bnd.keys(keys, nil, fp)
}

func newSigner(p job.Params) (signer, error) {
	bnd, err := newBanding(p)
	if err != nil {
		return nil, err
	}
	if p.Method == job.MethodSimHash {
		return &simhashSigner{bnd: bnd, weighted: p.SimHashWeights == job.WeightsTF}, nil
	}
	sk, err := newSketcher(p)
	if err != nil {
		return nil, err
	}
	return &minhashSigner{sk: sk, bnd: bnd}, nil
}

// judgement is what the signatures say of a candidate pair.
type judgement struct {
	estimate float64 // estimated similarity
	matches  int     // MinHash: equal signature values
	hamming  int     // SimHash distance, -1 for MinHash
	pass     bool    // the signatures put the pair at or above the threshold
}

// judge compares two decoded signatures.
func judge(p job.Params, a, b *sigEntry) judgement {
	if p.Method == job.MethodSimHash {
		d := simhash.Distance(a.fp, b.fp)
		return judgement{estimate: 1 - float64(d)/64, hamming: d, pass: d <= p.Hamming}
	}
	n := matches(a.sig, b.sig)
	est := minhash.Estimate(a.sig, b.sig)
	return judgement{estimate: est, matches: n, hamming: -1, pass: est >= p.Threshold}
}

// decodeSignature reads a stored signature into e.
func decodeSignature(p job.Params, b []byte, e *sigEntry) error {
	if p.Method == job.MethodSimHash {
		if len(b) != 8 {
			return fmt.Errorf("SimHash fingerprint of %d bytes, want 8", len(b))
		}
		e.fp = binary.LittleEndian.Uint64(b)
		return nil
	}
	sig, err := decodeSig(b)
	e.sig = sig
	return err
}

// matches counts the positions at which two signatures of equal length
// agree (0 for signatures of different lengths).
func matches(a, b minhash.Signature) int {
	if len(a) != len(b) {
		return 0
	}
	n := 0
	for i, v := range a {
		if v == b[i] {
			n++
		}
	}
	return n
}
