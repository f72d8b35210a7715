package verify

import (
	"context"
	"fmt"
	"slices"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/internal/workfile"
	"github.com/neardup/neardup/pkg/records"
)

// blockJudge judges a verify task's blocks of edges (see verify), with
// as many sources of records, read at once, as srcs holds.
type blockJudge struct {
	p      job.Params
	rule   sketch.Rule
	bnd    sketch.Banding
	cache  *sigCache
	srcs   []recordSource
	window int
	res    *job.VerifyResult // what the edges judged found
	bits   *bitSets          // the sets of documents in many pairs, relabeled; nil: none
}

// addCounts adds what src counts (the pairs checked, pre-filtered,
// checked exactly, passed by their signatures, and the histograms) to dst.
func addCounts(dst, src *job.VerifyResult) {
	dst.Checked += src.Checked
	dst.Prefiltered += src.Prefiltered
	dst.Exact += src.Exact
	dst.SigPassed += src.SigPassed
	dst.SigPassedExact += src.SigPassedExact
	for i := range src.VerifiedHist {
		dst.VerifiedHist[i] += src.VerifiedHist[i]
		dst.RejectedHist[i] += src.RejectedHist[i]
	}
}

// parallelEdges is the least edges judged in more than one part at once.
const parallelEdges = 1024

// judgeBlock judges the edges of a block, whose first documents are
// heads, and returns its verified pairs and confirmed group members in
// (a, b) order, the edges' (each pair is one edge). Once a window is
// judged, the cache settles its entries and the first documents' (the
// sets of those with Bits go) and ends the window.
func (jb *blockJudge) judgeBlock(ctx context.Context, edges []records.Candidate, heads map[int64]bool) ([]records.Pair, []records.ExactMember, error) {
	first, err := jb.load(ctx, heads)
	if err != nil {
		return nil, nil, err
	}
	var deg map[int64]int32 // the documents' pairs, for bitSets
	if jb.bits != nil && jb.p.Verify == job.VerifyExact {
		deg = blockDegrees(edges)
	}
	// The edges whose second document is a first one are judged at once;
	// the others by second document, in windows.
	var out blockOut
	var now, rest []int
	for i, e := range edges {
		if _, ok := first[e.B]; ok {
			now = append(now, i)
		} else {
			rest = append(rest, i)
		}
	}
	if err := jb.judgeEdges(ctx, &out, edges, now, first, first, deg); err != nil {
		return nil, nil, err
	}
	jb.cache.settle(first, jb.bits.has)
	jb.cache.next()
	workfile.SortBySecond(edges, rest)
	for lo := 0; lo < len(rest); {
		need := map[int64]bool{}
		hi := lo
		for ; hi < len(rest); hi++ {
			b := edges[rest[hi]].B
			if !need[b] && len(need) == jb.window {
				break
			}
			need[b] = true
		}
		second, err := jb.load(ctx, need)
		if err != nil {
			return nil, nil, err
		}
		if err := jb.judgeEdges(ctx, &out, edges, rest[lo:hi], first, second, deg); err != nil {
			return nil, nil, err
		}
		jb.cache.settle(first, jb.bits.has)
		jb.cache.settle(second, jb.bits.has)
		jb.cache.next()
		lo = hi
	}
	pairs, members := out.inEdgeOrder(len(edges))
	return pairs, members, nil
}

// judgeEdges judges the edges of idx, whose first documents are in first
// and second in second, in parts at once (when they are many), adding
// what they found to out and to jb.res. The edges are judged first by
// their signatures (the sets of group claims loaded again first if
// dropped); those that need their exact similarity then wait for their
// documents that take part in many of the block's pairs (deg) to be
// relabeled (see bitSets), and are judged by it in parts again.
func (jb *blockJudge) judgeEdges(ctx context.Context, out *blockOut, edges []records.Candidate, idx []int, first, second map[int64]*sigEntry, deg map[int64]int32) error {
	parts := len(jb.srcs)
	outs := make([]blockOut, parts)
	tallies := make([]job.VerifyResult, parts)
	for k := range tallies {
		tallies[k] = job.VerifyResult{VerifiedHist: make([]int64, job.HistBins), RejectedHist: make([]int64, job.HistBins)}
	}
	if err := jb.fill(ctx, claimed(edges, idx, first, second)); err != nil {
		return err
	}
	waiting := make([][]exactEdge, parts)
	err := inParts(ctx, parts, len(idx), parallelEdges, func(_ context.Context, part, lo, hi int) error {
		// A part's pairs, and the edges it lets wait, are at most its
		// edges, and on pages of a template family nearly all of them:
		// growing the slices as they came cost the sites corpus at 0.5
		// a third of verify's judging.
		o := &outs[part]
		o.pairs, o.pairEdge = make([]records.Pair, 0, hi-lo), make([]int32, 0, hi-lo)
		waiting[part] = make([]exactEdge, 0, hi-lo)
		for _, i := range idx[lo:hi] {
			e := edges[i]
			x, wait, err := jb.judgeEdge(&outs[part], &tallies[part], int32(i), e, first[e.A], second[e.B])
			if err != nil {
				return err
			}
			if wait {
				waiting[part] = append(waiting[part], x)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	eb, err := jb.bits.prepare(ctx, waiting, deg, jb.fill)
	if err != nil {
		return err
	}
	// Each part judges the edges it let wait (about as many as the
	// others'), which follow those of the parts before it in eb.
	start := make([]int, parts)
	for part := 1; part < parts; part++ {
		start[part] = start[part-1] + len(waiting[part-1])
	}
	err = inParts(ctx, parts, parts, 1, func(_ context.Context, _, lo, hi int) error {
		for part := lo; part < hi; part++ {
			for i, x := range waiting[part] {
				inter, err := eb.intersection(start[part]+i, x)
				if err != nil {
					return err
				}
				if err := jb.judgeExact(&outs[part], &tallies[part], x, inter); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for k := range outs {
		out.parts = append(out.parts, &outs[k])
		addCounts(jb.res, &tallies[k])
	}
	return nil
}

// claimed returns the documents of the group claims among the edges of
// idx, whose sets a claim compares.
func claimed(edges []records.Candidate, idx []int, first, second map[int64]*sigEntry) map[int64]*sigEntry {
	docs := map[int64]*sigEntry{}
	for _, i := range idx {
		if e := edges[i]; e.Band == workfile.ClaimBand && first[e.A] != nil && second[e.B] != nil {
			docs[e.A], docs[e.B] = first[e.A], second[e.B]
		}
	}
	return docs
}

// blockOut collects a block's verified pairs and group members, each
// with the index of its edge in the block (at most one of either an
// edge), in parts as the goroutines that judged them found them.
type blockOut struct {
	pairs    []records.Pair
	pairEdge []int32
	members  []records.ExactMember
	memberOf []int32
	parts    []*blockOut // a block's: the parts' outputs
}

// inEdgeOrder returns the pairs and members of the block's parts in the
// order of their edges, of which the block has n: the edges' order is
// (a, b), and a member's edge is (group, doc). Each row is placed by its
// edge's index, not sorted: one copy of each, no comparison.
func (o *blockOut) inEdgeOrder(n int) ([]records.Pair, []records.ExactMember) {
	at := make([]int64, n)
	pairs := byEdge(o.parts, at, func(u *blockOut) ([]records.Pair, []int32) { return u.pairs, u.pairEdge })
	clear(at)
	members := byEdge(o.parts, at, func(u *blockOut) ([]records.ExactMember, []int32) { return u.members, u.memberOf })
	return pairs, members
}

// byEdge returns the rows of parts (rows gives a part's rows and their
// edges' indices) in the order of their edges. at is its scratch, one
// zero for each edge of the block: it records part<<32 | row, plus one,
// of each edge that gave a row.
func byEdge[T any](parts []*blockOut, at []int64, rows func(*blockOut) ([]T, []int32)) []T {
	total := 0
	for k, u := range parts {
		r, edge := rows(u)
		for j, i := range edge {
			at[i] = int64(k)<<32 | int64(j) + 1
		}
		total += len(r)
	}
	out := make([]T, 0, total)
	for _, x := range at {
		if x != 0 {
			r, _ := rows(parts[x>>32])
			out = append(out, r[int32(x-1)])
		}
	}
	return out
}

// exactEdge is a candidate pair that waits for its exact similarity,
// with its documents, what their signatures say and its edge's index in
// the block.
type exactEdge struct {
	e    records.Candidate
	a, b *sigEntry
	j    sketch.Screening
	at   int32
}

// judgeEdge judges edge e, of documents a and b: a candidate pair is
// pre-filtered, checked and, verified, added to out, or, with exact
// verification, returned to wait for its exact similarity (judgeExact);
// a group claim is confirmed (a difference of sets is a fingerprint
// collision, an error). What it finds is counted in t (its pairs
// checked, pre-filtered, and histograms).
func (jb *blockJudge) judgeEdge(out *blockOut, t *job.VerifyResult, at int32, e records.Candidate, a, b *sigEntry) (exactEdge, bool, error) {
	p := jb.p
	if a == nil || b == nil {
		return exactEdge{}, false, fmt.Errorf("no signature for document %d or %d", e.A, e.B)
	}
	if e.Band == workfile.ClaimBand {
		if p.Verify == job.VerifyExact && (a.dropped() || b.dropped()) {
			return exactEdge{}, false, fmt.Errorf("claim of %d by %d: %w", e.B, e.A, errDropped)
		}
		if p.Verify == job.VerifyExact && !slices.Equal(a.set, b.set) {
			return exactEdge{}, false, fmt.Errorf("documents %d (%s) and %d (%s) have the same 64-bit shingle-set fingerprint but different sets: a fingerprint collision", e.A, a.id, e.B, b.id)
		}
		out.members = append(out.members, records.ExactMember{Group: e.A, Doc: e.B, GroupID: a.id, ID: b.id, GroupURL: a.url, URL: b.url})
		out.memberOf = append(out.memberOf, at)
		return exactEdge{}, false, nil
	}
	t.Checked++
	j := jb.rule.Screen(a.sig, b.sig, a.n, b.n)
	switch {
	case j.Rejected:
		// Surely below the threshold: no exact check, but a
		// signature's pass counts as if there had been one.
		t.Prefiltered++
		if j.SigPass {
			t.SigPassed++
		}
		return exactEdge{}, false, nil
	case j.NeedsSets:
		return exactEdge{e: e, a: a, b: b, j: j, at: at}, true, nil
	}
	return exactEdge{}, false, jb.decide(out, t, at, e, a, b, j, j.Estimate, jb.rule.Method(), j.SigPass)
}

// judgeExact judges the pair x, whose shingle sets have inter values in
// common, by their exact similarity (the same float64 as
// shingle.Jaccard), counted in t.
func (jb *blockJudge) judgeExact(out *blockOut, t *job.VerifyResult, x exactEdge, inter int) error {
	sim, pass := jb.rule.Similarity(inter, x.a.n, x.b.n)
	t.Exact++
	if x.j.SigPass {
		t.SigPassed++
		if pass {
			t.SigPassedExact++
		}
	}
	return jb.decide(out, t, x.at, x.e, x.a, x.b, x.j, sim, "exact", pass)
}

// decide counts the pair of edge e (the block's edge at), of similarity
// sim by method, in t's histograms and, when it passes, adds it to out.
func (jb *blockJudge) decide(out *blockOut, t *job.VerifyResult, at int32, e records.Candidate, a, b *sigEntry, j sketch.Screening, sim float64, method string, pass bool) error {
	bin := job.HistBin(sim)
	if !pass {
		t.RejectedHist[bin]++
		return nil
	}
	t.VerifiedHist[bin]++
	pair := records.Pair{A: e.A, B: e.B, AID: a.id, BID: b.id, Similarity: sim, Estimate: j.Estimate, Method: method, AURL: a.url, BURL: b.url}
	pair.BandsCollided, pair.FirstBand = sketch.Collided(a.keys, b.keys)
	if pair.BandsCollided == 0 {
		return fmt.Errorf("candidate %d (%s) and %d (%s) share no band key: their signatures disagree with their band records", e.A, a.id, e.B, b.id)
	}
	if j.Hamming >= 0 {
		h := int32(j.Hamming)
		pair.Hamming = &h
	}
	out.pairs = append(out.pairs, pair)
	out.pairEdge = append(out.pairEdge, at)
	return nil
}
