package corpus

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// testMultilingual plans a multilingual corpus of n documents per language.
func testMultilingual(t testing.TB, n int, seed uint64) *Multilingual {
	t.Helper()
	m, err := NewMultilingual(MultilingualConfig{PerLanguage: n, Seed: seed})
	if err != nil {
		t.Fatalf("NewMultilingual: %v", err)
	}
	return m
}

// length returns the length of text as Multilingual measures it: words
// for spaced languages, else graphemes (letters that are not marks).
func length(text string, spaced bool) int {
	if spaced {
		return len(strings.Fields(text))
	}
	n := 0
	for _, r := range text {
		if unicode.IsLetter(r) {
			n++
		}
	}
	return n
}

// TestMultilingualScripts checks that every language's documents are
// written in its script: every letter in the script's ranges, every other
// rune a space, a line break or the language's punctuation, the marks the
// script needs present, and spaces where the language puts them.
func TestMultilingualScripts(t *testing.T) {
	tests := []struct {
		code    string
		letters []*unicode.RangeTable // every letter is in one of them
		other   string                // the non-letters besides ' ' and '\n'
		marks   []*unicode.RangeTable // combining marks that must occur
		need    []rune                // runes that must occur in some document
		spaces  bool                  // words are separated by spaces
	}{
		{code: "en", letters: []*unicode.RangeTable{unicode.Latin}, other: ",.", spaces: true},
		{code: "ru", letters: []*unicode.RangeTable{unicode.Cyrillic}, other: ",.", spaces: true},
		{code: "ar", letters: []*unicode.RangeTable{unicode.Arabic}, other: "،.",
			// harakat U+064B-U+0652: tanwin, fatha, damma, kasra, shadda, sukun
			need: []rune{0x064B, 0x064C, 0x064D, 0x064E, 0x064F, 0x0650, 0x0651, 0x0652}, spaces: true},
		{code: "hi", letters: []*unicode.RangeTable{unicode.Devanagari}, other: ",।",
			marks: []*unicode.RangeTable{unicode.Mc, unicode.Mn}, need: []rune{'्', 'ं', 'ि', 'ो'}, spaces: true},
		{code: "zh", letters: []*unicode.RangeTable{unicode.Han}, other: "，。"},
		{code: "ja", letters: []*unicode.RangeTable{unicode.Han, unicode.Hiragana, unicode.Katakana, {R16: []unicode.Range16{{Lo: 'ー', Hi: 'ー', Stride: 1}}}},
			other: "、。", need: []rune{'ー', 'の', 'ア'}},
		{code: "ko", letters: []*unicode.RangeTable{unicode.Hangul}, other: ",.", spaces: true},
		{code: "th", letters: []*unicode.RangeTable{unicode.Thai}, marks: []*unicode.RangeTable{unicode.Mn},
			need: []rune{0x0E31, 0x0E34, 0x0E38, 0x0E3A, 0x0E47, 0x0E48, 0x0E4C, 0x0E4D, 0x0E4E, 'เ', 'ไ'}},
	}
	m := testMultilingual(t, 200, 1)
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			l, ok := languageByCode(tt.code)
			if !ok {
				t.Fatalf("no language %q", tt.code)
			}
			if l.Spaced() != tt.spaces || (!l.Spaced() && !l.Graphemes()) {
				t.Errorf("spaced %v, graphemes %v", l.Spaced(), l.Graphemes())
			}
			var docs, wordCount, runCount int
			seen := map[rune]bool{}
			marks := make([]int, len(tt.marks))
			for i := range m.Len() {
				tr := m.Truth(i)
				if tr.Language != tt.code {
					continue
				}
				docs++
				text := m.Text(i)
				for _, r := range text {
					seen[r] = true
					switch {
					case unicode.IsLetter(r):
						if !unicode.In(r, tt.letters...) {
							t.Fatalf("%s: letter %q (%U) outside the script in %q", tr.ID, r, r, text)
						}
					case unicode.In(r, unicode.Mn, unicode.Mc, unicode.Me):
						if !unicode.In(r, tt.letters...) && !unicode.Is(unicode.Inherited, r) {
							t.Fatalf("%s: mark %U outside the script", tr.ID, r)
						}
						for k, tab := range tt.marks {
							if unicode.Is(tab, r) {
								marks[k]++
							}
						}
					case r != ' ' && r != '\n' && !strings.ContainsRune(tt.other, r):
						t.Fatalf("%s: unexpected %q (%U) in %q", tr.ID, r, r, text)
					}
				}
				if strings.Contains(text, "  ") || strings.HasPrefix(text, " ") || strings.HasSuffix(text, " ") {
					t.Errorf("%s: stray spaces in %q", tr.ID, text)
				}
				for _, para := range strings.Split(text, "\n\n") {
					runs := strings.Fields(para)
					runCount += len(runs)
					for _, run := range runs {
						wordCount += length(run, false)
					}
				}
			}
			if docs != 200 {
				t.Errorf("%d documents, want 200", docs)
			}
			for k, n := range marks {
				if n == 0 {
					t.Errorf("no combining mark of class %d", k)
				}
			}
			for _, r := range tt.need {
				if !seen[r] {
					t.Errorf("no %q (%U) in any document", r, r)
				}
			}
			// Space-separated runs are words (a few graphemes) in spaced
			// languages, whole sentences in Thai, and paragraphs in
			// Chinese and Japanese.
			mean := float64(wordCount) / float64(runCount)
			t.Logf("%d documents, %.1f graphemes between spaces", docs, mean)
			if tt.spaces != (mean < 10) {
				t.Errorf("%.1f graphemes between spaces: want words separated by spaces %v", mean, tt.spaces)
			}
		})
	}
}

// TestMultilingualCorpus checks the shape of a multilingual corpus: ids,
// kinds and families per language, document lengths, exact copies equal
// to their base, near copies different from it, planted copies with about
// 1% of their words or graphemes edited, and graded ones with a target.
func TestMultilingualCorpus(t *testing.T) {
	const n = 300
	m := testMultilingual(t, n, 2)
	if m.Len() != n*len(languages) {
		t.Fatalf("%d documents, want %d", m.Len(), n*len(languages))
	}
	pos := map[string]int{}
	for i := range m.Len() {
		pos[m.ID(i)] = i
	}
	if len(pos) != m.Len() {
		t.Fatalf("%d distinct ids for %d documents", len(pos), m.Len())
	}
	type key struct {
		lang string
		kind Kind
		fam  Family
	}
	counts := map[key]int{}
	langs := map[string]int{}
	texts := map[string]int{}
	for i := range m.Len() {
		tr, text := m.Truth(i), m.Text(i)
		l, _ := languageByCode(tr.Language)
		counts[key{tr.Language, tr.Kind, tr.Family}]++
		langs[tr.Language]++
		if !strings.HasPrefix(tr.ID, tr.Language+"-") || len(tr.ID) != 9 || tr.ID != m.Doc(i).ID {
			t.Errorf("id %q of a %s document", tr.ID, tr.Language)
		}
		shortMin, shortMax, longMax := l.lengths()
		size := length(text, l.Spaced())
		switch {
		case tr.Kind == KindShort || tr.Family == FamilyShort && tr.Kind != KindNear:
			if size < shortMin || size > shortMax {
				t.Errorf("%s: short document of length %d", tr.ID, size)
			}
		case size < shortMin && tr.Kind != KindNear || size < 1 || size > longMax*6/5:
			t.Errorf("%s: %s document of length %d", tr.ID, tr.Kind, size)
		}
		if tr.Kind == KindUnique || tr.Kind == KindShort || tr.Kind == KindBase {
			if prev, dup := texts[text]; dup {
				t.Errorf("%s repeats the text of %s", tr.ID, m.ID(prev))
			}
			texts[text] = i
		}
		if tr.Kind != KindExact && tr.Kind != KindNear {
			if tr.Base != "" || tr.EditRate != 0 || (tr.Cluster != "") != (tr.Kind == KindBase) {
				t.Errorf("%s: truth %+v", tr.ID, tr)
			}
			continue
		}
		b, ok := pos[tr.Base]
		if !ok || m.Truth(b).Kind != KindBase || m.Truth(b).Cluster != tr.Cluster || !strings.HasPrefix(tr.Base, tr.Language+"-") {
			t.Fatalf("%s: base %q", tr.ID, tr.Base)
		}
		base := m.Text(b)
		switch {
		case tr.Kind == KindExact:
			if text != base {
				t.Errorf("%s: exact copy differs from its base", tr.ID)
			}
		case text == base:
			t.Errorf("%s: near copy equal to its base", tr.ID)
		case tr.Family == FamilyPlanted:
			if tr.EditRate < 0.0075 || tr.EditRate > 0.0125 || size < longMax/3-10 {
				t.Errorf("%s: planted copy of length %d with edit rate %v", tr.ID, size, tr.EditRate)
			}
		case tr.Family == FamilyShort:
			if len(tr.Mutations) < 1 || len(tr.Mutations) > 2 {
				t.Errorf("%s: short near copy with mutations %v", tr.ID, tr.Mutations)
			}
		default:
			if tr.TargetJaccard < GradedTargetMin || tr.TargetJaccard > 1 || tr.EditRate <= 0 {
				t.Errorf("%s: graded copy with target %v, edit rate %v", tr.ID, tr.TargetJaccard, tr.EditRate)
			}
		}
	}
	for _, l := range languages {
		if langs[l.Code] != n {
			t.Errorf("%s: %d documents, want %d", l.Code, langs[l.Code], n)
		}
		for _, k := range []key{{kind: KindUnique}, {kind: KindShort}, {kind: KindBase}, {kind: KindNear},
			{kind: KindExact}, {kind: KindNear, fam: FamilyPlanted}, {kind: KindNear, fam: FamilyShort}, {kind: KindExact, fam: FamilyShort}} {
			k.lang = l.Code
			if counts[k] == 0 {
				t.Errorf("%s: no %s document of family %q", l.Code, k.kind, k.fam)
			}
		}
	}
	// Languages are mixed: the first tenth of the corpus has all of them.
	mixed := map[string]bool{}
	for i := range m.Len() / 10 {
		mixed[m.Truth(i).Language] = true
	}
	if len(mixed) != len(languages) {
		t.Errorf("first tenth of the corpus has %d languages", len(mixed))
	}
}

// TestMultilingualDeterministic checks that a corpus is a function of its
// config and that a language's documents do not depend on which other
// languages are in it.
func TestMultilingualDeterministic(t *testing.T) {
	a, b := testMultilingual(t, 50, 7), testMultilingual(t, 50, 7)
	th, err := NewMultilingual(MultilingualConfig{PerLanguage: 50, Seed: 7, Languages: []string{"th"}})
	if err != nil {
		t.Fatal(err)
	}
	var thai []string
	for i := range a.Len() {
		if a.Doc(i) != b.Doc(i) || !slices.Equal(a.Truth(i).Mutations, b.Truth(i).Mutations) {
			t.Fatalf("document %d differs between two generators", i)
		}
		if a.Truth(i).Language == "th" {
			thai = append(thai, a.Text(i))
		}
	}
	var alone []string
	for i := range th.Len() {
		alone = append(alone, th.Text(i))
	}
	slices.Sort(thai)
	slices.Sort(alone)
	if !slices.Equal(thai, alone) {
		t.Errorf("Thai documents change with the other languages")
	}
	if c := testMultilingual(t, 50, 8); c.Text(0) == a.Text(0) && c.Text(1) == a.Text(1) {
		t.Errorf("seeds 7 and 8 give the same documents")
	}
}

func TestMultilingualConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  MultilingualConfig
		ok   bool
	}{
		{"all", MultilingualConfig{PerLanguage: 10}, true},
		{"empty", MultilingualConfig{}, true},
		{"some", MultilingualConfig{PerLanguage: 10, Languages: []string{"zh", "en"}}, true},
		{"negative", MultilingualConfig{PerLanguage: -1}, false},
		{"unknown", MultilingualConfig{PerLanguage: 10, Languages: []string{"xx"}}, false},
		{"twice", MultilingualConfig{PerLanguage: 10, Languages: []string{"zh", "zh"}}, false},
	}
	for _, tt := range tests {
		if _, err := NewMultilingual(tt.cfg); (err == nil) != tt.ok {
			t.Errorf("%s: NewMultilingual() error %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}

func TestGraphemes(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"abc", []string{"a", "b", "c"}},
		{"สวัสดี", []string{"ส", "วั", "ส", "ดี"}},
		{"क्षेत्र", []string{"क्", "षे", "त्", "र"}},
		{"كَتَبَ", []string{"كَ", "تَ", "بَ"}},
		{"한국", []string{"한", "국"}},
		{"\u0301a", []string{"\u0301", "a"}},
		{"क\u200Dष", []string{"क\u200D", "ष"}},
	}
	for _, tt := range tests {
		if got := graphemes(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("graphemes(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRenderUnits(t *testing.T) {
	tests := []struct {
		units []string
		want  string
	}{
		{[]string{"a", " ", "b", ",", " ", "c", "."}, "a b, c."},
		{[]string{"a", " ", "", " ", "c", "."}, "a c."},
		{[]string{"", " ", "b", " ", "", "."}, "b."},
		{[]string{"a", ".", paraBreak, "b", "."}, "a.\n\nb."},
		{[]string{"中", "文", "，", "字", "。", paraBreak, "", "好", "。"}, "中文，字。\n\n好。"},
		{[]string{"ก", "า", " ", "ข", paraBreak}, "กา ข"},
	}
	for _, tt := range tests {
		if got := renderUnits(tt.units); got != tt.want {
			t.Errorf("renderUnits(%q) = %q, want %q", tt.units, got, tt.want)
		}
	}
}

// TestWriteMultilingual writes a multilingual corpus as JSONL and checks
// the ground truth records each document's language, and that WARC needs
// an English corpus.
func TestWriteMultilingual(t *testing.T) {
	m := testMultilingual(t, 20, 1)
	dir := t.TempDir()
	w, err := Write(m, WriteOptions{Dir: dir, Format: FormatJSONL, Truth: "truth.jsonl", Files: 2})
	if err != nil {
		t.Fatal(err)
	}
	var docs []Doc
	for _, f := range w.Files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var d Doc
			if err := json.Unmarshal([]byte(line), &d); err != nil {
				t.Fatal(err)
			}
			docs = append(docs, d)
		}
	}
	truth := readTruth(t, filepath.Join(dir, "truth.jsonl"))
	if len(docs) != m.Len() || len(truth) != m.Len() {
		t.Fatalf("%d documents and %d truth records, want %d", len(docs), len(truth), m.Len())
	}
	for i := range docs {
		if docs[i] != m.Doc(i) || truth[i].ID != docs[i].ID || truth[i].Language == "" || truth[i].RecordID != "" {
			t.Errorf("document %d: %+v with truth %+v", i, docs[i], truth[i])
		}
	}
	if _, err := Write(m, WriteOptions{Dir: t.TempDir(), Format: FormatWARC}); err == nil {
		t.Error("Write of a multilingual corpus as WARC succeeded")
	}
}
