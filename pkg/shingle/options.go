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
	// the token stream joined by single spaces; a stream shorter than n
	// runes is one shingle. 0 means word k-grams. In this mode runs of a
	// script written without spaces are not split into one token per
	// character.
	CharGrams int
	// Tokenizer is the rule that cuts text into tokens: TokenizeScripts
	// (the zero value and the default) or TokenizeWordsOnly (the rule of
	// neardup before it learnt scripts, kept to reproduce earlier results).
	Tokenizer Tokenizer
}

// Tokenizer is a rule that cuts text into tokens (see the package doc).
type Tokenizer uint8

// The tokenizers.
const (
	// TokenizeScripts makes words of the scripts written with spaces
	// (combining marks and joiners belong to the word they follow) and one
	// token of every character of the scripts written without spaces (Han,
	// Hiragana, Katakana, Bopomofo, Thai, Lao, Khmer, Myanmar, Tibetan)
	// and of Hangul, whose words are short.
	TokenizeScripts Tokenizer = iota
	// TokenizeWordsOnly makes a token of every maximal run of letters and
	// digits, whatever the script: combining marks separate tokens, and a
	// clause of Chinese is one token.
	TokenizeWordsOnly
)

// numTokenizers is the number of tokenizers.
const numTokenizers = 2

// String returns the name of t: "scripts" or "words-only".
func (t Tokenizer) String() string {
	switch t {
	case TokenizeScripts:
		return "scripts"
	case TokenizeWordsOnly:
		return "words-only"
	}
	return fmt.Sprintf("Tokenizer(%d)", uint8(t))
}

// ParseTokenizer returns the tokenizer named name ("scripts" or
// "words-only").
func ParseTokenizer(name string) (Tokenizer, error) {
	for t := range Tokenizer(numTokenizers) {
		if t.String() == name {
			return t, nil
		}
	}
	return 0, fmt.Errorf("shingle: tokenizer %q, want scripts or words-only: %w", name, ErrInvalidOptions)
}

// Validate reports whether o is usable.
func (o Options) Validate() error {
	if o.Words < 0 || o.Words > MaxGrams {
		return fmt.Errorf("shingle: Words = %d, want 0..%d: %w", o.Words, MaxGrams, ErrInvalidOptions)
	}
	if o.CharGrams < 0 || o.CharGrams > MaxGrams {
		return fmt.Errorf("shingle: CharGrams = %d, want 0..%d: %w", o.CharGrams, MaxGrams, ErrInvalidOptions)
	}
	if o.Tokenizer >= numTokenizers {
		return fmt.Errorf("shingle: %v: %w", o.Tokenizer, ErrInvalidOptions)
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

// isTokenRune reports whether r is a letter or a digit.
func isTokenRune(r rune) bool {
	if r < 0x80 {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// kind is what a rune is to the tokenizer.
type kind uint8

const (
	kindSeparator kind = iota // ends the current token
	kindWord                  // a letter or digit of a word
	kindChar                  // a letter or digit that is a token of its own
	kindExtend                // a mark or joiner: continues the current token
)

// isUnspaced reports whether r belongs to a script whose letters and
// digits are tokens of one character each: those written without spaces
// between words, and Hangul.
func isUnspaced(r rune) bool {
	if r == 0x30FC || r == 0xFF70 {
		// The prolonged sound mark of Katakana (script Common), a
		// character of its own like the kana it lengthens.
		return true
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Bopomofo, unicode.Hangul,
		unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar, unicode.Tibetan)
}

// kindOf returns what the lower-cased, normalised rune r is under o's
// tokenizer.
func (o Options) kindOf(r rune) kind {
	if o.Tokenizer == TokenizeWordsOnly {
		if isTokenRune(r) {
			return kindWord
		}
		return kindSeparator
	}
	if r < 0x300 { // below the combining marks: no mark, no unspaced script
		if isTokenRune(r) {
			return kindWord
		}
		return kindSeparator
	}
	switch {
	case r == 0x200C || r == 0x200D: // ZWNJ, ZWJ
		return kindExtend
	case r >= 0x1160 && r <= 0x11FF, r >= 0xD7B0 && r <= 0xD7FF:
		// Conjoining Hangul vowels and final consonants: part of the
		// syllable their leading consonant starts.
		return kindExtend
	case unicode.In(r, unicode.Mn, unicode.Mc, unicode.Me):
		return kindExtend
	case r >= 0x3006 && r <= 0x3007, r >= 0x3021 && r <= 0x3029, r >= 0x3031 && r <= 0x3035, r >= 0x3038 && r <= 0x303A:
		// The ideographic number zero 〇 and the Suzhou numerals (Nl),
		// the closing mark 〆 and the kana repeat marks: characters of
		// their own among Han and Kana.
		if o.CharGrams > 0 {
			return kindWord
		}
		return kindChar
	case !isTokenRune(r):
		return kindSeparator
	case o.CharGrams == 0 && isUnspaced(r):
		return kindChar
	}
	return kindWord
}
