package shingle

import (
	"errors"
	"fmt"
	"unicode"
)

// DefaultWords is the number of words per shingle used when Options.Words is 0.
const DefaultWords = 5

// MaxGrams is the largest accepted value of Options.Words and Options.CharGrams.
const MaxGrams = 64

// ErrInvalidOptions is wrapped by the errors of [Options.Validate].
var ErrInvalidOptions = errors.New("invalid shingle options")

// Options selects how text becomes shingles. The zero value means word
// 5-grams with no normalisation beyond lower-casing.
type Options struct {
	// Words is the number of words per shingle (k); 0 means DefaultWords.
	// It is ignored when CharGrams > 0.
	Words int
	// DigitsToZero maps every decimal digit (every rune for which
	// unicode.IsDigit holds, after lower-casing) to '0'.
	DigitsToZero bool
	// StripDiacritics removes diacritics, as NFD decomposition followed by
	// removal of the combining marks would: precomposed Latin letters
	// (U+00C0-U+024F and U+1E00-U+1EFF) whose canonical decomposition is an
	// ASCII letter plus combining marks become that letter, and combining
	// diacritical marks (U+0300-U+036F, U+1AB0-U+1AFF, U+1DC0-U+1DFF,
	// U+20D0-U+20FF, U+FE20-U+FE2F) are deleted, so they neither belong to a
	// token nor separate tokens. Letters of other scripts keep their marks
	// when precomposed. Letters without a canonical decomposition (ø, ł, ß,
	// æ) are kept.
	StripDiacritics bool
	// CharGrams, if > 0, makes shingles the character n-grams (n runes) of
	// the token stream joined by single spaces, for languages written
	// without spaces; a stream shorter than n runes is one shingle. 0 means
	// word k-grams.
	CharGrams int
}

// Validate reports whether o is usable.
func (o Options) Validate() error {
	if o.Words < 0 || o.Words > MaxGrams {
		return fmt.Errorf("shingle: Words = %d, want 0..%d: %w", o.Words, MaxGrams, ErrInvalidOptions)
	}
	if o.CharGrams < 0 || o.CharGrams > MaxGrams {
		return fmt.Errorf("shingle: CharGrams = %d, want 0..%d: %w", o.CharGrams, MaxGrams, ErrInvalidOptions)
	}
	return nil
}

// grams is the number of units (words or runes) per shingle.
func (o Options) grams() int {
	if o.CharGrams > 0 {
		return o.CharGrams
	}
	if o.Words == 0 {
		return DefaultWords
	}
	return o.Words
}

// mapLowered applies the optional normalisations to a rune that has already
// been lower-cased. It returns -1 if the rune is to be deleted.
func (o Options) mapLowered(r rune) rune {
	if o.StripDiacritics {
		if isCombiningMark(r) {
			return -1
		}
		r = stripLatin(r)
	}
	if o.DigitsToZero && r >= '0' && (r <= '9' || (r >= 0x80 && unicode.IsDigit(r))) {
		r = '0'
	}
	return r
}

// isTokenRune reports whether r belongs to a token.
func isTokenRune(r rune) bool {
	if r < 0x80 {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}
