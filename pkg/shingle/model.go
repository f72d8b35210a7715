package shingle

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tokens returns the tokens of text, the reference model of the tokenizer
// that o names ([Shingler.Hashes] is the fast path). The text is
// lower-cased with strings.ToLower and each rune goes through the optional
// normalisations of o; then, with TokenizeWordsOnly, tokens are the maximal
// runs of runes for which unicode.IsLetter or unicode.IsDigit holds. With
// TokenizeScripts (the default):
//
//   - a letter or digit of a script written without spaces (Han with 〇,
//     the Suzhou numerals and 〆, Hiragana, Katakana with its prolonged
//     sound mark U+30FC and the kana repeat marks, Bopomofo, Thai, Lao,
//     Khmer, Myanmar, Tibetan) or of Hangul is a token of its own; the
//     kind of a digit is decided before DigitsToZero maps it;
//   - any other letter or digit continues the current token if that is a
//     word (not a token of one character), else starts a word;
//   - a combining mark (Mn, Mc, Me), ZWNJ, ZWJ, or a conjoining Hangul
//     vowel or final consonant continues the current token, whatever its
//     kind (a character token becomes the character and its marks); with
//     no current token it is dropped;
//   - anything else ends the current token.
//
// In character mode (o.CharGrams > 0) letters of the scripts without
// spaces are letters like any other.
func Tokens(text string, o Options) []string {
	var toks []string
	tokenize(text, o, func(tok []byte, _ Span, _ bool) { toks = append(toks, string(tok)) })
	return toks
}

// tokenize calls emit with every token of text (see [Tokens]), in order,
// its span, and whether it is a token of one character (kindChar and its
// marks). A rune is lower-cased with unicode.ToLower (as
// strings.ToLower does; invalid UTF-8 is U+FFFD, a separator). The span
// of a token runs from its first rune to its last rune or deleted mark.
func tokenize(text string, o Options, emit func(tok []byte, sp Span, single bool)) {
	var cur []byte
	start, last := -1, 0
	single := false // cur is a token of one character (and its marks)
	end := func() {
		if len(cur) > 0 {
			emit(cur, Span{start, last}, single)
		}
		start, cur, single = -1, cur[:0], false
	}
	for i, r := range text {
		w := utf8.RuneLen(r)
		if r == utf8.RuneError {
			_, w = utf8.DecodeRuneInString(text[i:])
		}
		low := unicode.ToLower(r)
		r = o.mapLowered(low)
		if r < 0 {
			if start >= 0 {
				last = i + w
			}
			continue
		}
		// The kind is the rune's own, before DigitsToZero: a Thai digit
		// stays a token of its own.
		switch o.kindOf(low) {
		case kindWord:
			if single {
				end()
			}
		case kindChar:
			end()
			single = true
		case kindExtend:
			if len(cur) == 0 {
				continue // nothing to continue
			}
		default:
			end()
			continue
		}
		if start < 0 {
			start = i
		}
		cur = utf8.AppendRune(cur, r)
		last = i + w
	}
	end()
}

// Shingles returns the shingles of text in document order, repeats kept.
// In word mode they are the k-grams of [Tokens] joined by one space; a text
// with 1..k-1 tokens has one shingle made of all its tokens. Of the k-grams
// made only of one-character tokens (k characters of a script written
// without spaces), which would be one per character, about two
// thirds are kept, by winnowing: in each maximal run of them, the one of least hash
// in every window of CharWindow consecutive ones. The choice depends only
// on the characters around a shingle, so two texts keep the same
// shingles where they agree, and a run always keeps at least one. In character
// mode (o.CharGrams = n > 0) they are the n-rune substrings of the tokens
// joined by single spaces; a shorter non-empty stream is one shingle. A text
// without tokens has no shingle.
func Shingles(text string, o Options) []string {
	var toks []string
	var singles []bool
	tokenize(text, o, func(tok []byte, _ Span, single bool) {
		toks = append(toks, string(tok))
		singles = append(singles, single)
	})
	if len(toks) == 0 {
		return nil
	}
	k := o.grams()
	if o.CharGrams > 0 {
		runes := []rune(strings.Join(toks, " "))
		if len(runes) <= k {
			return []string{string(runes)}
		}
		out := make([]string, 0, len(runes)-k+1)
		for i := 0; i+k <= len(runes); i++ {
			out = append(out, string(runes[i:i+k]))
		}
		return out
	}
	if len(toks) <= k {
		return []string{strings.Join(toks, " ")}
	}
	all := make([]string, 0, len(toks)-k+1)
	hashes := make([]uint64, 0, len(toks)-k+1)
	for i := 0; i+k <= len(toks); i++ {
		all = append(all, strings.Join(toks[i:i+k], " "))
		hashes = append(hashes, HashString(all[i], o))
	}
	var out []string
	for _, i := range winnowed(hashes, charShingles(singles, k), CharWindow) {
		out = append(out, all[i])
	}
	return out
}

// CharWindow is the window of the winnowing of character shingles: of
// every CharWindow consecutive shingles made only of one-character tokens,
// the one of least hash is kept (see [Shingles]).
const CharWindow = 2

// charShingles reports, for each k-gram of tokens, whether its k tokens
// are all tokens of one character.
func charShingles(singles []bool, k int) []bool {
	out := make([]bool, len(singles)-k+1)
	for i := range out {
		out[i] = !slices.Contains(singles[i:i+k], false)
	}
	return out
}

// winnowed returns the positions of the shingles kept, in order: every
// shingle not made only of one-character tokens and, of each maximal run
// of those, the shingle of least hash (the rightmost of equal ones) of
// every window of w consecutive shingles, or of the whole run when it is
// shorter (Schleimer, Wilkerson and Aiken, "Winnowing", 2003).
func winnowed(hashes []uint64, char []bool, w int) []int {
	keep := make([]bool, len(hashes))
	for i := 0; i < len(hashes); {
		if !char[i] {
			keep[i] = true
			i++
			continue
		}
		j := i
		for j < len(hashes) && char[j] {
			j++
		}
		for s := i; s == i || s+w <= j; s++ {
			least := s
			for p := s; p < min(s+w, j); p++ {
				if hashes[p] <= hashes[least] {
					least = p
				}
			}
			keep[least] = true
		}
		i = j
	}
	var out []int
	for i, kept := range keep {
		if kept {
			out = append(out, i)
		}
	}
	return out
}

// SortUnique sorts h in place, removes repeats and returns the shortened
// slice: the document's shingle set as used by [Jaccard].
func SortUnique(h []uint64) []uint64 {
	slices.Sort(h)
	return slices.Compact(h)
}

// Jaccard returns |a ∩ b| / |a ∪ b| for two sorted, repeat-free sets (as
// returned by [SortUnique]), of 64-bit hashes or of narrower ones. It is
// defined as 0 when both sets are empty: two documents without shingles
// are not near-duplicates of each other.
func Jaccard[T uint32 | uint64](a, b []T) float64 {
	return JaccardCount(Intersection(a, b), len(a), len(b))
}

// JaccardCount returns the Jaccard similarity of two sets of na and nb
// values with inter values in common, as [Jaccard] computes it from the
// sets (0 when both are empty): the same float64 for the same counts.
func JaccardCount(inter, na, nb int) float64 {
	if na == 0 && nb == 0 {
		return 0
	}
	return float64(inter) / float64(na+nb-inter)
}

// AppendNormalized appends to dst the tokens of text, as [Tokens] gives
// them (lower-cased, o's normalisations applied, cut by o's tokenizer),
// joined by single spaces, and returns the extended slice: the text as the
// shingles see it, with case, punctuation and spacing (and with o's
// options, digits and diacritics) ironed out. A text without tokens
// appends nothing. It allocates nothing beyond dst's growth.
func AppendNormalized(dst []byte, text string, o Options) []byte {
	if isASCII(text) {
		return appendNormalizedASCII(dst, text, o)
	}
	first := true
	tokenize(text, o, func(tok []byte, _ Span, _ bool) {
		if !first {
			dst = append(dst, ' ')
		}
		first = false
		dst = append(dst, tok...)
	})
	return dst
}

// appendNormalizedASCII is AppendNormalized of an ASCII text, a byte at a
// time: there every token is a maximal run of letters and digits (no
// ASCII byte is a mark, a joiner or a letter of a script without spaces),
// lower-cased, its digits '0' with DigitsToZero (diacritics are not
// ASCII). TestAppendNormalizedASCII checks it against the reference.
func appendNormalizedASCII(dst []byte, text string, o Options) []byte {
	start, in := len(dst), false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case 'a' <= c && c <= 'z':
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case '0' <= c && c <= '9':
			if o.DigitsToZero {
				c = '0'
			}
		default:
			in = false
			continue
		}
		if !in && len(dst) > start {
			dst = append(dst, ' ')
		}
		in = true
		dst = append(dst, c)
	}
	return dst
}
