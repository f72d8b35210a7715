package corpus

import (
	"fmt"
	"strconv"
	"strings"
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
