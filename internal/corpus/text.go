package corpus

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

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
