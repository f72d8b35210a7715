package shingle

import "strings"

// Span is where a token lies in the original text: text[Start:End], before
// lower-casing and the normalisations of Options (a deleted combining mark
// inside a token is inside its span).
type Span struct{ Start, End int }

// Located is one shingle of a text, as [Shingles] gives it, with its hash
// ([HashString]) and the tokens it is made of: First..Last, indices into
// the spans [Locate] returns (in character mode, the tokens its runes come
// from).
type Located struct {
	Hash        uint64
	First, Last int
}

// Locate returns the spans of the tokens of text (the tokens of [Tokens],
// in order) and its shingles in document order (those of [Shingles],
// repeats kept), each with the tokens it covers. It is the reference
// model with positions, for showing people which words two documents
// share; the set of its hashes equals the set [Shingler.Hashes] gives.
func Locate(text string, o Options) ([]Span, []Located) {
	var spans []Span
	var toks []string
	var singles []bool
	tokenize(text, o, func(tok []byte, sp Span, single bool) {
		spans = append(spans, sp)
		toks = append(toks, string(tok))
		singles = append(singles, single)
	})
	if len(toks) == 0 {
		return nil, nil
	}
	k := o.grams()
	var out []Located
	if o.CharGrams > 0 {
		// The runes of the tokens joined by single spaces, and the token
		// of each (-1 for a space).
		var runes []rune
		var of []int
		for t, tok := range toks {
			if t > 0 {
				runes, of = append(runes, ' '), append(of, -1)
			}
			for _, r := range tok {
				runes, of = append(runes, r), append(of, t)
			}
		}
		window := func(from, to int) Located {
			l := Located{Hash: HashString(string(runes[from:to]), o), First: -1, Last: -1}
			for _, t := range of[from:to] {
				if t >= 0 {
					if l.First < 0 {
						l.First = t
					}
					l.Last = t
				}
			}
			return l
		}
		if len(runes) <= k {
			return spans, []Located{window(0, len(runes))}
		}
		for i := 0; i+k <= len(runes); i++ {
			out = append(out, window(i, i+k))
		}
		return spans, out
	}
	if len(toks) <= k {
		return spans, []Located{{Hash: HashString(strings.Join(toks, " "), o), First: 0, Last: len(toks) - 1}}
	}
	hashes := make([]uint64, 0, len(toks)-k+1)
	for i := 0; i+k <= len(toks); i++ {
		hashes = append(hashes, HashString(strings.Join(toks[i:i+k], " "), o))
	}
	for _, i := range winnowed(hashes, charShingles(singles, k), CharWindow) {
		out = append(out, Located{Hash: hashes[i], First: i, Last: i + k - 1})
	}
	return spans, out
}
