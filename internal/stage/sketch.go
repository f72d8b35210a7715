package stage

import (
	"slices"

	"github.com/zeebo/xxh3"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/sigfile"
	"github.com/neardup/neardup/pkg/shingle"
)

// DocSketcher turns a document's text into what the map stage computes of
// it: its shingle set, its signature, its band keys and its fingerprint.
// Map and query both use it, so a queried document meets the indexed ones
// under exactly the keys they were written under. It reuses its buffers:
// not safe for concurrent use.
type DocSketcher struct {
	sh     *shingle.Shingler
	sg     signer
	sorter shingle.SetSorter
	hashes []uint64
	keys   []uint64
	multi  []uint64 // sorted multiset of shingle hashes (term-weighted signatures)
	setBuf []byte
	fpBuf  []byte // what the fingerprint covers when it is not setBuf
}

// Sketch is what a DocSketcher computed of one text. Its slices are valid
// until the sketcher's next call: copy what is kept.
type Sketch struct {
	// Tokens is the number of tokens of the text.
	Tokens int
	// Set is the sorted shingle set; empty for a text without shingles,
	// which has no signature, keys or fingerprint either.
	Set []uint64
	// SetBytes is Set as stored in a signature file (little-endian).
	SetBytes []byte
	// Sig is the encoded signature, as stored in a signature file.
	Sig []byte
	// Keys holds one band key per band, in band order.
	Keys []uint64
	// FP is the fingerprint of the exact-duplicate pass: of the set, or
	// of the sorted multiset for term-weighted signatures.
	FP xxh3.Uint128
}

// NewDocSketcher returns a sketcher for the parameters of a job.
func NewDocSketcher(p job.Params) (*DocSketcher, error) {
	sh, err := shingle.NewShingler(p.ShingleOptions())
	if err != nil {
		return nil, err
	}
	sg, err := newSigner(p)
	if err != nil {
		return nil, err
	}
	return &DocSketcher{sh: sh, sg: sg}, nil
}

// Sketch computes the sketch of text.
func (s *DocSketcher) Sketch(text []byte) Sketch {
	var out Sketch
	s.hashes, out.Tokens = s.sh.Hashes(s.hashes[:0], text)
	counts := s.sg.counts()
	if len(s.hashes) > 0 && counts {
		out.Sig, s.keys = s.sg.sign(s.hashes, s.keys[:0])
		// The signature depends on the counts too: fingerprint the
		// sorted multiset, so that one fingerprint still means one
		// signature (and whole groups in every bucket).
		s.multi = append(s.multi[:0], s.hashes...)
		slices.Sort(s.multi)
		s.fpBuf = appendSet(s.fpBuf[:0], s.multi)
	}
	out.Set = s.sorter.SortUnique(s.hashes)
	if len(out.Set) == 0 {
		return Sketch{Tokens: out.Tokens}
	}
	if !counts {
		out.Sig, s.keys = s.sg.sign(out.Set, s.keys[:0])
	}
	out.Keys = s.keys
	s.setBuf = appendSet(s.setBuf[:0], out.Set)
	out.SetBytes = s.setBuf
	if counts {
		out.FP = xxh3.Hash128(s.fpBuf)
	} else {
		out.FP = xxh3.Hash128(s.setBuf)
	}
	return out
}

// Verdict is what verification says of a pair of documents.
type Verdict struct {
	// Similarity is the exact Jaccard similarity of the shingle sets when
	// both records hold them, else Estimate.
	Similarity float64
	// Estimate is the signatures' estimate.
	Estimate float64
	// Method is "exact", or the signatures' method ("minhash" or
	// "simhash") when Similarity is the estimate.
	Method string
	// Pass reports whether the pair is at or above the threshold.
	Pass bool
}

// JudgePair verifies a pair of signature records as the verify stage
// does, at threshold t (the job's own when 0): by the exact similarity of
// their shingle sets when the job kept them (Verify "exact") and both
// records hold them, else by the signatures' estimate (with SimHash and no
// t, by the job's Hamming bound).
func JudgePair(p job.Params, t float64, a, b sigfile.Record) (Verdict, error) {
	var ea, eb sigEntry
	if err := decodeSignature(p, a.Sig, &ea); err != nil {
		return Verdict{}, err
	}
	if err := decodeSignature(p, b.Sig, &eb); err != nil {
		return Verdict{}, err
	}
	j := judge(p, &ea, &eb)
	v := Verdict{Similarity: j.estimate, Estimate: j.estimate, Method: p.Method.String(), Pass: j.pass}
	if t > 0 {
		v.Pass = j.estimate >= t
	} else {
		t = p.Threshold
	}
	if p.Verify != job.VerifyExact || len(a.Shingles) == 0 || len(b.Shingles) == 0 {
		return v, nil
	}
	sa, err := decodeSet(a.Shingles)
	if err != nil {
		return Verdict{}, err
	}
	sb, err := decodeSet(b.Shingles)
	if err != nil {
		return Verdict{}, err
	}
	v.Similarity, v.Method = shingle.Jaccard(sa, sb), "exact"
	v.Pass = v.Similarity >= t
	return v, nil
}
