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

	// The fields below are off at their zero values, which keep the
	// corpus of DefaultConfig byte-identical to what it always was.

	// TargetJaccardMin, when positive, grades the near copies of regular
	// families instead of mutating them at EditRateMin..EditRateMax: each
	// near copy draws a target similarity to its base uniformly from
	// [TargetJaccardMin, 1] and receives as many word edits
	// (substitutions, insertions, deletions, at random positions) as make
	// its expected word 5-gram Jaccard similarity to the base that target.
	// Base-to-copy pairs then cover [TargetJaccardMin, 1] evenly.
	TargetJaccardMin float64

	// ShortDupFraction is the fraction of documents in planted families of
	// short documents: a base of ShortMinWords to ShortMaxWords words (a
	// fragment of one pooled sentence, like a short document) plus near
	// copies with one or two word edits and exact copies (drawn together
	// with the regular families' exact copies, see ExactFraction).
	ShortDupFraction float64

	// TemplatePages is the number of pages of the template family: every
	// page is one shared template of TemplateWords words, cut into a
	// header (its first quarter) and a footer, around a unique part of
	// TemplateUniqueMinWords to TemplateUniqueMaxWords words. The unique
	// length is min + (max-min)·x² for x uniform in [0, 1], so short unique
	// parts are more common. Two pages with unique parts of u and v words
	// share TemplateWords-8 shingles out of TemplateWords+u+v, so with a
	// 240-word template and unique parts of 2 to 140 words their Jaccard
	// similarity spreads over 0.45 to 0.95. 0 means no template family.
	TemplatePages int
	// TemplateWords is the length of the shared template in words.
	TemplateWords int
	// TemplateFamilies splits the template pages into that many families,
	// each with its own template of TemplateWords words: page k belongs to
	// family k mod TemplateFamilies. 0 and 1 both mean one family (the
	// corpus of 0 is the corpus of 1).
	TemplateFamilies int
	// TemplateUniqueMinWords and TemplateUniqueMaxWords bound the length of
	// a template page's unique part.
	TemplateUniqueMinWords, TemplateUniqueMaxWords int
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

// DefaultTemplatePages is the size of AccuracyConfig's template family
// for corpora of at least ten times as many documents.
const DefaultTemplatePages = 1000

// AccuracyConfig returns a configuration for measuring the accuracy of
// near-duplicate detection, for n documents and the given seed. It mixes
// lengths and similarities on purpose:
//
//   - 15% short documents of 5 to 39 words, and 15% in families of short
//     documents (a short base, near copies with one or two word edits,
//     exact copies), so that about 30% of documents have under 40 words;
//   - 20% in regular families of 2 to 4 documents (2 to 40 sentences)
//     whose near copies are graded (TargetJaccardMin 0.45), so that
//     base-to-copy similarities cover 0.45 to 1 evenly;
//   - 6% exact copies, taken from the copies of both kinds of family;
//   - a template family of DefaultTemplatePages pages (at most n/10): a
//     240-word template around a unique part of 2 to 140 words;
//   - 0.2% empty documents; the rest are unique documents of 2 to 40
//     sentences.
func AccuracyConfig(n int, seed uint64) Config {
	c := DefaultConfig(n, seed)
	c.DupFraction = 0.20
	c.ExactFraction = 0.06
	c.MinCluster, c.MaxCluster = 2, 4
	c.ShortFraction = 0.15
	c.ShortMinWords, c.ShortMaxWords = 5, 39
	c.ShortDupFraction = 0.15
	c.EmptyFraction = 0.002
	c.MinSentences, c.MaxSentences = 2, 40
	c.TargetJaccardMin = 0.45
	c.TemplatePages = min(DefaultTemplatePages, max(n, 0)/10)
	c.TemplateWords = 240
	c.TemplateUniqueMinWords, c.TemplateUniqueMaxWords = 2, 140
	return c
}

// TemplatedConfig returns a configuration of long templated pages, for
// measuring verification at low thresholds: 5% of documents in regular
// planted families, 1% short ones, and the rest pages of template families
// of about 150 pages each. A page is a 1,500-word template of its family
// around a unique part of 100 to 900 words (1,600 to 2,400 words in all),
// so two pages of a family have a Jaccard similarity of about
// 1492/(1500+u+v): 0.45 to 0.88, most of them between 0.5 and 0.8.
func TemplatedConfig(n int, seed uint64) Config {
	c := DefaultConfig(n, seed)
	c.DupFraction, c.ExactFraction = 0.05, 0.01
	c.ShortFraction = 0.01
	c.TemplateWords = 1500
	c.TemplateUniqueMinWords, c.TemplateUniqueMaxWords = 100, 900
	c.TemplatePages = c.templateRoom()
	c.TemplateFamilies = max(1, (c.TemplatePages+TemplatedFamilyPages/2)/TemplatedFamilyPages)
	return c
}

// TemplatedFamilyPages is the size of a template family of
// TemplatedConfig.
const TemplatedFamilyPages = 150

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
		{"TargetJaccardMin", c.TargetJaccardMin},
		{"ShortDupFraction", c.ShortDupFraction},
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
	case c.DupFraction+c.ShortFraction+c.EmptyFraction+c.ShortDupFraction > 1:
		return errors.New("DupFraction + ShortFraction + EmptyFraction + ShortDupFraction exceeds 1")
	case c.TemplatePages < 0:
		return fmt.Errorf("TemplatePages = %d: must not be negative", c.TemplatePages)
	case c.TemplatePages > 0 && c.TemplateWords < 10:
		return fmt.Errorf("TemplateWords = %d: a template needs at least 10 words", c.TemplateWords)
	case c.TemplatePages > 0 && (c.TemplateUniqueMinWords < 0 || c.TemplateUniqueMaxWords < c.TemplateUniqueMinWords):
		return fmt.Errorf("template unique part range [%d, %d] words: need 0 <= min <= max", c.TemplateUniqueMinWords, c.TemplateUniqueMaxWords)
	case c.TemplateFamilies < 0 || c.TemplatePages > 0 && c.TemplateFamilies > c.TemplatePages:
		return fmt.Errorf("TemplateFamilies = %d: need 0 <= TemplateFamilies <= TemplatePages (%d)", c.TemplateFamilies, c.TemplatePages)
	case c.TemplatePages > 0 && c.TemplatePages > c.templateRoom():
		return fmt.Errorf("TemplatePages = %d: more than the %d documents the other kinds leave", c.TemplatePages, c.templateRoom())
	}
	return nil
}

// templateRoom is the number of documents left for the template family
// once the other kinds have their share.
func (c Config) templateRoom() int {
	return max(0, c.N-count(c.N, c.DupFraction)-count(c.N, c.ShortFraction)-count(c.N, c.EmptyFraction)-count(c.N, c.ShortDupFraction))
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
