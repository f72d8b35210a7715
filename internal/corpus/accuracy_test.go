package corpus

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/cespare/xxhash/v2"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// words counts the tokens of text as the document model does: maximal runs
// of letters and digits.
func words(text string) int {
	return len(strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }))
}

func TestAccuracyConfigValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*Config)
		ok     bool
	}{
		{"accuracy", func(*Config) {}, true},
		{"no template", func(c *Config) { c.TemplatePages = 0 }, true},
		{"template fills the rest", func(c *Config) { c.TemplatePages = c.templateRoom() }, true},
		{"template too large", func(c *Config) { c.TemplatePages = c.templateRoom() + 1 }, false},
		{"negative template", func(c *Config) { c.TemplatePages = -1 }, false},
		{"tiny template", func(c *Config) { c.TemplateWords = 5 }, false},
		{"unique range reversed", func(c *Config) { c.TemplateUniqueMinWords = 200 }, false},
		{"a family a page", func(c *Config) { c.TemplateFamilies = c.TemplatePages }, true},
		{"more families than pages", func(c *Config) { c.TemplateFamilies = c.TemplatePages + 1 }, false},
		{"negative families", func(c *Config) { c.TemplateFamilies = -1 }, false},
		{"short families too many", func(c *Config) { c.ShortDupFraction = 0.6 }, false},
		{"target above one", func(c *Config) { c.TargetJaccardMin = 1.5 }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := AccuracyConfig(5000, 1)
			tt.modify(&c)
			if err := c.Validate(); (err == nil) != tt.ok {
				t.Errorf("Validate() = %v, want ok=%v", err, tt.ok)
			}
		})
	}
	for _, n := range []int{0, 1, 9, 10, 5000, 20000} {
		c := AccuracyConfig(n, 1)
		if want := min(DefaultTemplatePages, n/10); c.TemplatePages != want {
			t.Errorf("AccuracyConfig(%d): %d template pages, want %d", n, c.TemplatePages, want)
		}
		if _, err := New(testPool(t), c); err != nil {
			t.Errorf("AccuracyConfig(%d): %v", n, err)
		}
	}
}

// TestAccuracyCorpus checks the shape of an accuracy corpus: the length
// mix, the short families, graded near copies that land near their target
// similarity, and the template family's similarity spread.
func TestAccuracyCorpus(t *testing.T) {
	const n = 4000
	cfg := AccuracyConfig(n, 3)
	cfg.TemplatePages = 200
	g, err := New(testPool(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	texts := make([]string, n)
	truth := make([]Truth, n)
	kinds := map[Kind]int{}
	short := 0
	var pages []int
	for i := range n {
		texts[i], truth[i] = g.Text(i), g.Truth(i)
		kinds[truth[i].Kind]++
		if words(texts[i]) < 40 {
			short++
		}
		if truth[i].Kind == KindTemplate {
			pages = append(pages, i)
		}
	}
	t.Logf("kinds %v; %d of %d documents under 40 words", kinds, short, n)
	if short*4 < n {
		t.Errorf("%d of %d documents under 40 words, want at least a quarter", short, n)
	}
	if len(pages) != cfg.TemplatePages {
		t.Errorf("%d template pages, want %d", len(pages), cfg.TemplatePages)
	}
	if kinds[KindExact] != count(n, cfg.ExactFraction) {
		t.Errorf("%d exact copies, want %d", kinds[KindExact], count(n, cfg.ExactFraction))
	}

	index := func(id string) int { return indexOf(t, id) }
	var shortExact, shortNear int
	var deviation []float64
	for i, tr := range truth {
		if i > 0 && tr.Cluster != "" && tr.Cluster == truth[i-1].Cluster {
			t.Errorf("%s and %s of family %s are adjacent", truth[i-1].ID, tr.ID, tr.Cluster)
		}
		switch {
		case tr.Kind == KindTemplate:
			if tr.Family != FamilyTemplate || tr.Base != "" || tr.Cluster == "" || tr.Cluster != truth[pages[0]].Cluster {
				t.Errorf("%s: template page with truth %+v", tr.ID, tr)
			}
		case tr.Family == FamilyShort:
			w := words(texts[i])
			if w >= 40 || w == 0 {
				t.Errorf("%s: member of a short family with %d words", tr.ID, w)
			}
			if tr.Kind == KindExact {
				shortExact++
				if texts[i] != texts[index(tr.Base)] {
					t.Errorf("%s: exact copy differs from its base", tr.ID)
				}
			}
			if tr.Kind == KindNear {
				shortNear++
				base := strings.Fields(texts[index(tr.Base)])
				if texts[i] == strings.Join(base, " ") || len(tr.Mutations) < 1 || len(tr.Mutations) > 2 {
					t.Errorf("%s: near copy %q of %q (%v)", tr.ID, texts[i], base, tr.Mutations)
				}
				if d := len(strings.Fields(texts[i])) - len(base); d < -2 || d > 2 {
					t.Errorf("%s: %d words more than its base, want one or two edits", tr.ID, d)
				}
			}
		case tr.Kind == KindNear:
			if tr.TargetJaccard < cfg.TargetJaccardMin || tr.TargetJaccard > 1 {
				t.Errorf("%s: target similarity %v", tr.ID, tr.TargetJaccard)
			}
			j := jaccard(shingles(texts[i]), shingles(texts[index(tr.Base)]))
			deviation = append(deviation, j-tr.TargetJaccard)
		case tr.Kind == KindExact:
			if texts[i] != texts[index(tr.Base)] {
				t.Errorf("%s: exact copy differs from its base", tr.ID)
			}
		}
	}
	if shortExact == 0 || shortNear == 0 {
		t.Errorf("short families have %d exact and %d near copies, want some of each", shortExact, shortNear)
	}
	slices.Sort(deviation)
	mean := 0.0
	for _, d := range deviation {
		mean += d
	}
	mean /= float64(len(deviation))
	p5, p95 := deviation[len(deviation)/20], deviation[len(deviation)*19/20]
	t.Logf("graded copies: %d, J - target: mean %.3f, p5 %.3f, p95 %.3f", len(deviation), mean, p5, p95)
	if math.Abs(mean) > 0.03 || p5 < -0.12 || p95 > 0.12 {
		t.Errorf("graded copies miss their target: J - target has mean %.3f, p5 %.3f, p95 %.3f", mean, p5, p95)
	}

	var js []float64
	for x, a := range pages {
		sa := shingles(texts[a])
		for _, b := range pages[x+1:] {
			js = append(js, jaccard(sa, shingles(texts[b])))
		}
	}
	slices.Sort(js)
	lo, med, hi := js[0], js[len(js)/2], js[len(js)-1]
	t.Logf("template pairs: %d, J min %.3f, p10 %.3f, median %.3f, p90 %.3f, max %.3f", len(js), lo, js[len(js)/10], med, js[len(js)*9/10], hi)
	if lo < 0.40 || lo > 0.50 || hi < 0.90 || med < 0.6 || med > 0.8 {
		t.Errorf("template similarities from %.3f to %.3f (median %.3f), want about 0.45 to 0.95", lo, hi, med)
	}
}

// TestAccuracyCorpusGolden pins the bytes of an accuracy corpus, so that a
// change to the generator that moves them is deliberate: the kinds, the
// length histogram and a hash of the JSONL and truth files are compared
// with testdata/accuracy.golden (rewrite with -update).
func TestAccuracyCorpusGolden(t *testing.T) {
	cfg := AccuracyConfig(2000, 1)
	g, err := New(testPool(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	w, err := Write(g, WriteOptions{Dir: dir, Format: FormatJSONL, Truth: "truth.jsonl", Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	kinds, families := map[Kind]int{}, map[Family]int{}
	edges := []int{1, 5, 20, 40, 100, 200, 400, 800}
	hist := make([]int, len(edges)+1)
	for i := range g.Len() {
		tr := g.Truth(i)
		kinds[tr.Kind]++
		families[tr.Family]++
		k, _ := slices.BinarySearch(edges, words(g.Text(i))+1)
		hist[k]++
	}
	kj, _ := json.Marshal(kinds)
	fj, _ := json.Marshal(families)
	fmt.Fprintf(&b, "AccuracyConfig(2000, 1)\nkinds %s\nfamilies %s\n", kj, fj)
	fmt.Fprintf(&b, "words <1 <5 <20 <40 <100 <200 <400 <800 800+: %v\n", hist)
	for _, path := range append(w.Files, w.Truth) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s: %d bytes, xxhash64 %016x\n", filepath.Base(path), len(data), xxhash.Sum64(data))
	}
	for _, i := range []int{0, 1, 2, 3} {
		line, _ := json.Marshal(g.Truth(i))
		fmt.Fprintf(&b, "%s\n", line)
	}
	golden := filepath.Join("testdata", "accuracy.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("accuracy corpus differs from %s (rerun with -update if the change is deliberate):\n%s", golden, b.Bytes())
	}
}

// TestTemplatedCorpus checks the templated profile: long pages in
// families of about TemplatedFamilyPages, each family with its own
// template, so that two pages of a family share most of their words and
// pages of different families share almost none.
func TestTemplatedCorpus(t *testing.T) {
	const n = 1000
	cfg := TemplatedConfig(n, 1)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	g, err := New(testPool(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	byFamily := map[string][]string{}
	for i := range n {
		if tr := g.Truth(i); tr.Kind == KindTemplate {
			text := g.Text(i)
			// words counts hyphenated words and contractions as two.
			if w := words(text); w < 1500+cfg.TemplateUniqueMinWords || w > (1500+cfg.TemplateUniqueMaxWords)*21/20 {
				t.Errorf("%s: template page of %d words", tr.ID, w)
			}
			byFamily[tr.Cluster] = append(byFamily[tr.Cluster], text)
		}
	}
	if want := cfg.TemplateFamilies; len(byFamily) != want || want < 5 {
		t.Fatalf("%d template families, want %d (at least 5)", len(byFamily), want)
	}
	header := func(text string) string { return strings.Join(strings.Fields(text)[:50], " ") }
	headers := map[string]bool{}
	for fam, texts := range byFamily {
		if len(texts) < TemplatedFamilyPages/2 || len(texts) > 2*TemplatedFamilyPages {
			t.Errorf("family %s has %d pages", fam, len(texts))
		}
		for _, text := range texts[1:] {
			if header(text) != header(texts[0]) {
				t.Errorf("family %s: pages with different headers", fam)
			}
		}
		headers[header(texts[0])] = true
	}
	if len(headers) != len(byFamily) {
		t.Errorf("%d different templates for %d families", len(headers), len(byFamily))
	}

	// One family is the corpus without TemplateFamilies.
	one := AccuracyConfig(2000, 1)
	one.TemplateFamilies = 1
	g0, err := New(testPool(t), AccuracyConfig(2000, 1))
	if err != nil {
		t.Fatal(err)
	}
	g1, err := New(testPool(t), one)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		if g0.Text(i) != g1.Text(i) || g0.Truth(i).Cluster != g1.Truth(i).Cluster {
			t.Fatalf("document %d differs with TemplateFamilies 1", i)
		}
	}
}
