package corpus

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// testPool returns the Pool of the bundled prose.
func testPool(t testing.TB) *Pool {
	t.Helper()
	p, err := BundledPool()
	if err != nil {
		t.Fatalf("BundledPool: %v", err)
	}
	return p
}

// testGenerator plans a corpus of n documents with default settings.
func testGenerator(t testing.TB, n int, seed uint64) *Generator {
	t.Helper()
	g, err := New(testPool(t), DefaultConfig(n, seed))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return g
}

// shingles returns the set of word 5-gram shingles of text: lowercase,
// tokens are maximal runs of letters and digits, a text of 1 to 4 tokens has
// one shingle of all its tokens.
func shingles(text string) map[string]struct{} {
	toks := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	set := make(map[string]struct{})
	if len(toks) == 0 {
		return set
	}
	if len(toks) < 5 {
		set[strings.Join(toks, " ")] = struct{}{}
		return set
	}
	for i := 0; i+5 <= len(toks); i++ {
		set[strings.Join(toks[i:i+5], " ")] = struct{}{}
	}
	return set
}

// jaccard returns |a∩b| / |a∪b|, or 0 when both are empty.
func jaccard(a, b map[string]struct{}) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 0
	}
	inter := 0
	for s := range a {
		if _, ok := b[s]; ok {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

func TestJaccardHelper(t *testing.T) {
	tests := []struct {
		a, b string
		want float64
	}{
		{"one two three four five", "One, two; three four FIVE!", 1},
		{"a b c", "a b c", 1},
		{"a b c", "a b d", 0},
		{"", "...", 0},
		{"a b c d e f", "a b c d e g", 1.0 / 3},
	}
	for _, tt := range tests {
		if got := jaccard(shingles(tt.a), shingles(tt.b)); got != tt.want {
			t.Errorf("jaccard(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestSplitSentences(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"simple", "It rained. Then it stopped!", []string{"It rained.", "Then it stopped!"}},
		{"joined lines", "It\nrained.\nThen it\r\nstopped.", []string{"It rained.", "Then it stopped."}},
		{"paragraphs", "One here\n\nTwo there", []string{"One here", "Two there"}},
		{"abbreviation", "Mr. Holmes sat. He smoked.", []string{"Mr. Holmes sat.", "He smoked."}},
		{"initial", "J. Smith came. He left.", []string{"J. Smith came.", "He left."}},
		{"closing quote", `"Go away." She went.`, []string{`"Go away."`, "She went."}},
		{"lower case continues", "It was 3 p.m. and late.", []string{"It was 3 p.m. and late."}},
		{"italics dropped", "The _Opticks_ of Newton.", []string{"The Opticks of Newton."}},
		{"question", "Who is it? Nobody.", []string{"Who is it?", "Nobody."}},
		{"empty", " \n\n ", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SplitSentences(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("SplitSentences(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestPool(t *testing.T) {
	p := testPool(t)
	if p.Len() < 10000 {
		t.Errorf("pool has %d sentences, want at least 10000 for low similarity between unrelated documents", p.Len())
	}
	seen := make(map[string]bool)
	for i := range p.Len() {
		s := p.Sentence(i)
		if n := len(strings.Fields(s)); n < MinSentenceWords || n > MaxSentenceWords {
			t.Fatalf("sentence %d has %d words: %q", i, n, s)
		}
		key := strings.ToLower(s)
		if seen[key] {
			t.Fatalf("sentence %d repeated: %q", i, s)
		}
		seen[key] = true
	}
	if _, err := LoadPool(t.TempDir()); err == nil {
		t.Error("LoadPool of an empty directory succeeded")
	}
}

// TestBundledPoolIsTheDirectory checks that the prose built into the
// package is every .txt file of BundledProseDir, so BundledPool and
// LoadPool of the directory give the same Pool (and the same corpora).
func TestBundledPoolIsTheDirectory(t *testing.T) {
	fromDir, err := LoadPool(BundledProseDir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(testPool(t), fromDir) {
		t.Fatalf("BundledPool differs from LoadPool(%q): the embed pattern misses a file", BundledProseDir)
	}
	onDisk, _ := filepath.Glob(filepath.Join(BundledProseDir, "*.txt"))
	embedded, _ := fs.Glob(bundled, BundledProseDir+"/*.txt")
	if len(onDisk) == 0 || len(onDisk) != len(embedded) {
		t.Fatalf("%d .txt files in %s, %d embedded", len(onDisk), BundledProseDir, len(embedded))
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*Config)
		ok     bool
	}{
		{"default", func(*Config) {}, true},
		{"zero docs", func(c *Config) { c.N = 0 }, true},
		{"negative n", func(c *Config) { c.N = -1 }, false},
		{"dup above one", func(c *Config) { c.DupFraction = 1.5 }, false},
		{"fractions sum above one", func(c *Config) { c.DupFraction, c.ShortFraction = 0.9, 0.2 }, false},
		{"cluster of one", func(c *Config) { c.MinCluster = 1 }, false},
		{"max below min", func(c *Config) { c.MaxCluster = 1 }, false},
		{"edit range reversed", func(c *Config) { c.EditRateMin, c.EditRateMax = 0.05, 0.01 }, false},
		{"no sentences", func(c *Config) { c.MinSentences = 0 }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig(1000, 1)
			tt.modify(&c)
			if err := c.Validate(); (err == nil) != tt.ok {
				t.Errorf("Validate() = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

func TestPlan(t *testing.T) {
	pool := testPool(t)
	for _, n := range []int{0, 1, 2, 7, 100, 5000} {
		g, err := New(pool, DefaultConfig(n, 3))
		if err != nil {
			t.Fatalf("n=%d: New: %v", n, err)
		}
		if g.Len() != n {
			t.Fatalf("n=%d: Len() = %d", n, g.Len())
		}
		kinds := make(map[Kind]int)
		families := make(map[string][]int)
		for i := range n {
			tr := g.Truth(i)
			kinds[tr.Kind]++
			if tr.Cluster != "" {
				families[tr.Cluster] = append(families[tr.Cluster], i)
			}
		}
		for cl, members := range families {
			if len(members) < 2 || len(members) > 8 {
				t.Errorf("n=%d: family %s has %d members", n, cl, len(members))
			}
			bases := 0
			for _, i := range members {
				if g.Truth(i).Kind == KindBase {
					bases++
				}
			}
			if bases != 1 {
				t.Errorf("n=%d: family %s has %d bases", n, cl, bases)
			}
		}
		if n < 5000 {
			continue
		}
		c := g.Config()
		inFamily := kinds[KindBase] + kinds[KindNear] + kinds[KindExact]
		checks := []struct {
			what      string
			got, want int
		}{
			{"family members", inFamily, count(n, c.DupFraction)},
			{"exact copies", kinds[KindExact], count(n, c.ExactFraction)},
			{"short docs", kinds[KindShort], count(n, c.ShortFraction)},
			{"empty docs", kinds[KindEmpty], count(n, c.EmptyFraction)},
		}
		for _, ch := range checks {
			if d := ch.got - ch.want; d < -1 || d > 1 {
				t.Errorf("n=%d: %d %s, want %d", n, ch.got, ch.what, ch.want)
			}
		}
		for i := 1; i < n; i++ {
			if a, b := g.Truth(i-1), g.Truth(i); a.Cluster != "" && a.Cluster == b.Cluster {
				t.Errorf("n=%d: %s and %s of family %s are adjacent", n, a.ID, b.ID, a.Cluster)
			}
		}
		t.Logf("n=%d: %v, %d families", n, kinds, len(families))
	}
}

func TestDocuments(t *testing.T) {
	g := testGenerator(t, 3000, 1)
	ids, urls := make(map[string]bool), make(map[string]bool)
	for i := range g.Len() {
		d, tr := g.Doc(i), g.Truth(i)
		if ids[d.ID] || urls[d.URL] {
			t.Fatalf("duplicate id or url at %d: %s %s", i, d.ID, d.URL)
		}
		ids[d.ID], urls[d.URL] = true, true
		if d.ID != tr.ID || d.URL != tr.URL {
			t.Fatalf("doc %d and its truth disagree: %+v %+v", i, d, tr)
		}
		words := len(strings.Fields(d.Text))
		switch tr.Kind {
		case KindEmpty:
			if len(shingles(d.Text)) != 0 {
				t.Errorf("%s: empty doc has words: %q", d.ID, d.Text)
			}
		case KindShort:
			if words < 1 || words > 30 {
				t.Errorf("%s: short doc has %d words", d.ID, words)
			}
		case KindExact:
			base := g.Doc(indexOf(t, tr.Base))
			if d.Text != base.Text {
				t.Errorf("%s: exact copy differs from base %s", d.ID, base.ID)
			}
		case KindNear:
			base := g.Doc(indexOf(t, tr.Base))
			if d.Text == base.Text {
				t.Errorf("%s: near copy (%v) equals base %s", d.ID, tr.Mutations, base.ID)
			}
			if len(tr.Mutations) == 0 {
				t.Errorf("%s: near copy without mutations", d.ID)
			}
		default:
			if words < 10*MinSentenceWords {
				t.Errorf("%s: %s doc has only %d words", d.ID, tr.Kind, words)
			}
		}
		if g.Text(i) != d.Text {
			t.Fatalf("%s: text not reproducible", d.ID)
		}
	}
}

// indexOf parses a document id back into its position.
func indexOf(t *testing.T, id string) int {
	t.Helper()
	i, err := strconv.Atoi(strings.TrimPrefix(id, "doc-"))
	if err != nil || ID(i) != id {
		t.Fatalf("bad document id %q", id)
	}
	return i
}

// TestNearDuplicateSimilarity checks that planted family members are near
// duplicates by word 5-gram Jaccard similarity and unrelated documents are
// not.
func TestNearDuplicateSimilarity(t *testing.T) {
	const n = 4000
	g := testGenerator(t, n, 7)
	sets := make([]map[string]struct{}, n)
	families := make(map[string][]int)
	for i := range n {
		sets[i] = shingles(g.Text(i))
		if cl := g.Truth(i).Cluster; cl != "" {
			families[cl] = append(families[cl], i)
		}
	}

	type bucket struct {
		name  string
		sims  []float64
		above float64 // required fraction of pairs above 0.8
	}
	baseCopy := &bucket{name: "base-copy", above: 0.95}
	copyCopy := &bucket{name: "copy-copy", above: 0.85}
	for _, members := range families {
		for x, i := range members {
			for _, j := range members[x+1:] {
				b := copyCopy
				if g.Truth(i).Kind == KindBase || g.Truth(j).Kind == KindBase {
					b = baseCopy
				}
				b.sims = append(b.sims, jaccard(sets[i], sets[j]))
			}
		}
	}
	for _, b := range []*bucket{baseCopy, copyCopy} {
		sort.Float64s(b.sims)
		above := 0
		for _, s := range b.sims {
			if s > 0.8 {
				above++
			}
		}
		frac := float64(above) / float64(len(b.sims))
		t.Logf("%s pairs: %d, above 0.8: %.1f%%, min %.3f, p10 %.3f, median %.3f",
			b.name, len(b.sims), 100*frac, b.sims[0], b.sims[len(b.sims)/10], b.sims[len(b.sims)/2])
		if frac < b.above {
			t.Errorf("%s: only %.1f%% of pairs above 0.8, want at least %.0f%%", b.name, 100*frac, 100*b.above)
		}
	}

	r := newRNG(99, 99, 99)
	var unrelated []float64
	for len(unrelated) < 20000 {
		i, j := r.intn(n), r.intn(n)
		ti, tj := g.Truth(i), g.Truth(j)
		if i == j || (ti.Cluster != "" && ti.Cluster == tj.Cluster) {
			continue
		}
		unrelated = append(unrelated, jaccard(sets[i], sets[j]))
	}
	sort.Float64s(unrelated)
	maxSim := unrelated[len(unrelated)-1]
	t.Logf("unrelated pairs: %d, median %.4f, p99.9 %.4f, max %.4f",
		len(unrelated), unrelated[len(unrelated)/2], unrelated[len(unrelated)*999/1000], maxSim)
	if maxSim >= 0.3 {
		t.Errorf("unrelated pair with Jaccard %.3f, want all below 0.3", maxSim)
	}
}

// readFiles returns the contents of every regular file in dir by name.
func readFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string][]byte)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

func TestWriteDeterministic(t *testing.T) {
	pool := testPool(t)
	write := func(t *testing.T, seed uint64, format Format, gz bool, workers int) map[string][]byte {
		t.Helper()
		g, err := New(pool, DefaultConfig(700, seed))
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if _, err := Write(g, WriteOptions{Dir: dir, Format: format, Files: 3, Gzip: gz, Truth: "truth.jsonl", Workers: workers}); err != nil {
			t.Fatal(err)
		}
		return readFiles(t, dir)
	}
	tests := []struct {
		format Format
		gz     bool
	}{
		{FormatJSONL, false}, {FormatJSONL, true},
		{FormatWET, false}, {FormatWET, true},
		{FormatWARC, false}, {FormatWARC, true},
		{FormatParquet, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.format)+map[bool]string{true: "-gz", false: ""}[tt.gz], func(t *testing.T) {
			a := write(t, 11, tt.format, tt.gz, 1)
			b := write(t, 11, tt.format, tt.gz, 4)
			c := write(t, 12, tt.format, tt.gz, 4)
			if len(a) != 4 {
				t.Fatalf("wrote %d files, want 3 data files and the truth", len(a))
			}
			for name, data := range a {
				if !bytes.Equal(data, b[name]) {
					t.Errorf("%s differs between two runs with the same seed", name)
				}
				if name != "truth.jsonl" && bytes.Equal(data, c[name]) {
					t.Errorf("%s is the same for seeds 11 and 12", name)
				}
			}
		})
	}
}

func TestWriteJSONL(t *testing.T) {
	tests := []struct {
		n, files  int
		gz        bool
		name      string
		wantFiles []string
	}{
		{n: 10, files: 1, wantFiles: []string{"part-0000.jsonl"}},
		{n: 25, files: 0, gz: true, wantFiles: []string{"part-0000.jsonl.gz"}},
		{n: 25, files: 3, wantFiles: []string{"part-0000.jsonl", "part-0001.jsonl", "part-0002.jsonl"}},
		{n: 40, files: 1, gz: true, name: "sample", wantFiles: []string{"sample.jsonl.gz"}},
		{n: 40, files: 2, name: "sample", wantFiles: []string{"sample-0000.jsonl", "sample-0001.jsonl"}},
	}
	pool := testPool(t)
	for _, tt := range tests {
		g, err := New(pool, DefaultConfig(tt.n, 5))
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		truthName := "truth.jsonl"
		if tt.gz {
			truthName += ".gz"
		}
		w, err := Write(g, WriteOptions{Dir: dir, Format: FormatJSONL, Files: tt.files, Gzip: tt.gz, Name: tt.name, Truth: truthName})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		var docs []Doc
		for _, path := range w.Files {
			names = append(names, filepath.Base(path))
			for _, line := range bytes.Split(bytes.TrimSuffix(decompressAll(t, path), []byte("\n")), []byte("\n")) {
				var d Doc
				if err := json.Unmarshal(line, &d); err != nil {
					t.Fatalf("%s: bad line %q: %v", path, line, err)
				}
				docs = append(docs, d)
			}
		}
		if !slices.Equal(names, tt.wantFiles) {
			t.Errorf("files %v, want %v", names, tt.wantFiles)
		}
		if len(docs) != tt.n {
			t.Fatalf("read %d docs, want %d", len(docs), tt.n)
		}
		for i, d := range docs {
			if d != g.Doc(i) {
				t.Errorf("doc %d read back as %+v", i, d)
			}
		}
		truth := readTruth(t, w.Truth)
		if len(truth) != tt.n || truth[tt.n-1].ID != ID(tt.n-1) {
			t.Errorf("truth has %d lines, want %d in order", len(truth), tt.n)
		}
	}
}

// readTruth parses a truth.jsonl file.
func readTruth(t *testing.T, path string) []Truth {
	t.Helper()
	var out []Truth
	sc := bufio.NewScanner(bytes.NewReader(decompressAll(t, path)))
	for sc.Scan() {
		var tr Truth
		if err := json.Unmarshal(sc.Bytes(), &tr); err != nil {
			t.Fatalf("truth line %q: %v", sc.Text(), err)
		}
		out = append(out, tr)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestWriteErrors(t *testing.T) {
	g := testGenerator(t, 5, 1)
	tests := []struct {
		name string
		opts WriteOptions
	}{
		{"bad format", WriteOptions{Dir: t.TempDir(), Format: "csv"}},
		{"more files than docs", WriteOptions{Dir: t.TempDir(), Format: FormatJSONL, Files: 6}},
		{"dir is a file", WriteOptions{Dir: "corpus_test.go", Format: FormatJSONL}},
	}
	for _, tt := range tests {
		if _, err := Write(g, tt.opts); err == nil {
			t.Errorf("%s: Write succeeded", tt.name)
		}
	}
	if _, err := ParseFormat("wet"); err != nil {
		t.Errorf("ParseFormat(wet): %v", err)
	}
}

// TestBundledSampleUpToDate regenerates testdata/sample with the command
// lines documented in testdata/sample/README.md and checks that the
// bundled files are byte-identical. If the generator or the prose changes
// on purpose, regenerate the sample with those commands.
func TestBundledSampleUpToDate(t *testing.T) {
	const sampleDir = "../../testdata/sample"
	tests := []struct {
		n      int
		seed   uint64
		format Format
		truth  string
	}{
		{2000, 1, FormatJSONL, "_sample.truth.jsonl.gz"},
		{500, 2, FormatWET, "_sample.warc.wet.truth.jsonl.gz"},
		{100, 3, FormatWARC, "_sample.warc.truth.jsonl.gz"},
	}
	pool := testPool(t)
	for _, tt := range tests {
		t.Run(string(tt.format), func(t *testing.T) {
			g, err := New(pool, DefaultConfig(tt.n, tt.seed))
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			w, err := Write(g, WriteOptions{Dir: dir, Format: tt.format, Gzip: true, Name: "sample", Truth: tt.truth})
			if err != nil {
				t.Fatal(err)
			}
			for _, path := range append(w.Files, w.Truth) {
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(filepath.Join(sampleDir, filepath.Base(path)))
				if err != nil {
					t.Fatalf("bundled sample: %v", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("testdata/sample/%s is stale: regenerate it with the commands in testdata/sample/README.md", filepath.Base(path))
				}
			}
		})
	}
}
