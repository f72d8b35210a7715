package accuracy

import (
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/neardup/neardup/internal/corpus"
	"github.com/neardup/neardup/pkg/shingle"
)

// ShortWords is the length, in tokens of the document model, below which a
// document counts as short: a pair is short when both documents are.
const ShortWords = 40

// Doc is what the ground truth knows of one document.
type Doc struct {
	ID       string
	Set      []uint64 // canonical shingle set (ShingleSet)
	Words    int      // tokens of the document model
	Template bool     // a page of the template family
	Language string   // the code of its language in a multilingual corpus
}

// Truth is the exact ground truth of a corpus: every pair of documents
// whose Jaccard similarity is at least MinJ.
type Truth struct {
	Docs  []Doc
	MinJ  float64
	Pairs []Pair // sorted by (A, B)

	byID map[string]int32
	j    map[uint64]float64 // pairKey -> J, for every pair in Pairs
}

// NewTruth joins docs exactly (Join) and indexes the result.
func NewTruth(docs []Doc, minJ float64) (*Truth, error) {
	sets := make([][]uint64, len(docs))
	for i, d := range docs {
		sets[i] = d.Set
	}
	pairs, err := Join(sets, minJ)
	if err != nil {
		return nil, err
	}
	return newIndexed(docs, minJ, pairs)
}

// newIndexed returns the truth of docs and their pairs, indexed.
func newIndexed(docs []Doc, minJ float64, pairs []Pair) (*Truth, error) {
	t := &Truth{Docs: docs, MinJ: minJ, Pairs: pairs,
		byID: make(map[string]int32, len(docs)), j: make(map[uint64]float64, len(pairs))}
	for i, d := range docs {
		if _, dup := t.byID[d.ID]; dup {
			return nil, fmt.Errorf("document id %q appears twice", d.ID)
		}
		t.byID[d.ID] = int32(i)
	}
	for _, p := range pairs {
		t.j[pairKey(p.A, p.B)] = p.J
	}
	return t, nil
}

// Subset returns the truth of the documents for which keep holds, in
// their order, with the pairs of two such documents.
func (t *Truth) Subset(keep func(Doc) bool) *Truth {
	index := make([]int32, len(t.Docs))
	var docs []Doc
	for i, d := range t.Docs {
		index[i] = -1
		if keep(d) {
			index[i] = int32(len(docs))
			docs = append(docs, d)
		}
	}
	var pairs []Pair
	for _, p := range t.Pairs {
		if a, b := index[p.A], index[p.B]; a >= 0 && b >= 0 {
			pairs = append(pairs, Pair{A: a, B: b, J: p.J})
		}
	}
	sub, _ := newIndexed(docs, t.MinJ, pairs) // t's ids are already distinct
	return sub
}

// DocsOf computes the ground-truth view of every document of g, with the
// shingle options of the job, on all CPUs.
func DocsOf(g corpus.Source, o shingle.Options) []Doc {
	docs := make([]Doc, g.Len())
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(docs); i += workers {
				text := g.Text(i)
				tr := g.Truth(i)
				docs[i] = Doc{ID: tr.ID, Set: ShingleSet(text, o), Words: len(shingle.Tokens(text, o)),
					Template: tr.Family == corpus.FamilyTemplate, Language: tr.Language}
			}
		}()
	}
	wg.Wait()
	return docs
}

// pairKey is the map key of the unordered pair {a, b}.
func pairKey(a, b int32) uint64 {
	if a > b {
		a, b = b, a
	}
	return uint64(uint32(a))<<32 | uint64(uint32(b))
}

// Index returns the index of the document with the given id.
func (t *Truth) Index(id string) (int32, bool) {
	i, ok := t.byID[id]
	return i, ok
}

// Jaccard returns the exact similarity of documents a and b.
func (t *Truth) Jaccard(a, b int32) float64 {
	if j, ok := t.j[pairKey(a, b)]; ok {
		return j
	}
	sa, sb := t.Docs[a].Set, t.Docs[b].Set
	if len(sa) == 0 || len(sb) == 0 {
		return 0
	}
	return shingle.Jaccard(sa, sb)
}

// Short reports whether the pair {a, b} is short: both documents have
// fewer than ShortWords tokens.
func (t *Truth) Short(a, b int32) bool {
	return t.Docs[a].Words < ShortWords && t.Docs[b].Words < ShortWords
}

// Template reports whether both documents are pages of the template family.
func (t *Truth) Template(a, b int32) bool {
	return t.Docs[a].Template && t.Docs[b].Template
}

// LengthBin counts the documents whose token count is in [Lo, Hi); Hi 0
// means no upper bound.
type LengthBin struct {
	Lo   int `json:"lo"`
	Hi   int `json:"hi,omitempty"`
	Docs int `json:"docs"`
}

// LengthHistogram counts documents by tokens: 0, 1-4, 5-19, 20-39, 40-99,
// 100-199, 200-399, 400-799, 800 and more.
func (t *Truth) LengthHistogram() []LengthBin {
	lengthEdges := [...]int{0, 1, 5, 20, 40, 100, 200, 400, 800}
	bins := make([]LengthBin, len(lengthEdges))
	for k, lo := range lengthEdges {
		bins[k].Lo = lo
		if k+1 < len(lengthEdges) {
			bins[k].Hi = lengthEdges[k+1]
		}
	}
	for _, d := range t.Docs {
		k := len(lengthEdges) - 1
		for k > 0 && d.Words < lengthEdges[k] {
			k--
		}
		bins[k].Docs++
	}
	return bins
}

// Spread summarises a distribution of similarities.
type Spread struct {
	Docs   int     `json:"docs"`
	Pairs  int     `json:"pairs"`
	Below  int     `json:"below_0.5"`
	Min    float64 `json:"min"`
	P10    float64 `json:"p10"`
	Median float64 `json:"median"`
	P90    float64 `json:"p90"`
	Max    float64 `json:"max"`
}

// TemplateSpread computes the exact similarity of every pair of template
// pages (by brute force: the join only sees pairs above MinJ).
func (t *Truth) TemplateSpread() Spread {
	var pages []int32
	for i, d := range t.Docs {
		if d.Template {
			pages = append(pages, int32(i))
		}
	}
	var js []float64
	for x, a := range pages {
		for _, b := range pages[x+1:] {
			js = append(js, t.Jaccard(a, b))
		}
	}
	if len(js) == 0 {
		return Spread{}
	}
	slices.Sort(js)
	s := Spread{Docs: len(pages), Pairs: len(js), Min: js[0], P10: js[len(js)/10], Median: js[len(js)/2], P90: js[len(js)*9/10], Max: js[len(js)-1]}
	for _, j := range js {
		if j < 0.5 {
			s.Below++
		}
	}
	return s
}
