package corpus

import (
	"errors"
	"fmt"
	"math"
)

// Config controls the shape of a generated corpus. The zero value is not
// useful; start from DefaultConfig and override fields.
type Config struct {
	// N is the number of documents.
	N int
	// Seed determines every random choice; the same Seed, Config and Pool
	// always give the same documents.
	Seed uint64

	// DupFraction is the fraction of documents that belong to a planted
	// family (a base document plus its near and exact copies).
	DupFraction float64
	// ExactFraction is the fraction of documents that are byte-identical
	// copies of their family's base. Exact copies are taken from the
	// copies of the planted families, so ExactFraction should stay well
	// below DupFraction.
	ExactFraction float64
	// MinCluster and MaxCluster bound the size of a planted family,
	// counting its base document.
	MinCluster, MaxCluster int

	// ShortFraction is the fraction of short documents of ShortMinWords
	// to ShortMaxWords words, each a fragment of one pooled sentence.
	ShortFraction float64
	// ShortMinWords and ShortMaxWords bound the length of short documents.
	ShortMinWords, ShortMaxWords int
	// EmptyFraction is the fraction of empty or punctuation-only documents.
	EmptyFraction float64

	// MinSentences and MaxSentences bound the number of sentences in a
	// regular (unique or base) document.
	MinSentences, MaxSentences int

	// EditRateMin and EditRateMax bound, as a fraction of a document's
	// words, how many words each word-level mutation (substitution,
	// insertion, deletion) of a near copy touches. Every chosen mutation
	// touches at least one word. A 1% edit rate already changes about 5%
	// of a document's word 5-gram shingles, so rates of a few percent
	// push copy-to-copy Jaccard similarity well below 0.8.
	EditRateMin, EditRateMax float64
}

// DefaultConfig returns the default configuration for n documents and the
// given seed: 30% of documents in planted families of 2 to 8, 5% exact
// copies, 3% short documents, 0.1% empty ones, regular documents of 10 to
// 40 sentences, and word-level mutations touching 0.1% to 0.5% of words.
func DefaultConfig(n int, seed uint64) Config {
	return Config{
		N:             n,
		Seed:          seed,
		DupFraction:   0.30,
		ExactFraction: 0.05,
		MinCluster:    2,
		MaxCluster:    8,
		ShortFraction: 0.03,
		ShortMinWords: 5,
		ShortMaxWords: 30,
		EmptyFraction: 0.001,
		MinSentences:  10,
		MaxSentences:  40,
		EditRateMin:   0.001,
		EditRateMax:   0.005,
	}
}

// Validate reports the first inconsistency in c.
func (c Config) Validate() error {
	fractions := []struct {
		name string
		v    float64
	}{
		{"DupFraction", c.DupFraction},
		{"ExactFraction", c.ExactFraction},
		{"ShortFraction", c.ShortFraction},
		{"EmptyFraction", c.EmptyFraction},
		{"EditRateMin", c.EditRateMin},
		{"EditRateMax", c.EditRateMax},
	}
	for _, f := range fractions {
		if math.IsNaN(f.v) || f.v < 0 || f.v > 1 {
			return fmt.Errorf("%s = %v: must be within [0, 1]", f.name, f.v)
		}
	}
	switch {
	case c.N < 0:
		return fmt.Errorf("N = %d: must not be negative", c.N)
	case c.N > math.MaxInt32:
		return fmt.Errorf("N = %d: must be at most %d", c.N, math.MaxInt32)
	case c.MinCluster < 2 || c.MaxCluster < c.MinCluster:
		return fmt.Errorf("cluster size range [%d, %d]: need 2 <= MinCluster <= MaxCluster", c.MinCluster, c.MaxCluster)
	case c.ShortMinWords < 1 || c.ShortMaxWords < c.ShortMinWords:
		return fmt.Errorf("short document range [%d, %d] words: need 1 <= ShortMinWords <= ShortMaxWords", c.ShortMinWords, c.ShortMaxWords)
	case c.MinSentences < 1 || c.MaxSentences < c.MinSentences:
		return fmt.Errorf("sentence range [%d, %d]: need 1 <= MinSentences <= MaxSentences", c.MinSentences, c.MaxSentences)
	case c.EditRateMax < c.EditRateMin:
		return fmt.Errorf("edit rate range [%v, %v]: EditRateMax is below EditRateMin", c.EditRateMin, c.EditRateMax)
	case c.DupFraction+c.ShortFraction+c.EmptyFraction > 1:
		return errors.New("DupFraction + ShortFraction + EmptyFraction exceeds 1")
	}
	return nil
}

// count returns round(n*frac) without fused floating-point operations, so
// the result is the same on every platform.
func count(n int, frac float64) int {
	return int(math.Round(float64(float64(n) * frac)))
}

// basisPoints converts a fraction to integer hundredths of a percent.
func basisPoints(frac float64) int {
	return int(math.Round(float64(frac * 10000)))
}
