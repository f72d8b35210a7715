package corpus

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Kind classifies a generated document in the ground truth.
type Kind string

// Document kinds recorded in the ground truth.
const (
	// KindUnique is a regular document with no planted copies.
	KindUnique Kind = "unique"
	// KindBase is the original of a planted family.
	KindBase Kind = "base"
	// KindNear is a mutated copy of its family's base.
	KindNear Kind = "near"
	// KindExact is a byte-identical copy of its family's base text.
	KindExact Kind = "exact"
	// KindShort is a short fragment of one sentence, with no planted copies.
	KindShort Kind = "short"
	// KindEmpty is an empty or punctuation-only document.
	KindEmpty Kind = "empty"
	// KindTemplate is a page of the template family: the shared template
	// around a unique part (see Config.TemplatePages).
	KindTemplate Kind = "template"
)

// Family says what kind of planted family a document belongs to.
type Family string

// Planted family kinds other than the regular one (recorded as "").
const (
	// FamilyShort is a family of short documents: a short base with near
	// copies of one or two word edits and exact copies.
	FamilyShort Family = "short"
	// FamilyTemplate is the template family.
	FamilyTemplate Family = "template"
	// FamilyPlanted is a family of a Multilingual corpus whose near copies
	// have about PlantedEditRate of their words or graphemes edited.
	FamilyPlanted Family = "planted"
)

// Mutation is a bit set of the edits applied to a near copy.
type Mutation uint8

// The edits a near copy can receive; a near copy gets a non-empty subset.
const (
	// MutSubstitute replaces a small fraction of words by vocabulary words.
	MutSubstitute Mutation = 1 << iota
	// MutInsert inserts vocabulary words at random positions.
	MutInsert
	// MutDelete deletes a small fraction of words.
	MutDelete
	// MutMove moves one sentence or one paragraph elsewhere.
	MutMove
	// MutBoilerplate adds a navigation header and a copyright footer.
	MutBoilerplate
)

// Names returns the names of the mutations in m, in a fixed order.
func (m Mutation) Names() []string {
	names := []string{"substitute", "insert", "delete", "move", "boilerplate"}
	var out []string
	for i, name := range names {
		if m&(1<<i) != 0 {
			out = append(out, name)
		}
	}
	return out
}

// Doc is one generated document.
type Doc struct {
	ID   string `json:"id"`
	URL  string `json:"url"`
	Text string `json:"text"`
}

// Truth is the ground-truth record of one document.
type Truth struct {
	// ID is the document id, as in Doc.ID.
	ID string `json:"id"`
	// URL is the document URL (the WARC-Target-URI in WARC/WET output).
	URL string `json:"url"`
	// Cluster names the planted family of the document, or is empty.
	Cluster string `json:"cluster"`
	// Kind says how the document was made.
	Kind Kind `json:"kind"`
	// Base is the id of the family's base document, for near and exact
	// copies.
	Base string `json:"base,omitempty"`
	// Mutations lists the edits applied to a near copy.
	Mutations []string `json:"mutations,omitempty"`
	// Family is the kind of the document's planted family: empty for a
	// regular family (and outside families), else short or template.
	Family Family `json:"family,omitempty"`
	// TargetJaccard is the similarity to its base that a graded near copy
	// was edited towards (see Config.TargetJaccardMin); 0 otherwise.
	TargetJaccard float64 `json:"target_jaccard,omitempty"`
	// Language is the code of the document's language in a Multilingual
	// corpus; empty in an English one.
	Language string `json:"language,omitempty"`
	// EditRate is, for a near copy of a Multilingual corpus, its number of
	// edits over the words or graphemes of its base (see Language).
	EditRate float64 `json:"edit_rate,omitempty"`
	// RecordID is the WARC-Record-ID of the document's record, for WARC and
	// WET output.
	RecordID string `json:"record_id,omitempty"`
}

// kindCode is the compact in-memory form of Kind.
type kindCode uint8

const (
	kUnique kindCode = iota
	kBase
	kNear
	kExact
	kShort
	kEmpty
	kTemplate
)

// kind returns the exported Kind of k.
func (k kindCode) kind() Kind {
	return [...]Kind{KindUnique, KindBase, KindNear, KindExact, KindShort, KindEmpty, KindTemplate}[k]
}

// famCode is the compact in-memory form of Family.
type famCode uint8

const (
	famRegular famCode = iota
	famShort
	famTemplate
	famPlanted
)

// family returns the exported Family of f.
func (f famCode) family() Family {
	return [...]Family{"", FamilyShort, FamilyTemplate, FamilyPlanted}[f]
}

// entry is the plan of one output position.
type entry struct {
	kind    kindCode
	fam     famCode
	mut     Mutation
	cluster int32 // family number, -1 when not in a family
	source  int32 // content origin, short-document slot or template page
}

// Generator produces a deterministic corpus. Doc and Truth are pure
// functions of the position, so documents can be produced in any order and
// concurrently. A Generator is safe for concurrent use.
type Generator struct {
	cfg        Config
	pool       *Pool
	docs       []entry
	bases      []int32 // output position of each family's base
	shortOrder []int32 // pool sentences in the order short documents use them
	editMin    int     // basis points
	editMax    int     // basis points
	tmpl       *templatePlan
}

// New plans a corpus of cfg.N documents drawn from pool.
func New(pool *Pool, cfg Config) (*Generator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("invalid corpus config: %w", err)
	}
	if pool == nil || pool.Len() < cfg.MaxSentences || len(pool.vocab) == 0 {
		return nil, fmt.Errorf("sentence pool too small for documents of up to %d sentences", cfg.MaxSentences)
	}
	g := &Generator{
		cfg:     cfg,
		pool:    pool,
		editMin: basisPoints(cfg.EditRateMin),
		editMax: basisPoints(cfg.EditRateMax),
	}
	g.plan()
	return g, nil
}

// Len returns the number of documents.
func (g *Generator) Len() int { return len(g.docs) }

// Config returns the configuration the corpus was planned with.
func (g *Generator) Config() Config { return g.cfg }

// Clusters returns the number of planted families.
func (g *Generator) Clusters() int { return len(g.bases) }

// plan decides, for every output position, what kind of document goes
// there, which family it belongs to and which mutations it receives.
func (g *Generator) plan() {
	c := g.cfg
	r := newRNG(c.Seed, streamPlan, 0)
	nEmpty := count(c.N, c.EmptyFraction)
	nShort := count(c.N, c.ShortFraction)
	famDocs := min(count(c.N, c.DupFraction), c.N-nEmpty-nShort)
	shortFamDocs := min(count(c.N, c.ShortDupFraction), c.N-nEmpty-nShort-famDocs)

	docs := make([]entry, 0, c.N)
	var copies []int32
	var origin, family int32
	// plant adds families of fam with left documents in all; next gives
	// each family's content source.
	plant := func(left int, fam famCode, next func() int32) {
		for left >= c.MinCluster {
			size := familySize(&r, left, c.MinCluster, c.MaxCluster)
			src := next()
			docs = append(docs, entry{kind: kBase, fam: fam, cluster: family, source: src})
			for range size - 1 {
				copies = append(copies, int32(len(docs)))
				docs = append(docs, entry{kind: kNear, fam: fam, cluster: family, source: src})
			}
			left -= size
			family++
		}
	}
	plant(famDocs, famRegular, func() int32 { origin++; return origin - 1 })
	shortSlot := int32(nShort) // short families take the slots after the short documents'
	plant(shortFamDocs, famShort, func() int32 { shortSlot++; return shortSlot - 1 })
	nExact := min(count(c.N, c.ExactFraction), len(copies))
	for i := range nExact {
		j := i + r.intn(len(copies)-i)
		copies[i], copies[j] = copies[j], copies[i]
		docs[copies[i]].kind = kExact
	}
	for _, k := range copies[nExact:] {
		switch {
		case docs[k].fam == famShort:
			docs[k].mut = drawShortEdits(&r)
		case c.TargetJaccardMin > 0:
			docs[k].mut = drawWordMutations(&r)
		default:
			docs[k].mut = drawMutations(&r)
		}
	}
	if c.TemplatePages > 0 {
		fams := int32(max(1, c.TemplateFamilies))
		for k := range int32(c.TemplatePages) {
			docs = append(docs, entry{kind: kTemplate, fam: famTemplate, cluster: family + k%fams, source: k})
		}
		family += fams
	}
	for range nEmpty {
		docs = append(docs, entry{kind: kEmpty, cluster: -1})
	}
	for k := range nShort {
		docs = append(docs, entry{kind: kShort, cluster: -1, source: int32(k)})
	}
	for len(docs) < c.N {
		docs = append(docs, entry{kind: kUnique, cluster: -1, source: origin})
		origin++
	}

	for i := len(docs) - 1; i > 0; i-- {
		j := r.intn(i + 1)
		docs[i], docs[j] = docs[j], docs[i]
	}
	separate(&r, docs)

	// Number families in order of first appearance.
	renumber := make([]int32, family)
	for i := range renumber {
		renumber[i] = -1
	}
	var next int32
	for i := range docs {
		cl := docs[i].cluster
		if cl < 0 {
			continue
		}
		if renumber[cl] < 0 {
			renumber[cl] = next
			next++
		}
		docs[i].cluster = renumber[cl]
	}
	g.bases = make([]int32, next)
	for i, d := range docs {
		if d.kind == kBase {
			g.bases[d.cluster] = int32(i)
		}
	}
	g.docs = docs

	sr := newRNG(c.Seed, streamShort, 1<<63)
	g.shortOrder = make([]int32, g.pool.Len())
	for i := range g.shortOrder {
		g.shortOrder[i] = int32(i)
	}
	for i := len(g.shortOrder) - 1; i > 0; i-- {
		j := sr.intn(i + 1)
		g.shortOrder[i], g.shortOrder[j] = g.shortOrder[j], g.shortOrder[i]
	}
	g.tmpl = g.planTemplate()
}

// familySize draws the size of the next family, lo to hi documents, when
// left documents remain for families (left >= lo): all of them when the
// rest would be too few for another family and left <= hi.
func familySize(r *rng, left, lo, hi int) int {
	size := min(r.between(lo, hi), left)
	if rest := left - size; rest > 0 && rest < lo && left <= hi {
		size = left
	}
	return size
}

// drawMutations picks the edits of a near copy: each of the five
// mutations independently with probability 2/5, redrawn until at least one
// is chosen (2.2 mutations per copy on average).
func drawMutations(r *rng) Mutation {
	for {
		var m Mutation
		for bit := range 5 {
			if r.chance(2, 5) {
				m |= 1 << bit
			}
		}
		if m != 0 {
			return m
		}
	}
}

// drawWordMutations picks the edit kinds of a graded near copy: each of
// substitution, insertion and deletion independently with probability 1/2,
// redrawn until at least one is chosen.
func drawWordMutations(r *rng) Mutation {
	for {
		var m Mutation
		for _, k := range []Mutation{MutSubstitute, MutInsert, MutDelete} {
			if r.chance(1, 2) {
				m |= k
			}
		}
		if m != 0 {
			return m
		}
	}
}

// drawShortEdits picks the edits of a near copy of a short document: one
// word edit (substitution, insertion or deletion) with probability 2/3,
// else two edits of different kinds. Each kind in the result is one edit.
func drawShortEdits(r *rng) Mutation {
	kinds := []Mutation{MutSubstitute, MutInsert, MutDelete}
	m := pick(r, kinds)
	if r.chance(1, 3) {
		for {
			if k := pick(r, kinds); k != m {
				return m | k
			}
		}
	}
	return m
}

// separate moves family members apart so that no two members of a family
// sit next to each other, when that is possible within a few tries.
func separate(r *rng, docs []entry) {
	n := len(docs)
	clash := func(i int) bool {
		cl := docs[i].cluster
		return cl >= 0 && ((i > 0 && docs[i-1].cluster == cl) || (i+1 < n && docs[i+1].cluster == cl))
	}
	for i := 1; i < n; i++ {
		if docs[i].cluster < 0 || docs[i].cluster != docs[i-1].cluster {
			continue
		}
		for range 64 {
			j := r.intn(n)
			docs[i], docs[j] = docs[j], docs[i]
			if !clash(i) && !clash(j) && (i == 0 || !clash(i-1)) {
				break
			}
			docs[i], docs[j] = docs[j], docs[i]
		}
	}
}

// ID returns the id of the document at position i.
func ID(i int) string {
	return "doc-" + pad(i, 7)
}

// clusterID returns the name of family cl.
func clusterID(cl int32) string {
	return "c-" + pad(int(cl), 7)
}

// pad formats n in decimal with at least width digits.
func pad(n, width int) string {
	s := strconv.Itoa(n)
	if len(s) < width {
		s = strings.Repeat("0", width-len(s)) + s
	}
	return s
}

// Doc returns the document at position i, 0 <= i < Len().
func (g *Generator) Doc(i int) Doc {
	return Doc{ID: ID(i), URL: g.URL(i), Text: g.Text(i)}
}

// Text returns the text of the document at position i.
func (g *Generator) Text(i int) string {
	e := g.docs[i]
	switch {
	case e.kind == kTemplate:
		return g.templateText(e.source)
	case e.fam == famShort && e.kind == kNear:
		return g.shortNearText(e, i)
	case e.fam == famShort:
		return g.shortText(e.source)
	case e.kind == kNear && g.cfg.TargetJaccardMin > 0:
		return g.gradedText(e, i)
	}
	switch e.kind {
	case kNear:
		return g.nearText(e, i)
	case kShort:
		return g.shortText(e.source)
	case kEmpty:
		r := newRNG(g.cfg.Seed, streamMutate, uint64(i))
		return pick(&r, []string{"", "", " ", "...", "* * *", "—", "!!!", "?", "- - -", "|", "\n\n", "(  )"})
	default:
		return render(g.tokens(g.baseParagraphs(e.source)))
	}
}

// Truth returns the ground truth of the document at position i. RecordID
// is left empty; writers of WARC formats fill it in.
func (g *Generator) Truth(i int) Truth {
	e := g.docs[i]
	t := Truth{ID: ID(i), URL: g.URL(i), Kind: e.kind.kind()}
	if e.cluster >= 0 {
		t.Cluster = clusterID(e.cluster)
		if e.kind != kBase && e.kind != kTemplate {
			t.Base = ID(int(g.bases[e.cluster]))
		}
		t.Family = e.fam.family()
	}
	if e.kind == kNear {
		t.Mutations = e.mut.Names()
		if e.fam == famRegular && g.cfg.TargetJaccardMin > 0 {
			r := newRNG(g.cfg.Seed, streamMutate, uint64(i))
			t.TargetJaccard = g.targetJaccard(&r)
		}
	}
	return t
}

// URL returns the URL of the document at position i. Every document has
// its own URL on a host under a reserved example domain.
func (g *Generator) URL(i int) string {
	r := newRNG(g.cfg.Seed, streamURL, uint64(i))
	v := g.pool.vocab
	var b strings.Builder
	b.WriteString("https://www.")
	b.WriteString(pick(&r, v))
	b.WriteByte('-')
	b.WriteString(pick(&r, v))
	b.WriteByte('.')
	b.WriteString(pick(&r, []string{"example", "example.com", "example.org", "example.net"}))
	b.WriteByte('/')
	b.WriteString(pick(&r, []string{"news", "blog", "articles", "stories", "archive", "library", "texts", "essays", "notes"}))
	b.WriteByte('/')
	for range 3 {
		b.WriteString(pick(&r, v))
		b.WriteByte('-')
	}
	b.WriteString(strconv.Itoa(i))
	b.WriteString(".html")
	return b.String()
}

// Date returns the capture time of the document at position i: a whole
// second within 2024, UTC.
func (g *Generator) Date(i int) time.Time {
	r := newRNG(g.cfg.Seed, streamRecord, uint64(i)<<2|3)
	start := time.Date(2024, time.January, 1, 0, 0, 0, 0, time.UTC)
	return start.Add(time.Duration(r.intn(366*24*3600)) * time.Second)
}

// baseParagraphs returns the pooled sentences of the regular document with
// the given content origin, grouped into paragraphs of 2 to 6 sentences.
// The sentence count is the smaller of two uniform draws from
// [MinSentences, MaxSentences], which favours shorter documents (with the
// defaults, 10 to 40 sentences, the mean is about 20).
func (g *Generator) baseParagraphs(origin int32) [][]int32 {
	r := newRNG(g.cfg.Seed, streamBase, uint64(origin))
	lo, hi := g.cfg.MinSentences, g.cfg.MaxSentences
	n := min(r.between(lo, hi), r.between(lo, hi), g.pool.Len())
	chosen := make([]int32, 0, n)
	for len(chosen) < n {
		s := int32(r.intn(g.pool.Len()))
		if !slices.Contains(chosen, s) {
			chosen = append(chosen, s)
		}
	}
	var paras [][]int32
	for rest := chosen; len(rest) > 0; {
		k := min(r.between(2, 6), len(rest))
		paras = append(paras, rest[:k:k])
		rest = rest[k:]
	}
	return paras
}

// paraBreak is the token that separates paragraphs in a token list.
const paraBreak = "\n\n"

// tokens flattens paragraphs of sentences into words, with paraBreak
// between paragraphs.
func (g *Generator) tokens(paras [][]int32) []string {
	n := len(paras)
	for _, p := range paras {
		for _, s := range p {
			n += len(g.pool.sentences[s])
		}
	}
	toks := make([]string, 0, n+32)
	for i, p := range paras {
		if i > 0 {
			toks = append(toks, paraBreak)
		}
		for _, s := range p {
			toks = append(toks, g.pool.sentences[s]...)
		}
	}
	return toks
}

// render joins tokens with single spaces and paragraphs with a blank line.
// Empty tokens (deleted words) are skipped.
func render(toks []string) string {
	size := 0
	for _, t := range toks {
		size += len(t) + 1
	}
	var b strings.Builder
	b.Grow(size)
	pending := false
	for _, t := range toks {
		switch {
		case t == "":
		case t == paraBreak:
			pending = b.Len() > 0
		default:
			if pending {
				b.WriteString(paraBreak)
				pending = false
			} else if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(t)
		}
	}
	return b.String()
}

// shortText returns the text of short-document slot k: a window of
// ShortMinWords to ShortMaxWords words of one pooled sentence. Slots use
// distinct sentences until the pool is exhausted, so short documents are
// not accidental duplicates of each other.
func (g *Generator) shortText(slot int32) string {
	words := g.pool.sentences[g.shortOrder[int(slot)%len(g.shortOrder)]]
	r := newRNG(g.cfg.Seed, streamShort, uint64(slot))
	n := min(r.between(g.cfg.ShortMinWords, g.cfg.ShortMaxWords), len(words))
	start := r.intn(len(words) - n + 1)
	return strings.Join(words[start:start+n], " ")
}
