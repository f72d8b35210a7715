package corpus

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// nearText returns the text of the near copy e at output position pos: its
// family's base text with the mutations of e applied.
func (g *Generator) nearText(e entry, pos int) string {
	r := newRNG(g.cfg.Seed, streamMutate, uint64(pos))
	paras := g.baseParagraphs(e.source)
	if e.mut&MutMove != 0 {
		paras = moveText(&r, paras)
	}
	toks := g.tokens(paras)
	if e.mut&MutSubstitute != 0 {
		for range g.edits(&r, toks) {
			if i := wordIndex(&r, toks); i >= 0 {
				toks[i] = g.replacement(&r, toks[i])
			}
		}
	}
	if e.mut&MutDelete != 0 {
		for range g.edits(&r, toks) {
			if i := wordIndex(&r, toks); i >= 0 {
				toks[i] = ""
			}
		}
	}
	if e.mut&MutInsert != 0 {
		for range g.edits(&r, toks) {
			toks = slices.Insert(toks, r.intn(len(toks)+1), pick(&r, g.pool.vocab))
		}
	}
	if e.mut&MutBoilerplate != 0 {
		toks = g.boilerplate(&r, toks)
	}
	return render(toks)
}

// edits returns how many words one word-level mutation touches: a rate
// drawn from [EditRateMin, EditRateMax] times the word count, at least 1.
func (g *Generator) edits(r *rng, toks []string) int {
	words := 0
	for _, t := range toks {
		if t != paraBreak && t != "" {
			words++
		}
	}
	bp := r.between(g.editMin, g.editMax)
	return max(1, (words*bp+5000)/10000)
}

// wordIndex returns the index of a random word token (not a paragraph
// break or a deleted word), or -1 if none was found.
func wordIndex(r *rng, toks []string) int {
	if len(toks) == 0 {
		return -1
	}
	for range 32 {
		i := r.intn(len(toks))
		if toks[i] != paraBreak && toks[i] != "" {
			return i
		}
	}
	return -1
}

// replacement returns a random vocabulary word that takes the place of
// old, keeping old's surrounding punctuation and initial capital.
func (g *Generator) replacement(r *rng, old string) string {
	isLetter := func(c rune) bool { return unicode.IsLetter(c) || unicode.IsDigit(c) }
	lead := strings.IndexFunc(old, isLetter)
	if lead < 0 {
		return pick(r, g.pool.vocab)
	}
	trail := strings.LastIndexFunc(old, isLetter)
	_, size := utf8.DecodeRuneInString(old[trail:])
	w := pick(r, g.pool.vocab)
	if first, _ := utf8.DecodeRuneInString(old[lead:]); unicode.IsUpper(first) {
		w = strings.ToUpper(w[:1]) + w[1:]
	}
	return old[:lead] + w + old[trail+size:]
}

// moveText moves one paragraph (when there are several, half of the time)
// or one sentence to a different position. It returns new slices and
// leaves paras unchanged.
func moveText(r *rng, paras [][]int32) [][]int32 {
	if len(paras) >= 2 && r.chance(1, 2) {
		from := r.intn(len(paras))
		moved := paras[from]
		rest := slices.Delete(slices.Clone(paras), from, from+1)
		to := r.intn(len(rest))
		if to >= from {
			to++
		}
		return slices.Insert(rest, to, moved)
	}
	var flat []int32
	for _, p := range paras {
		flat = append(flat, p...)
	}
	if len(flat) < 2 {
		return paras
	}
	from := r.intn(len(flat))
	s := flat[from]
	flat = slices.Delete(flat, from, from+1)
	to := r.intn(len(flat))
	if to >= from {
		to++
	}
	flat = slices.Insert(flat, to, s)
	out := make([][]int32, len(paras))
	for i, p := range paras {
		out[i] = flat[:len(p):len(p)]
		flat = flat[len(p):]
	}
	return out
}

// boilerplate wraps toks in a site navigation header and one or two footer
// lines, as a page copied onto another site would have.
func (g *Generator) boilerplate(r *rng, toks []string) []string {
	headers := []string{
		"Home | News | About | Contact",
		"Home | Blog | Archive | About Us | Subscribe",
		"Skip to content Menu Home Articles Authors Contact",
		"Home › Library › Articles",
		"Sign in | Register | Help | Search",
		"Menu Home Latest Popular Topics Newsletter",
	}
	site := pick(r, g.pool.vocab)
	site = strings.ToUpper(site[:1]) + site[1:] + " " +
		pick(r, []string{"Press", "Media", "Journal", "Gazette", "Review", "Online", "Books", "Times"})
	year := strconv.Itoa(r.between(1998, 2024))
	footers := []string{
		"Copyright © " + year + " " + site + ". All rights reserved.",
		"© " + year + " " + site + " | Privacy Policy | Terms of Use",
		"Share this: Facebook Twitter Email Print",
		"Posted in Uncategorized | Leave a comment",
		"This article first appeared in " + site + ". Reprinted with permission.",
		"Related posts: More from " + site,
	}
	out := make([]string, 0, len(toks)+32)
	out = append(out, strings.Fields(pick(r, headers))...)
	out = append(out, paraBreak)
	out = append(out, toks...)
	first := r.intn(len(footers))
	out = append(out, paraBreak)
	out = append(out, strings.Fields(footers[first])...)
	if r.chance(1, 3) {
		second := r.intn(len(footers) - 1)
		if second >= first {
			second++
		}
		out = append(out, paraBreak)
		out = append(out, strings.Fields(footers[second])...)
	}
	return out
}
