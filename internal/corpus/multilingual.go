package corpus

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Shape of each language's documents in a Multilingual corpus.
const (
	// VocabularySize is the number of words of each language's synthetic
	// vocabulary.
	VocabularySize = 3000
	// PlantedEditRate is the share of the words (or, for languages edited
	// by grapheme, graphemes) of a planted family's base that each of its
	// near copies has edited.
	PlantedEditRate = 0.01
	// GradedTargetMin is the least target similarity of a graded near
	// copy (see Config.TargetJaccardMin).
	GradedTargetMin = 0.45

	// Shares of a language's documents: short unique documents, graded
	// families, planted families and families of short documents; the
	// rest are long unique documents.
	mlShortFraction    = 0.25
	mlGradedFraction   = 0.25
	mlPlantedFraction  = 0.20
	mlShortFamFraction = 0.10
)

// MultilingualConfig controls the shape of a Multilingual corpus.
type MultilingualConfig struct {
	// PerLanguage is the number of documents in each language.
	PerLanguage int `json:"per_language"`
	// Seed determines every random choice but the vocabularies, which are
	// fixed per language.
	Seed uint64 `json:"seed"`
	// Languages lists the codes of the languages (see Languages); empty
	// means all of them.
	Languages []string `json:"languages,omitempty"`
}

// Validate reports the first inconsistency in c.
func (c MultilingualConfig) Validate() error {
	codes := c.codes()
	if c.PerLanguage < 0 || int64(c.PerLanguage)*int64(len(codes)) > math.MaxInt32 {
		return fmt.Errorf("PerLanguage = %d: must be within [0, %d]", c.PerLanguage, math.MaxInt32/max(1, len(codes)))
	}
	for i, code := range codes {
		if _, ok := languageByCode(code); !ok {
			return fmt.Errorf("unknown language %q", code)
		}
		if slices.Contains(codes[:i], code) {
			return fmt.Errorf("language %q listed twice", code)
		}
	}
	if len(codes) == 0 {
		return errors.New("no language")
	}
	return nil
}

// codes returns the codes of the configured languages.
func (c MultilingualConfig) codes() []string {
	if len(c.Languages) > 0 {
		return c.Languages
	}
	var out []string
	for _, l := range languages {
		out = append(out, l.Code)
	}
	return out
}

// Multilingual is a deterministic mixed crawl in several languages (see
// Languages): for each language, PerLanguage documents of synthetic text
// whose words come from a Zipf-distributed vocabulary of VocabularySize
// words. A language's documents are a quarter short unique ones (5 to 39
// words, or 10 to 60 graphemes for scripts written without spaces), long
// unique ones (up to 600 words or 3,000 graphemes, shorter ones more
// common) and families of a base and 1 to 3 copies: graded families (near
// copies edited towards a similarity to the base uniform in [0.45, 1] as
// Config.TargetJaccardMin, some exact copies), planted families (long
// bases, near copies with PlantedEditRate of their units edited) and
// families of short documents (near copies with one or two edits, some
// exact copies). Edits substitute, insert and delete words, or graphemes
// for the languages that Language.Graphemes says. Documents of all
// languages are shuffled together; ids are the language code and the
// document's number in its language (zh-000123). A Multilingual is safe
// for concurrent use.
type Multilingual struct {
	cfg   MultilingualConfig
	langs []*mlLanguage
	docs  []mlEntry
	bases []int32 // output position of each family's base
}

// mlLanguage is a language of the corpus with its vocabulary.
type mlLanguage struct {
	*Language
	key   uint64   // from the code: the language's stream index
	vocab []string // by rank
	cum   []int    // cum[k]: Zipf weight of vocab[:k+1]
}

// mlEntry is the plan of one output position.
type mlEntry struct {
	lang    uint8
	kind    kindCode
	fam     famCode
	mut     Mutation
	num     int32 // number within its language, in output order
	slot    int32 // position in its language's plan
	cluster int32 // family number, -1 when not in a family
	source  int32 // content origin within the language
	length  int32 // content length in words (spaced) or graphemes
}

// NewMultilingual plans a multilingual corpus.
func NewMultilingual(cfg MultilingualConfig) (*Multilingual, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("invalid multilingual corpus config: %w", err)
	}
	m := &Multilingual{cfg: cfg}
	var family int32
	for li, code := range cfg.codes() {
		l, _ := languageByCode(code)
		ml := newMLLanguage(l)
		m.langs = append(m.langs, ml)
		m.docs = append(m.docs, ml.plan(cfg, uint8(li), &family)...)
	}
	r := newRNG(cfg.Seed, streamPlan, 0)
	for i := len(m.docs) - 1; i > 0; i-- {
		j := r.intn(i + 1)
		m.docs[i], m.docs[j] = m.docs[j], m.docs[i]
	}
	next := make([]int32, len(m.langs))
	m.bases = make([]int32, family)
	for i := range m.docs {
		e := &m.docs[i]
		e.num = next[e.lang]
		next[e.lang]++
		if e.kind == kBase {
			m.bases[e.cluster] = int32(i)
		}
	}
	return m, nil
}

// langKey packs a language code into a stream index.
func langKey(code string) uint64 {
	var k uint64
	for i := range len(code) {
		k = k<<8 | uint64(code[i])
	}
	return k
}

// newMLLanguage draws l's vocabulary: VocabularySize distinct words (fewer
// if its shapes allow fewer), the same for every corpus. Word k of the
// vocabulary has the Zipf-Mandelbrot weight 1/(k+3).
func newMLLanguage(l *Language) *mlLanguage {
	ml := &mlLanguage{Language: l, key: langKey(l.Code)}
	r := newRNG(0, streamVocab, ml.key)
	seen := map[string]bool{}
	for tries := 0; len(ml.vocab) < VocabularySize && tries < 100*VocabularySize; tries++ {
		if w := l.makeWord(&r); !seen[w] {
			seen[w] = true
			ml.vocab = append(ml.vocab, w)
		}
	}
	total := 0
	for k := range ml.vocab {
		total += (1 << 24) / (k + 3)
		ml.cum = append(ml.cum, total)
	}
	return ml
}

// makeWord draws a word of one of l's shapes.
func (l *Language) makeWord(r *rng) string {
	total := 0
	for _, s := range l.shapes {
		total += max(1, s.weight)
	}
	x := r.intn(total)
	s := l.shapes[0]
	for _, s = range l.shapes {
		if x -= max(1, s.weight); x < 0 {
			break
		}
	}
	var b strings.Builder
	if len(s.lead) > 0 {
		b.WriteString(pick(r, s.lead))
	}
	for range r.between(s.min, s.max) {
		for _, set := range s.syllable {
			b.WriteString(pick(r, set))
		}
	}
	if len(s.final) > 0 {
		b.WriteString(pick(r, s.final))
	}
	return b.String()
}

// word draws a vocabulary word by its Zipf weight.
func (l *mlLanguage) word(r *rng) string {
	x := r.intn(l.cum[len(l.cum)-1])
	k, _ := slices.BinarySearch(l.cum, x+1)
	return l.vocab[k]
}

// plan plans the language's PerLanguage documents, numbering its families
// from *family on.
func (l *mlLanguage) plan(c MultilingualConfig, li uint8, family *int32) []mlEntry {
	r := newRNG(c.Seed, streamPlan, l.key)
	n := c.PerLanguage
	shortMin, shortMax, longMax := l.lengths()
	short := func() int { return r.between(shortMin, shortMax) }
	long := func() int {
		x := r.intn(1001)
		return shortMax + 1 + (longMax-shortMax-1)*x*x/1_000_000
	}
	docs := make([]mlEntry, 0, n)
	var source int32
	add := func(kind kindCode, fam famCode, cluster int32, length int) {
		docs = append(docs, mlEntry{lang: li, kind: kind, fam: fam, cluster: cluster, source: source, length: int32(length)})
		if kind != kNear && kind != kExact {
			source++
		}
	}
	// plant adds families of fam, 2 to 4 documents, left documents in
	// all; a copy is exact with probability exact/10.
	plant := func(left int, fam famCode, length func() int, exact int, mut func(*rng) Mutation) {
		for left >= 2 {
			size := familySize(&r, left, 2, 4)
			n := length()
			add(kBase, fam, *family, n)
			for range size - 1 {
				if r.chance(exact, 10) {
					docs = append(docs, mlEntry{lang: li, kind: kExact, fam: fam, cluster: *family, source: source - 1, length: int32(n)})
				} else {
					docs = append(docs, mlEntry{lang: li, kind: kNear, fam: fam, mut: mut(&r), cluster: *family, source: source - 1, length: int32(n)})
				}
			}
			left -= size
			(*family)++
		}
	}
	plant(count(n, mlGradedFraction), famRegular, func() int {
		if r.chance(1, 4) {
			return short()
		}
		return long()
	}, 2, drawWordMutations)
	plant(count(n, mlPlantedFraction), famPlanted, func() int { return r.between(longMax/3, longMax) }, 0, drawWordMutations)
	plant(count(n, mlShortFamFraction), famShort, short, 3, drawShortEdits)
	for range count(n, mlShortFraction) {
		if len(docs) < n {
			add(kShort, famRegular, -1, short())
		}
	}
	for len(docs) < n {
		add(kUnique, famRegular, -1, long())
	}
	for k := range docs {
		docs[k].slot = int32(k)
	}
	return docs
}

// Len returns the number of documents.
func (m *Multilingual) Len() int { return len(m.docs) }

// Config returns the configuration the corpus was planned with.
func (m *Multilingual) Config() MultilingualConfig { return m.cfg }

// Languages returns the corpus's languages, in the order of its Config.
func (m *Multilingual) Languages() []Language {
	out := make([]Language, len(m.langs))
	for i, l := range m.langs {
		out[i] = *l.Language
	}
	return out
}

// ID returns the id of the document at position i.
func (m *Multilingual) ID(i int) string {
	e := m.docs[i]
	return m.langs[e.lang].Code + "-" + pad(int(e.num), 6)
}

// URL returns the URL of the document at position i.
func (m *Multilingual) URL(i int) string {
	return "https://" + m.langs[m.docs[i].lang].Code + ".example.org/pages/" + m.ID(i) + ".html"
}

// Doc returns the document at position i, 0 <= i < Len().
func (m *Multilingual) Doc(i int) Doc {
	return Doc{ID: m.ID(i), URL: m.URL(i), Text: m.Text(i)}
}

// Text returns the text of the document at position i.
func (m *Multilingual) Text(i int) string {
	units, _, _, _ := m.units(i)
	return renderUnits(units)
}

// Truth returns the ground truth of the document at position i.
func (m *Multilingual) Truth(i int) Truth {
	e := m.docs[i]
	t := Truth{ID: m.ID(i), URL: m.URL(i), Kind: e.kind.kind(), Language: m.langs[e.lang].Code}
	if e.cluster >= 0 {
		t.Cluster = t.Language + "-c-" + pad(int(e.cluster), 6)
		t.Family = e.fam.family()
		if e.kind != kBase {
			t.Base = m.ID(int(m.bases[e.cluster]))
		}
	}
	if e.kind == kNear {
		_, edits, size, target := m.units(i)
		t.Mutations = e.mut.Names()
		t.TargetJaccard = target
		t.EditRate = float64(edits) / float64(max(1, size))
	}
	return t
}

// units returns the units of the document at position i (words or
// graphemes, separators, punctuation) and, for a near copy, its number of
// edits, the number of words or graphemes of its base, and the target
// similarity of a graded copy.
func (m *Multilingual) units(i int) (units []string, edits, size int, target float64) {
	e := m.docs[i]
	l := m.langs[e.lang]
	br := newRNG(m.cfg.Seed, streamBase, l.key<<32|uint64(e.source))
	units = l.compose(&br, int(e.length))
	if e.kind != kNear {
		return units, 0, 0, 0
	}
	for _, u := range units {
		if isUnit(u) {
			size++
		}
	}
	r := newRNG(m.cfg.Seed, streamMutate, l.key<<32|uint64(e.slot))
	var kinds []Mutation
	for _, k := range []Mutation{MutSubstitute, MutInsert, MutDelete} {
		if e.mut&k != 0 {
			kinds = append(kinds, k)
		}
	}
	switch e.fam {
	case famShort: // one edit of each kind
		edits = len(kinds)
	case famPlanted:
		edits = max(1, int(math.Round(float64(float64(size)*PlantedEditRate))))
	default:
		target = drawTarget(&r, GradedTargetMin)
		edits = gradedEdits(size, target)
	}
	// Edits that give back the base text (a unit inserted, then deleted)
	// are drawn again.
	base := renderUnits(units)
	var edited []string
	for range 16 {
		edited = slices.Clone(units)
		for k := range edits {
			kind := kinds[k%len(kinds)]
			if e.fam != famShort {
				kind = pick(&r, kinds)
			}
			edited = l.edit(&r, edited, kind)
		}
		if renderUnits(edited) != base {
			break
		}
	}
	return edited, edits, size, target
}
