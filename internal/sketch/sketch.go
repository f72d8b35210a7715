package sketch

import (
	"slices"

	"github.com/zeebo/xxh3"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/pkg/minhash"
	"github.com/neardup/neardup/pkg/shingle"
)

// Sketcher turns a document's text into what the map stage computes of
// it: its shingle set, its signature, its band keys and its fingerprint.
// Map and query both use it, so a queried document meets the indexed ones
// under exactly the keys they were written under. It reuses its buffers:
// not safe for concurrent use.
type Sketcher struct {
	sh     *shingle.Shingler
	sg     signer
	sorter shingle.SetSorter
	hashes []uint64
	keys   []uint64
	multi  []uint64 // sorted multiset of shingle hashes (term-weighted signatures)
	setBuf []byte
	fpBuf  []byte // what the fingerprint covers when it is not setBuf
}

// Sketch is what a Sketcher computed of one text. Its slices are valid
// until the sketcher's next call: copy what is kept.
type Sketch struct {
	// Tokens is the number of tokens of the text.
	Tokens int
	// Set is the sorted shingle set; empty for a text without shingles,
	// which has no signature, keys or fingerprint either.
	Set []uint64
	// SetBytes is Set as stored in a signature file (AppendSet).
	SetBytes []byte
	// Sig is the encoded signature, as stored in a signature file.
	Sig []byte
	// Keys holds one band key per band, in band order.
	Keys []uint64
	// FP is the fingerprint of the exact-duplicate pass: of the set, or
	// of the sorted multiset for term-weighted signatures.
	FP xxh3.Uint128
}

// NewSketcher returns a sketcher for the parameters of a job.
func NewSketcher(p job.Params) (*Sketcher, error) {
	sh, err := shingle.NewShingler(p.ShingleOptions())
	if err != nil {
		return nil, err
	}
	sg, err := newSigner(p)
	if err != nil {
		return nil, err
	}
	return &Sketcher{sh: sh, sg: sg}, nil
}

// Sketch computes the sketch of text.
func (s *Sketcher) Sketch(text []byte) Sketch { return s.sketch(text, true) }

// SketchSet computes the sketch of text but for SetBytes and FP (left
// empty): what verifying a document sketched again needs.
func (s *Sketcher) SketchSet(text []byte) Sketch { return s.sketch(text, false) }

// sketch computes the sketch of text, with SetBytes and FP if stored.
func (s *Sketcher) sketch(text []byte, stored bool) Sketch {
	var out Sketch
	s.hashes, out.Tokens = s.sh.Hashes(s.hashes[:0], text)
	counts := s.sg.counts()
	if len(s.hashes) > 0 && counts {
		out.Sig, s.keys = s.sg.sign(s.hashes, s.keys[:0])
		if stored {
			// The signature depends on the counts too: fingerprint the
			// sorted multiset, so that one fingerprint still means one
			// signature (and whole groups in every bucket).
			s.multi = append(s.multi[:0], s.hashes...)
			slices.Sort(s.multi)
			s.fpBuf = AppendSet(s.fpBuf[:0], s.multi)
		}
	}
	out.Set = s.sorter.SortUnique(s.hashes)
	if len(out.Set) == 0 {
		return Sketch{Tokens: out.Tokens}
	}
	if !counts {
		out.Sig, s.keys = s.sg.sign(out.Set, s.keys[:0])
	}
	out.Keys = s.keys
	if !stored {
		return out
	}
	s.setBuf = AppendSet(s.setBuf[:0], out.Set)
	out.SetBytes = s.setBuf
	if counts {
		out.FP = xxh3.Hash128(s.fpBuf)
	} else {
		out.FP = xxh3.Hash128(s.setBuf)
	}
	return out
}

// minhasher computes a MinHash signature from shingle hashes.
type minhasher interface {
	Sketch(dst minhash.Signature, hashes []uint64) minhash.Signature
}

// newMinhasher returns the job's MinHash sketch: Dart, or Classic.
func newMinhasher(p job.Params) (minhasher, error) {
	if p.Sketch == job.SketchClassic {
		return minhash.NewClassic(p.K, p.Seed)
	}
	return minhash.NewDart(p.K, p.Seed)
}
