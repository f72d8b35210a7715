package stage

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/pkg/records"
	"github.com/neardup/neardup/pkg/shingle"
)

// blockJudge judges a verify task's blocks of edges (see verify).
type blockJudge struct {
	p          job.Params
	bnd        banding
	chunk      int
	minMatches int // the pre-filter's least equal values; -1: none
	res        *job.VerifyResult
	cache      *sigCache
	sigs       recordSource
	window     int
	// keySlab holds the block's band keys (see bandKeys).
	keySlab []uint64
}

// judgeBlock judges the edges of a block, whose first documents are
// heads, and returns its verified pairs and confirmed group members in
// the edges' order.
func (jb *blockJudge) judgeBlock(ctx context.Context, edges []records.Candidate, heads map[int64]bool) ([]records.Pair, []records.ExactMember, error) {
	jb.keySlab = jb.keySlab[:0]
	first, err := loadSigs(ctx, jb.sigs, jb.p, heads, jb.cache)
	if err != nil {
		return nil, nil, err
	}
	// The edges whose second document is not a first one, by second
	// document; the others are judged at once.
	var out blockOut
	var rest []int
	for i, e := range edges {
		if b, ok := first[e.B]; ok {
			if err := jb.judgeEdge(&out, i, e, first[e.A], b); err != nil {
				return nil, nil, err
			}
			continue
		}
		rest = append(rest, i)
	}
	slices.SortFunc(rest, func(x, y int) int {
		if d := cmp.Compare(edges[x].B, edges[y].B); d != 0 {
			return d
		}
		return cmp.Compare(x, y)
	})
	// Windows of second documents.
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
		second, err := loadSigs(ctx, jb.sigs, jb.p, need, jb.cache)
		if err != nil {
			return nil, nil, err
		}
		for _, i := range rest[lo:hi] {
			e := edges[i]
			if err := jb.judgeEdge(&out, i, e, first[e.A], second[e.B]); err != nil {
				return nil, nil, err
			}
		}
		lo = hi
	}
	pairs, members := out.sorted()
	return pairs, members, nil
}

// blockOut collects a block's verified pairs and group members with the
// index of their edge.
type blockOut struct {
	pairs    []records.Pair
	pairAt   []int
	members  []records.ExactMember
	memberAt []int
}

// sorted returns the pairs and members in their edges' order.
func (o *blockOut) sorted() ([]records.Pair, []records.ExactMember) {
	return byEdge(o.pairs, o.pairAt), byEdge(o.members, o.memberAt)
}

// byEdge returns rows ordered by at, the index of each row's edge.
func byEdge[T any](rows []T, at []int) []T {
	if slices.IsSorted(at) {
		return rows
	}
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int { return cmp.Compare(at[x], at[y]) })
	out := make([]T, len(rows))
	for i, j := range order {
		out[i] = rows[j]
	}
	return out
}

// judgeEdge judges edge i, e, of documents a and b: a candidate pair is
// pre-filtered, checked and, verified, added to out; a group claim is
// confirmed (a difference of sets is a fingerprint collision, an error).
func (jb *blockJudge) judgeEdge(out *blockOut, i int, e records.Candidate, a, b *sigEntry) error {
	p, res := jb.p, jb.res
	if a == nil || b == nil {
		return fmt.Errorf("no signature for document %d or %d", e.A, e.B)
	}
	if e.Band == claimBand {
		if p.Verify == job.VerifyExact && !slices.Equal(a.set, b.set) {
			return fmt.Errorf("documents %d (%s) and %d (%s) have the same 64-bit shingle-set fingerprint but different sets: a fingerprint collision", e.A, a.id, e.B, b.id)
		}
		out.members = append(out.members, records.ExactMember{Group: e.A, Doc: e.B, GroupID: a.id, ID: b.id, GroupURL: a.url, URL: b.url})
		out.memberAt = append(out.memberAt, i)
		return nil
	}
	res.Checked++
	j := judge(p, a, b)
	if jb.minMatches >= 0 && j.matches < jb.minMatches || p.Method == job.MethodSimHash && p.Verify == job.VerifyExact && !j.pass {
		res.Prefiltered++
		return nil
	}
	if p.Verify == job.VerifyExact && !sizesAllow(len(a.set), len(b.set), p.Threshold) {
		// Surely below the threshold: no exact check, but the
		// signature's verdict counts as if there had been one.
		res.Prefiltered++
		if j.pass {
			res.SigPassed++
		}
		return nil
	}
	sim, method, pass := j.estimate, p.Method.String(), j.pass
	if p.Verify == job.VerifyExact {
		sim, method = shingle.Jaccard(a.set, b.set), "exact"
		res.Exact++
		if j.pass {
			res.SigPassed++
			if sim >= p.Threshold {
				res.SigPassedExact++
			}
		}
		pass = sim >= p.Threshold
	}
	bin := job.HistBin(sim)
	if !pass {
		res.RejectedHist[bin]++
		return nil
	}
	res.VerifiedHist[bin]++
	pair := records.Pair{A: e.A, B: e.B, AID: a.id, BID: b.id, Similarity: sim, Estimate: j.estimate, Method: method, AURL: a.url, BURL: b.url}
	pair.BandsCollided, pair.FirstBand = collided(a.bandKeys(jb.bnd, &jb.keySlab), b.bandKeys(jb.bnd, &jb.keySlab))
	if pair.BandsCollided == 0 {
		return fmt.Errorf("candidate %d (%s) and %d (%s) share no band key: their signatures disagree with their band records", e.A, a.id, e.B, b.id)
	}
	if j.hamming >= 0 {
		h := int32(j.hamming)
		pair.Hamming = &h
	}
	out.pairs = append(out.pairs, pair)
	out.pairAt = append(out.pairAt, i)
	return nil
}
