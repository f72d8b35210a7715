package corpus

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// compose returns the units of a text of length words (spaced languages)
// or graphemes: paragraphs of 2 to 6 sentences of Zipf-drawn words, with
// the language's separators and punctuation. Words are one unit each, or
// one unit per grapheme in languages edited by grapheme.
func (l *mlLanguage) compose(r *rng, length int) []string {
	var units []string
	n := 0
	for n < length {
		if len(units) > 0 {
			units = append(units, paraBreak)
		}
		for s := r.between(2, 6); s > 0 && n < length; s-- {
			if len(units) > 0 && units[len(units)-1] != paraBreak && l.sentenceSep != "" {
				units = append(units, l.sentenceSep)
			}
			words := r.between(l.sentence[0], l.sentence[1])
			for w := 0; w < words && n < length; w++ {
				if w > 0 && l.sep != "" {
					units = append(units, l.sep)
				}
				word := l.word(r)
				if w == 0 && l.capitalize {
					first, size := utf8.DecodeRuneInString(word)
					word = string(unicode.ToUpper(first)) + word[size:]
				}
				parts := []string{word}
				if l.graphemes {
					parts = graphemes(word)
				}
				if l.Spaced() {
					n++
				} else {
					parts = parts[:min(len(parts), length-n)]
					n += len(parts)
				}
				units = append(units, parts...)
				if w+1 < words && n < length && l.comma != "" && r.chance(1, 8) {
					units = append(units, l.comma)
				}
			}
			if l.stop != "" {
				units = append(units, l.stop)
			}
		}
	}
	return units
}

// edit applies one edit of kind k (MutSubstitute, MutInsert or MutDelete)
// at a random word or grapheme of units and returns the units. A
// substituted unit always changes; an inserted word brings its separator.
func (l *mlLanguage) edit(r *rng, units []string, k Mutation) []string {
	i := unitIndex(r, units)
	if i < 0 {
		return units
	}
	switch k {
	case MutSubstitute:
		old := strings.ToLower(units[i])
		for range 8 {
			if u := l.newUnit(r); strings.ToLower(u) != old {
				units[i] = u
				break
			}
		}
	case MutDelete:
		units[i] = ""
	case MutInsert:
		ins := []string{l.newUnit(r)}
		if !l.graphemes && l.sep != "" {
			ins = append(ins, l.sep)
		}
		units = slices.Insert(units, i, ins...)
	}
	return units
}

// newUnit draws a word of the vocabulary, uniformly, or for languages
// edited by grapheme one grapheme of such a word.
func (l *mlLanguage) newUnit(r *rng) string {
	w := pick(r, l.vocab)
	if l.graphemes {
		return pick(r, graphemes(w))
	}
	return w
}

// unitIndex returns the index of a random word or grapheme of units (not a
// separator, punctuation or deleted unit), or -1 if none was found.
func unitIndex(r *rng, units []string) int {
	if len(units) == 0 {
		return -1
	}
	for range 64 {
		if i := r.intn(len(units)); isUnit(units[i]) {
			return i
		}
	}
	return -1
}

// renderUnits joins units into text. Deleted units ("") are skipped, and
// so are the spaces a deletion leaves doubled, leading, or before
// punctuation; paraBreak separates paragraphs.
func renderUnits(units []string) string {
	var b strings.Builder
	space, para := false, false
	for _, u := range units {
		switch {
		case u == "":
		case u == " ":
			space = b.Len() > 0
		case u == paraBreak:
			para, space = b.Len() > 0, false
		default:
			if para {
				b.WriteString(paraBreak)
			} else if space && isUnit(u) {
				b.WriteByte(' ')
			}
			para, space = false, false
			b.WriteString(u)
		}
	}
	return b.String()
}
