package report

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/pkg/records"
	"github.com/neardup/neardup/pkg/shingle"
)

// PairsFile is the side-by-side view of the example pairs, written beside
// report.html, which links to it.
const PairsFile = "report-pairs.html"

// MaxShownRunes is how much of each document's text the side-by-side view
// shows: its first MaxShownRunes characters (runes). Shingles are taken
// from the whole text.
const MaxShownRunes = 5000

// pairAnchor is the id of example i (from 0) in PairsFile.
func pairAnchor(i int) string { return "pair-" + strconv.Itoa(i+1) }

// ExampleDoc is one document of an example pair: its docs/ row and its
// whole text, or why the text could not be read again.
type ExampleDoc struct {
	Row  records.DocRecord
	Text string
	Err  string
}

// Shared returns, for two texts, the spans of the tokens of each that
// belong to at least one shingle present in both, and the sizes of the
// two shingle sets and of their intersection. The sets are those the job
// compared: its shingler's hashes, with options o; the tokens of a shingle
// come from shingle.Locate, whose hashes are the same.
func Shared(a, b string, o shingle.Options) (sa, sb []shingle.Span, na, nb, both int, err error) {
	sh, err := shingle.NewShingler(o)
	if err != nil {
		return nil, nil, 0, 0, 0, err
	}
	set := func(text string) []uint64 {
		h, _ := sh.Hashes(nil, []byte(text))
		return shingle.SortUnique(h)
	}
	setA, setB := set(a), set(b)
	var common []uint64 // sorted, as setA
	for _, h := range setA {
		if _, ok := slices.BinarySearch(setB, h); ok {
			common = append(common, h)
		}
	}
	marked := func(text string) []shingle.Span {
		spans, located := shingle.Locate(text, o)
		in := make([]bool, len(spans))
		for _, l := range located {
			if _, ok := slices.BinarySearch(common, l.Hash); ok {
				for t := max(l.First, 0); t <= l.Last; t++ {
					in[t] = true
				}
			}
		}
		var out []shingle.Span
		for t, s := range spans {
			if in[t] {
				out = append(out, s)
			}
		}
		return out
	}
	return marked(a), marked(b), len(setA), len(setB), len(common), nil
}

// segment is a piece of shown text, highlighted or not.
type segment struct {
	Text   string
	Shared bool
}

// segments cuts the first maxRunes runes of text into pieces, the spans
// highlighted (a span cut by the limit is highlighted up to it), and
// reports whether text was longer.
func segments(text string, spans []shingle.Span, maxRunes int) ([]segment, bool) {
	limit, n := len(text), 0
	for i := range text {
		if n == maxRunes {
			limit = i
			break
		}
		n++
	}
	var out []segment
	at := 0
	for _, s := range spans {
		if s.Start >= limit {
			break
		}
		if s.Start > at {
			out = append(out, segment{Text: text[at:s.Start]})
		}
		end := min(s.End, limit)
		out = append(out, segment{Text: text[s.Start:end], Shared: true})
		at = end
	}
	if at < limit {
		out = append(out, segment{Text: text[at:limit]})
	}
	return out, limit < len(text)
}

// pairsPage is what PairsFile shows.
type pairsPage struct {
	MaxRunes string
	Pairs    []pairView
}

// pairView is one example pair on the page.
type pairView struct {
	Anchor, Title, Why string
	Rows               []row
	Docs               [2]docView
}

// docView is one document of a pair on the page.
type docView struct {
	ID, URL, Where, Err, Note string
	Segments                  []segment
	Cut                       bool
}

// PairsPage renders PairsFile: each example pair, in order, with its two
// documents side by side (docs by ordinal), the words of each that belong
// to a shingle present in both highlighted. Texts are shingled with
// options o, the job's. Equal arguments give equal bytes: the page holds
// nothing else (not the job's name, which may differ between two runs of
// one job), so a job run again writes the same page.
func PairsPage(o shingle.Options, examples []manifest.Example, docs map[int64]ExampleDoc) ([]byte, error) {
	pg := pairsPage{MaxRunes: groupDigits(MaxShownRunes)}
	for i, e := range examples {
		v := pairView{
			Anchor: pairAnchor(i),
			Title:  fmt.Sprintf("Pair %d: similarity %s", i+1, roundedText(e.Similarity)),
			Why:    e.Why,
		}
		v.Rows = []row{
			{"similarity", roundedText(e.Similarity), "compared with the threshold (" + e.Method + ")"},
			{"estimate", roundedText(e.Estimate), "the signatures' estimate"},
			{"bands collided", strconv.Itoa(int(e.BandsCollided)), "bands with equal band keys; the lowest is band " + strconv.Itoa(int(e.FirstBand))},
		}
		if e.Hamming != nil {
			v.Rows = append(v.Rows, row{"hamming", strconv.Itoa(int(*e.Hamming)), "SimHash distance"})
		}
		da, db := docs[e.A], docs[e.B]
		ids := [2]string{e.AID, e.BID}
		for k, d := range []ExampleDoc{da, db} {
			v.Docs[k] = docView{ID: ids[k], URL: d.Row.URL, Err: d.Err, Where: where(d.Row)}
		}
		if da.Err == "" && db.Err == "" {
			sa, sb, na, nb, both, err := Shared(da.Text, db.Text, o)
			if err != nil {
				return nil, fmt.Errorf("report: pair %d %d: %w", e.A, e.B, err)
			}
			for k, x := range []struct {
				text  string
				spans []shingle.Span
				n     int
			}{{da.Text, sa, na}, {db.Text, sb, nb}} {
				v.Docs[k].Segments, v.Docs[k].Cut = segments(x.text, x.spans, MaxShownRunes)
				v.Docs[k].Note = fmt.Sprintf("%s of its %s in the other document", groupDigits(int64(both)), plural(int64(x.n), "shingle", "shingles"))
			}
			// What --verify exact computes, also when the job estimated.
			if union := na + nb - both; union > 0 {
				v.Rows = append(v.Rows, row{"Jaccard of the texts", roundedText(float64(both) / float64(union)), "exact, from the shingles of the texts read again"})
			}
		}
		pg.Pairs = append(pg.Pairs, v)
	}
	out := pg.html()
	return out, nil
}

// where says where a document was read: file, offset and line.
func where(r records.DocRecord) string {
	if r.File == "" {
		return ""
	}
	s := r.File + " at offset " + strconv.FormatInt(r.Offset, 10)
	if r.Line > 0 {
		s += ", line " + strconv.FormatInt(r.Line, 10)
	}
	return s
}
