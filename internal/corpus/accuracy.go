package corpus

import (
	"slices"
	"strings"
)

// This file holds the document kinds that only AccuracyConfig-style
// configurations use: graded near copies, families of short documents and
// the template family. Each is off at the zero value of its Config field.

// templatePlan is the plan of the template family: the template's words
// and, for every page, where its unique part starts in a permutation of
// the pool's sentences.
type templatePlan struct {
	// words are the families' templates: header words[f][:cut], footer
	// words[f][cut:].
	words [][]string
	cut   int
	order []int32 // pool sentences: the template's first, then the unique parts'
	pages []templatePage
}

// templatePage is the unique part of one template page: words words from
// the sentences order[start], order[start+1], ... (wrapping around).
type templatePage struct {
	start int32
	words int32
}

// planTemplate plans the template family, or returns nil when there is
// none. The template takes the first sentences of a random permutation of
// the pool, and the pages' unique parts take the following ones in turn,
// so no sentence is shared between two pages, or between a page's unique
// part and the template, until the pool runs out and the order wraps.
// With several families, their templates take the first sentences in turn.
func (g *Generator) planTemplate() *templatePlan {
	c := g.cfg
	if c.TemplatePages == 0 {
		return nil
	}
	r := newRNG(c.Seed, streamTemplate, 0)
	n := g.pool.Len()
	t := &templatePlan{order: make([]int32, n), pages: make([]templatePage, c.TemplatePages)}
	for i := range t.order {
		t.order[i] = int32(i)
	}
	for i := n - 1; i > 0; i-- {
		j := r.intn(i + 1)
		t.order[i], t.order[j] = t.order[j], t.order[i]
	}
	next := 0
	t.words = make([][]string, max(1, c.TemplateFamilies))
	for f := range t.words {
		var w []string
		for len(w) < c.TemplateWords {
			w = append(w, g.pool.sentences[t.order[next%n]]...)
			next++
		}
		t.words[f] = w[:c.TemplateWords:c.TemplateWords]
	}
	t.cut = c.TemplateWords / 4
	lo, span := int64(c.TemplateUniqueMinWords), int64(c.TemplateUniqueMaxWords-c.TemplateUniqueMinWords)
	const scale = 1000
	for k := range t.pages {
		x := int64(r.intn(scale + 1))
		u := int(lo + span*x*x/(scale*scale))
		t.pages[k] = templatePage{start: int32(next % n), words: int32(u)}
		for got := 0; got < u; next++ {
			got += len(g.pool.sentences[t.order[next%n]])
		}
	}
	return t
}

// templateText returns the text of template page k: the template's header,
// the page's unique part and the template's footer, as three paragraphs.
func (g *Generator) templateText(k int32) string {
	t := g.tmpl
	p := t.pages[k]
	words := t.words[int(k)%len(t.words)]
	toks := make([]string, 0, len(words)+int(p.words)+2)
	toks = append(toks, words[:t.cut]...)
	toks = append(toks, paraBreak)
	for s, left := int(p.start), int(p.words); left > 0; s = (s + 1) % len(t.order) {
		w := g.pool.sentences[t.order[s]]
		w = w[:min(len(w), left)]
		toks = append(toks, w...)
		left -= len(w)
	}
	toks = append(toks, paraBreak)
	toks = append(toks, words[t.cut:]...)
	return render(toks)
}

// shortNearText returns the text of the near copy e, at output position
// pos, of a short document: the base fragment with one edit of each kind
// in e.mut (substitution, then deletion, then insertion). Edits that
// happen to give back the base text (a word deleted and the same word
// inserted in its place) are drawn again.
func (g *Generator) shortNearText(e entry, pos int) string {
	r := newRNG(g.cfg.Seed, streamMutate, uint64(pos))
	base := g.shortText(e.source)
	var text string
	for range 16 {
		toks := strings.Fields(base)
		for _, k := range []Mutation{MutSubstitute, MutDelete, MutInsert} {
			if e.mut&k != 0 {
				toks = g.wordEdit(&r, toks, k)
			}
		}
		if text = render(toks); text != base {
			break
		}
	}
	return text
}

// gradedText returns the text of the graded near copy e at output position
// pos: its base with gradedEdits word edits, each of a kind drawn from
// e.mut.
func (g *Generator) gradedText(e entry, pos int) string {
	r := newRNG(g.cfg.Seed, streamMutate, uint64(pos))
	target := g.targetJaccard(&r)
	toks := g.tokens(g.baseParagraphs(e.source))
	var kinds []Mutation
	for _, k := range []Mutation{MutSubstitute, MutInsert, MutDelete} {
		if e.mut&k != 0 {
			kinds = append(kinds, k)
		}
	}
	words := 0
	for _, t := range toks {
		if t != paraBreak {
			words++
		}
	}
	for range gradedEdits(words, target) {
		toks = g.wordEdit(&r, toks, pick(&r, kinds))
	}
	return render(toks)
}

// targetJaccard draws the target similarity of a graded near copy: a
// multiple of 1e-6 uniform in [TargetJaccardMin, 1]. It is the first draw
// of the copy's mutation stream, so Truth can recompute it.
func (g *Generator) targetJaccard(r *rng) float64 {
	return drawTarget(r, g.cfg.TargetJaccardMin)
}

// drawTarget draws a multiple of 1e-6 uniform in [lo, 1], lo rounded to
// basis points, with integer arithmetic only.
func drawTarget(r *rng, lo float64) float64 {
	const scale = 1_000_000
	from := int64(basisPoints(lo)) * (scale / 10000)
	x := int64(r.intn(scale + 1))
	return float64(from+(scale-from)*x/scale) / scale
}

// gradedEdits returns how many word edits at random positions give a copy
// of a words-word document an expected word 5-gram Jaccard similarity of
// target to it, at least 1. An edit breaks the 5 shingles around it, so
// after m edits a shingle survives with probability q = (1-1/words)^(5m),
// and the copy, of about the same size, has Jaccard similarity q/(2-q):
// the answer is the m that brings q closest to 2·target/(1+target). Only
// IEEE-exact operations are used, so the count is the same on every
// platform.
func gradedEdits(words int, target float64) int {
	if words < 2 {
		return 1
	}
	q := float64(2*target) / float64(1+target)
	step := float64(words-1) / float64(words)
	step5 := step * step * step * step * step
	m, s, prev := 0, 1.0, 1.0
	for s > q && m < words {
		prev, s = s, s*step5
		m++
	}
	if m > 0 && prev-q < q-s {
		m--
	}
	return max(1, m)
}

// wordEdit applies one word edit of kind k (MutSubstitute, MutInsert or
// MutDelete) at a random position of toks and returns the tokens. A
// substituted word always changes.
func (g *Generator) wordEdit(r *rng, toks []string, k Mutation) []string {
	switch k {
	case MutSubstitute:
		if i := wordIndex(r, toks); i >= 0 {
			old := strings.ToLower(toks[i])
			for range 8 {
				if w := g.replacement(r, toks[i]); strings.ToLower(w) != old {
					toks[i] = w
					break
				}
			}
		}
	case MutDelete:
		if i := wordIndex(r, toks); i >= 0 {
			toks[i] = ""
		}
	case MutInsert:
		toks = slices.Insert(toks, r.intn(len(toks)+1), pick(r, g.pool.vocab))
	}
	return toks
}
