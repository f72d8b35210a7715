package shingle

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// Tokens returns the tokens of text: text lower-cased with strings.ToLower,
// then split into the maximal runs of runes for which unicode.IsLetter or
// unicode.IsDigit holds, after the optional normalisations of o. It is the
// reference model; [Shingler.Hashes] is the fast path.
func Tokens(text string, o Options) []string {
	lower := strings.ToLower(text)
	var toks []string
	var cur []byte
	for _, r := range lower {
		r = o.mapLowered(r)
		if r < 0 {
			continue
		}
		if isTokenRune(r) {
			cur = utf8.AppendRune(cur, r)
			continue
		}
		if len(cur) > 0 {
			toks = append(toks, string(cur))
			cur = cur[:0]
		}
	}
	if len(cur) > 0 {
		toks = append(toks, string(cur))
	}
	return toks
}

// Shingles returns the shingles of text in document order, repeats kept.
// In word mode they are the k-grams of [Tokens] joined by one space; a text
// with 1..k-1 tokens has one shingle made of all its tokens. In character
// mode (o.CharGrams = n > 0) they are the n-rune substrings of the tokens
// joined by single spaces; a shorter non-empty stream is one shingle. A text
// without tokens has no shingle.
func Shingles(text string, o Options) []string {
	toks := Tokens(text, o)
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
	out := make([]string, 0, len(toks)-k+1)
	for i := 0; i+k <= len(toks); i++ {
		out = append(out, strings.Join(toks[i:i+k], " "))
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
// returned by [SortUnique]). It is defined as 0 when both sets are empty:
// two documents without shingles are not near-duplicates of each other.
func Jaccard(a, b []uint64) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 0
	}
	i, j, inter := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			inter++
			i++
			j++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}
