// Package reference is the slow, obviously correct model of what neardup
// computes fast, for tests and the accuracy benchmark to check against:
// shingle sets from the document model's shingle strings hashed with
// xxhash (independent of the fast kernel's hashing), and their Jaccard
// similarity by a plain merge; and the paragraph pass's units cut the
// simple way.
package reference

import (
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/pkg/shingle"
)

// Set is the reference shingle set of a text, sorted and without repeats.
func Set(text string, o shingle.Options) []uint64 {
	sh := shingle.Shingles(text, o)
	set := make([]uint64, 0, len(sh))
	for _, s := range sh {
		set = append(set, xxhash.Sum64String(s))
	}
	return shingle.SortUnique(set)
}

// Jaccard is |a ∩ b| / |a ∪ b| of two sorted sets without repeats; 0 when
// either is empty (a document without shingles is similar to nothing).
func Jaccard(a, b []uint64) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	i, j, inter := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			inter++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// Unit is a unit of the paragraph pass as the reference cuts it: the
// Index-th of a text's units, text[Offset:Offset+Length], and its
// normalised text (its tokens joined by single spaces).
type Unit struct {
	Index, Offset, Length int
	Norm                  string
}

// Units cuts text into the paragraph pass's units the simple way: its
// lines (unit "line", a "\r" before a "\n" not part of the line) or
// runs of lines that are not blank (any other unit), each with its
// normalised text, those without a token left out.
func Units(text, unit string, o shingle.Options) []Unit {
	type span struct{ start, end int }
	var lines []span
	at := 0
	for _, l := range strings.SplitAfter(text, "\n") {
		body := strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r")
		lines = append(lines, span{at, at + len(body)})
		at += len(l)
	}
	spans := lines
	if unit != "line" {
		spans = nil
		cur := span{-1, -1}
		for _, l := range append(lines, span{len(text), len(text)}) { // a blank line ends the text
			if strings.TrimSpace(text[l.start:l.end]) == "" {
				if cur.start >= 0 {
					spans = append(spans, cur)
				}
				cur = span{-1, -1}
				continue
			}
			if cur.start < 0 {
				cur.start = l.start
			}
			cur.end = l.end
		}
	}
	var out []Unit
	for _, s := range spans {
		norm := strings.Join(shingle.Tokens(text[s.start:s.end], o), " ")
		if norm == "" {
			continue
		}
		out = append(out, Unit{Index: len(out), Offset: s.start, Length: s.end - s.start, Norm: norm})
	}
	return out
}

// Strip is text without its units (as Units cuts them) for which strip
// is true, each with the line break after it, as --strip-paragraphs
// removes them.
func Strip(text, unit string, o shingle.Options, strip func(Unit) bool) string {
	var b strings.Builder
	at := 0
	for _, u := range Units(text, unit, o) {
		if !strip(u) {
			continue
		}
		b.WriteString(text[at:u.Offset])
		at = u.Offset + u.Length
		if strings.HasPrefix(text[at:], "\n") {
			at++
		}
	}
	b.WriteString(text[at:])
	return b.String()
}
