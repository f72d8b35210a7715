package job

import (
	"fmt"
	"slices"
	"strings"

	"github.com/neardup/neardup/pkg/shingle"
)

// The modes of a job are enums: string types whose values are spelt as
// their flags take them and as params have always been encoded in JSON,
// so that nothing written by an earlier version needs migrating. A pointer
// to each is a flag.Value (String and Set); Check reports a value that is
// none of the type's (one read from the JSON of a newer version, or set
// in code), naming its flag as Resolve does.

// Method is how documents are sketched and paired.
type Method string

// The methods.
const (
	// MethodMinHash pairs documents by the Jaccard similarity of their
	// shingle sets, with candidates from banded MinHash signatures.
	MethodMinHash Method = "minhash"
	// MethodSimHash pairs documents by the Hamming distance of their
	// 64-bit SimHash fingerprints, with candidates by blocks of bits.
	MethodSimHash Method = "simhash"
)

// String returns m as --method takes it.
func (m Method) String() string { return string(m) }

// Set sets m to the method s names.
func (m *Method) Set(s string) error { return set(m, s) }

// Check reports whether m is a method.
func (m Method) Check() error { return oneOf("--method", m, MethodMinHash, MethodSimHash) }

// Sketch is how MinHash signatures are computed.
type Sketch string

// The MinHash sketches.
const (
	// SketchDart takes K independent values from a Poisson process of
	// darts, in O(n + K log K).
	SketchDart Sketch = "dart"
	// SketchClassic takes K multiply-shift permutations, in O(nK).
	SketchClassic Sketch = "classic"
)

// String returns s as --sketch takes it.
func (s Sketch) String() string { return string(s) }

// Set sets s to the sketch v names.
func (s *Sketch) Set(v string) error { return set(s, v) }

// Check reports whether s is a sketch.
func (s Sketch) Check() error { return oneOf("--sketch", s, SketchDart, SketchClassic) }

// Weights is how SimHash weighs a document's shingles.
type Weights string

// The SimHash weights.
const (
	// WeightsNone weighs every distinct shingle alike.
	WeightsNone Weights = "none"
	// WeightsTF weighs a shingle by its term frequency in the document.
	WeightsTF Weights = "tf"
)

// String returns w as --simhash-weights takes it.
func (w Weights) String() string { return string(w) }

// Set sets w to the weights s names.
func (w *Weights) Set(s string) error { return set(w, s) }

// Check reports whether w is a weighting.
func (w Weights) Check() error { return oneOf("--simhash-weights", w, WeightsNone, WeightsTF) }

// Verify is how candidate pairs are verified.
type Verify string

// The verifications.
const (
	// VerifyExact computes the Jaccard similarity of the shingle sets
	// (kept for it by the map stage).
	VerifyExact Verify = "exact"
	// VerifyEstimate takes the signatures' estimate.
	VerifyEstimate Verify = "estimate"
)

// String returns v as --verify takes it.
func (v Verify) String() string { return string(v) }

// Set sets v to the verification s names.
func (v *Verify) Set(s string) error { return set(v, s) }

// Check reports whether v is a verification.
func (v Verify) Check() error { return oneOf("--verify", v, VerifyExact, VerifyEstimate) }

// Gather is how verify tasks get the signatures of their candidates'
// documents.
type Gather string

// The ways of gathering signatures.
const (
	// GatherAuto is resolved by a job, with AutoGather, to GatherSets,
	// GatherOn or GatherOff.
	GatherAuto Gather = "auto"
	// GatherOn gets them through the gather stage (sequential reads only).
	GatherOn Gather = "on"
	// GatherOff reads them by random access to every chunk's signature
	// file.
	GatherOff Gather = "off"
	// GatherSets has map keep each document's record (id, url, signature
	// and 64-bit shingle set) in a work file of its chunk (SetWorkFile)
	// beside the text store, which verify tasks read by random access:
	// nothing is sketched twice and no gather stage runs, for a work area
	// of about 1.7 bytes per byte of text until verify is done.
	GatherSets Gather = "sets"
)

// String returns g as --gather takes it.
func (g Gather) String() string { return string(g) }

// Set sets g to the way s names.
func (g *Gather) Set(s string) error { return set(g, s) }

// Check reports whether g is a way of gathering.
func (g Gather) Check() error {
	return oneOf("--gather", g, GatherAuto, GatherOn, GatherOff, GatherSets)
}

// Tokenizer names the rule that cuts text into tokens, a
// shingle.Tokenizer, by its String. Params hold the name rather than the
// shingle.Tokenizer so that params naming a rule this version does not
// know (made by a newer one) still decode, and say which (Rule makes it
// an invalid document model, which shingle.NewShingler refuses), and so
// that params without one, made before it was a parameter, can be told
// apart (UnmarshalJSON reads them as TokenizeWordsOnly).
type Tokenizer string

// The tokenizers, by the names of shingle.TokenizeScripts and
// shingle.TokenizeWordsOnly.
const (
	// TokenizeScripts cuts words in the scripts written with spaces, and
	// one token per character in those written without.
	TokenizeScripts Tokenizer = "scripts"
	// TokenizeWordsOnly makes a token of every run of letters and digits,
	// the rule before scripts.
	TokenizeWordsOnly Tokenizer = "words-only"
)

// String returns t as --tokenizer takes it.
func (t Tokenizer) String() string { return string(t) }

// Set sets t to the tokenizer s names.
func (t *Tokenizer) Set(s string) error { return set(t, s) }

// Check reports whether t names a tokenizer.
func (t Tokenizer) Check() error {
	return oneOf("--tokenizer", t, TokenizeScripts, TokenizeWordsOnly)
}

// Rule is the shingle.Tokenizer t names; an unknown name gives an invalid
// one, which shingle.NewShingler refuses.
func (t Tokenizer) Rule() shingle.Tokenizer {
	r, err := shingle.ParseTokenizer(string(t))
	if err != nil {
		return shingle.Tokenizer(0xff)
	}
	return r
}

// enum is what the mode types have in common.
type enum interface {
	~string
	Check() error
}

// set sets *v to s if s is a value of T; else it leaves *v as it is.
func set[T enum](v *T, s string) error {
	if err := T(s).Check(); err != nil {
		return err
	}
	*v = T(s)
	return nil
}

// oneOf reports, naming flag, that v is none of values, as in
// `--gather must be auto, on or off, not "x"`; nil if it is one.
func oneOf[T ~string](flag string, v T, values ...T) error {
	if slices.Contains(values, v) {
		return nil
	}
	names := make([]string, len(values))
	for i, x := range values {
		names[i] = string(x)
	}
	list := names[len(names)-1]
	if len(names) > 1 {
		list = strings.Join(names[:len(names)-1], ", ") + " or " + list
	}
	return fmt.Errorf("%s must be %s, not %q", flag, list, string(v))
}
