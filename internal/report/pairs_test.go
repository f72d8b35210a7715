package report

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/pkg/records"
	"github.com/neardup/neardup/pkg/shingle"
)

// highlighted returns the words of text in the spans.
func highlighted(text string, spans []shingle.Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, text[s.Start:s.End])
	}
	return out
}

// TestShared checks the highlighted words of hand-made pairs: a word is
// highlighted only if a shingle holding it is in both documents, so words
// both documents have outside a shared shingle are not.
func TestShared(t *testing.T) {
	tests := []struct {
		name         string
		o            shingle.Options
		a, b         string
		wantA, wantB []string
		both         int
	}{
		{"one word changed", shingle.Options{Words: 3},
			"The quick brown fox jumps over the lazy dog", "the quick brown fox JUMPS over a lazy dog",
			[]string{"The", "quick", "brown", "fox", "jumps", "over"}, []string{"the", "quick", "brown", "fox", "JUMPS", "over"}, 4},
		{"nothing shared", shingle.Options{Words: 2},
			"lazy dog sleeps", "dog lazy sleeps", nil, nil, 0},
		{"repeats and punctuation", shingle.Options{Words: 2},
			"a b, a b! c d", "x a b y c", []string{"a", "b", "a", "b"}, []string{"a", "b"}, 1},
		{"short texts", shingle.Options{},
			"Hello world", "hello, WORLD", []string{"Hello", "world"}, []string{"hello", "WORLD"}, 1},
		{"digits and diacritics", shingle.Options{Words: 2, DigitsToZero: true, StripDiacritics: true},
			"Café 12 ouvert", "cafe 99 fermé", []string{"Café", "12"}, []string{"cafe", "99"}, 1},
		{"character grams", shingle.Options{CharGrams: 3},
			"abcdef xyz", "zzabcd", []string{"abcdef"}, []string{"zzabcd"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sa, sb, _, _, both, err := Shared(tt.a, tt.b, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			if got := highlighted(tt.a, sa); !slices.Equal(got, tt.wantA) {
				t.Errorf("a: highlighted %q, want %q", got, tt.wantA)
			}
			if got := highlighted(tt.b, sb); !slices.Equal(got, tt.wantB) {
				t.Errorf("b: highlighted %q, want %q", got, tt.wantB)
			}
			if both != tt.both {
				t.Errorf("%d shared shingles, want %d", both, tt.both)
			}
		})
	}
}

// TestSharedMatchesModel checks, on random near-duplicate texts, that the
// highlighted tokens are exactly those of the shingles (as strings, the
// reference model) present in both documents.
func TestSharedMatchesModel(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	words := strings.Fields("the a of to rays light Light colour colours prism 12 3 é É Straße glass")
	text := func(n int) []string {
		w := make([]string, n)
		for i := range w {
			w[i] = words[r.IntN(len(words))]
		}
		return w
	}
	for i := range 300 {
		o := shingle.Options{Words: 1 + i%4}
		wa := text(5 + r.IntN(30))
		wb := slices.Clone(wa)
		for range 1 + r.IntN(4) {
			wb[r.IntN(len(wb))] = words[r.IntN(len(words))]
		}
		a, b := strings.Join(wa, " "), strings.Join(wb, ". ")
		sa, sb, _, _, _, err := Shared(a, b, o)
		if err != nil {
			t.Fatal(err)
		}
		shA, shB := shingle.Shingles(a, o), shingle.Shingles(b, o)
		for _, x := range []struct {
			text   string
			spans  []shingle.Span
			own    []string
			other  []string
			tokens int
		}{{a, sa, shA, shB, len(wa)}, {b, sb, shB, shA, len(wb)}} {
			// Token i is in shingles i-k+1..i (word mode, k <= tokens).
			k := min(o.Words, x.tokens)
			want := make([]bool, x.tokens)
			for s, sh := range x.own {
				if slices.Contains(x.other, sh) {
					for t := s; t < s+k; t++ {
						want[t] = true
					}
				}
			}
			all, _ := shingle.Locate(x.text, o)
			got := make([]bool, len(all))
			for _, s := range x.spans {
				got[slices.Index(all, s)] = true
			}
			if !slices.Equal(got, want) {
				t.Fatalf("options %+v text %q (other %q): highlighted %v, want %v", o, x.text, x.other, got, want)
			}
		}
	}
}

// TestSegments checks the cut at the shown length, in runes, with a
// highlighted word across it.
func TestSegments(t *testing.T) {
	text := "ééé abc déf"
	spans := []shingle.Span{{Start: 0, End: 6}, {Start: 7, End: 10}, {Start: 11, End: 15}}
	for _, tt := range []struct {
		max  int
		want string
		cut  bool
	}{
		{100, "[ééé] [abc] [déf]", false},
		{11, "[ééé] [abc] [déf]", false},
		{10, "[ééé] [abc] [dé]", true},
		{5, "[ééé] [a]", true},
		{0, "", true},
	} {
		segs, cut := segments(text, spans, tt.max)
		var b strings.Builder
		for _, s := range segs {
			if s.Shared {
				b.WriteString("[" + s.Text + "]")
			} else {
				b.WriteString(s.Text)
			}
		}
		if b.String() != tt.want || cut != tt.cut {
			t.Errorf("max %d: %q cut %v, want %q %v", tt.max, b.String(), cut, tt.want, tt.cut)
		}
	}
}

// pairsFixture is a small job's examples and documents: a pair with text
// that needs escaping, a pair whose long document is cut, and a pair one
// of whose documents could not be read again.
func pairsFixture() ([]manifest.Example, map[int64]ExampleDoc) {
	h := int32(3)
	examples := []manifest.Example{
		{A: 0, B: 1, AID: "a<1>", BID: "b&1", Similarity: 0.8125, Estimate: 0.7969, Method: "exact", BandsCollided: 3, FirstBand: 2, Why: "near the threshold"},
		{A: 2, B: 3, AID: "long-a", BID: "long-b", Similarity: 0.9, Estimate: 0.9, Method: "simhash", Hamming: &h, BandsCollided: 4, FirstBand: 0, Why: "halfway between the threshold and 1"},
		{A: 4, B: 5, AID: "gone", BID: "here", Similarity: 1, Estimate: 1, Method: "exact", BandsCollided: 16, FirstBand: 0, Why: "identical shingle sets"},
	}
	long := strings.Repeat("Light is refracted by a prism <b>into</b> colours & rays. ", 120)
	docs := map[int64]ExampleDoc{
		0: {Row: records.DocRecord{Doc: 0, ID: "a<1>", URL: "https://example.com/?a=1&b=<2>", File: "in/a.jsonl", Offset: 0, Line: 1},
			Text: "The quick brown fox <jumps> over the lazy dog & cat"},
		1: {Row: records.DocRecord{Doc: 1, ID: "b&1", File: "in/a.jsonl", Offset: 81, Line: 2},
			Text: "the quick brown fox jumps over a lazy dog & cat"},
		2: {Row: records.DocRecord{Doc: 2, ID: "long-a", File: "in/b.warc.gz", Offset: 1234}, Text: long},
		3: {Row: records.DocRecord{Doc: 3, ID: "long-b", File: "in/b.warc.gz", Offset: 99999}, Text: "Preface. " + long},
		4: {Row: records.DocRecord{Doc: 4, ID: "gone", File: "in/gone.jsonl", Offset: 7, Line: 2}, Err: "in/gone.jsonl: open: no such file or directory"},
		5: {Row: records.DocRecord{Doc: 5, ID: "here", File: "in/here.jsonl", Offset: 0, Line: 1}, Text: "some text"},
	}
	return examples, docs
}

// TestPairsPage checks the side-by-side page of the fixture against its
// golden file: it parses, loads nothing, escapes every text, shows the
// examples under the anchors report.html links to, and highlights the
// shared words only.
func TestPairsPage(t *testing.T) {
	examples, docs := pairsFixture()
	o := shingle.Options{Words: 3}
	page, err := PairsPage(o, examples, docs)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := PairsPage(o, examples, docs)
	if !bytes.Equal(page, again) {
		t.Error("two renderings of the same examples differ")
	}
	checkGolden(t, "pairs/"+PairsFile, page)
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	checkSelfContained(t, doc)
	s := string(page)
	for _, bad := range []string{"<jumps>", "<b>into", "a<1>", "b&1"} {
		if strings.Contains(s, bad) {
			t.Errorf("the page holds %q unescaped", bad)
		}
	}
	var marks []string
	walk(doc, func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "mark" && n.FirstChild != nil && n.FirstChild.Type == html.TextNode {
			marks = append(marks, n.FirstChild.Data)
		}
	})
	// Pair 1: the shared 3-word shingles cover "the quick brown fox jumps
	// over" and "lazy dog cat"; not "the" before "lazy", which b lacks.
	first := marks[1 : 1+9] // marks[0] is the legend
	if want := []string{"The", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "cat"}; !slices.Equal(first, want) {
		t.Errorf("pair 1, document a: marked %q, want %q", first, want)
	}
	if !strings.Contains(s, "text cut after 5,000 characters") || !strings.Contains(s, "The text could not be read again: in/gone.jsonl: open: no such file or directory") {
		t.Error("the page does not say that a text is cut, or that one could not be read")
	}
}

// TestReportLinksResolve checks that every link of report.html to the
// pairs page names an example shown there, and that the pairs page links
// back to report.html.
func TestReportLinksResolve(t *testing.T) {
	examples, docs := pairsFixture()
	files := buildEdited(t, "sample", func(m map[string]any) { m["example_pairs"] = examples })
	page, err := PairsPage(shingle.Options{}, examples, docs)
	if err != nil {
		t.Fatal(err)
	}
	attrs := func(data []byte, key string) []string {
		doc, err := html.Parse(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		walk(doc, func(n *html.Node) {
			for _, a := range n.Attr {
				if a.Key == key {
					out = append(out, a.Val)
				}
			}
		})
		return out
	}
	ids := attrs(page, "id")
	var links int
	for _, href := range attrs(files[HTMLFile], "href") {
		anchor, ok := strings.CutPrefix(href, PairsFile+"#")
		if !ok {
			continue
		}
		links++
		if !slices.Contains(ids, anchor) {
			t.Errorf("report.html links to %s, which %s does not hold", href, PairsFile)
		}
	}
	if links != len(examples) {
		t.Errorf("report.html has %d links to %s, want %d", links, PairsFile, len(examples))
	}
	if hrefs := attrs(page, "href"); !slices.Equal(hrefs, []string{HTMLFile}) {
		t.Errorf("%s links to %q, want report.html only", PairsFile, hrefs)
	}
}
