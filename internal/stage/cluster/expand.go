package cluster

import (
	"context"
	"fmt"
	"math"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/workfile"
	"github.com/neardup/neardup/pkg/records"
)

// expander writes pairs/: for each verify task, the verified pairs of
// representatives expanded to every member of the two groups (an
// exact-duplicate document has the same similarity as its
// representative), and the pairs inside each group whose representative
// is in the task's chunk (similarity 1). In a bounded cluster only the
// pairs of the kept document are written. Each pair is written once, in
// the file of the verify task that found it, sorted by (a, b).
//
// An expander serves one verify task: it holds the exact groups its pairs
// and groups name, and where the first document of a pair or a group's
// representative is in a bounded cluster, that cluster and its kept
// document.
type expander struct {
	reps    []int64 // the representatives of the task's groups, ascending
	groups  map[int64][]groupMember
	repOf   map[int64]groupMember // the task's representatives
	bounded map[int64]keptDoc
	// unpublished are the earlier jobs' documents their jobs dropped, of
	// the task's pairs.
	unpublished map[int64]bool
	spec        *job.Spec
	// dense: the pairs/ file is Dense (see densePairs).
	dense bool
	// jobs names the earlier jobs (AJob), and published and dropped are
	// what APublished points to.
	jobs               jobNames
	published, dropped bool
}

// newExpander returns an expander for a task of the job of spec, its
// groups and lookups to be filled in.
func newExpander(spec *job.Spec) *expander {
	return &expander{groups: map[int64][]groupMember{}, repOf: map[int64]groupMember{}, bounded: map[int64]keptDoc{},
		unpublished: map[int64]bool{}, spec: spec, jobs: newJobNames(spec), published: true}
}

// keptDoc is a bounded cluster and its kept document.
type keptDoc struct{ cluster, doc int64 }

// expanded is what one pairs/ file holds: its pairs, and those of kept
// documents of bounded clusters, by cluster.
type expanded struct {
	listed     int64
	against    int64 // pairs with an earlier job's document
	keptListed map[int64]int64
	// examples considers every listed pair as the report's example
	// (manifest.ExampleChooser): chosen here, the job need not read
	// pairs/ again.
	examples *manifest.ExampleChooser
}

// identical is the pair row of two documents with the same shingle set:
// similarity 1, as exact verification, the signature estimate (equal
// signatures) and SimHash (distance 0) all say, colliding in every band.
func (x *expander) identical() records.Pair {
	pr := records.Pair{Similarity: 1, Estimate: 1, Method: x.spec.Params.Method.String(), BandsCollided: int32(x.spec.Params.Bands), FirstBand: 0}
	if x.spec.Params.Verify == job.VerifyExact {
		pr.Method = "exact"
	}
	if x.spec.Params.Method == job.MethodSimHash {
		pr.Hamming = new(int32)
	}
	return pr
}

// group returns the documents of the group represented by rep, rep first.
func (x *expander) group(rep groupMember) []groupMember {
	return append([]groupMember{rep}, x.groups[rep.doc]...)
}

func (x *expander) write(ctx context.Context, st storage.FS, v verifyFiles) (expanded, error) {
	return x.writeSpilling(ctx, st, v, expandSpillRows)
}

// expandSpillRows bounds the pairs an expansion holds waiting for their
// place in the file (see pairSink): beyond it, sorted runs go to the work
// area and are merged into the pairs/ file.
const expandSpillRows = 1 << 16

// pairsGroupRows bounds the rows of a row group of a pairs/ file. Its
// writer holds the row group's pages compressed (a few bytes a row: about
// 20 MB for a full group of template pages' pairs), and each row group
// writes the dictionaries of a_url and b_url again: in the templated job
// at 0.5 (1.37 million pairs, 10,000 to 18,000 urls a dictionary) row
// groups of 65,536 rows made b_url 36% of pairs/' bytes, dictionaries
// mostly; with 2^20, pairs/ is 26% smaller (25.3 -> 18.7 MB) and writing
// it takes a fifth less CPU, for the same Go heap (gctrace).
const pairsGroupRows = 1 << 20

// writeSpilling is write holding at most spill pairs waiting. The
// verified pairs arrive sorted by (a, b), and each pair of
// representatives is written in its turn; the pairs the expansion adds
// (a member of either group in place of its representative, or two
// documents of one group) sort after the verified pair or the
// representative they come from, so they wait in the sink until the
// verified pairs pass them.
func (x *expander) writeSpilling(ctx context.Context, st storage.FS, v verifyFiles, spill int) (expanded, error) {
	res := expanded{keptListed: map[int64]int64{}, examples: manifest.NewExampleChooser(x.spec.Params.Threshold)}
	s := newPairSink(ctx, st, v.Chunk, spill, x.dense)
	next := 0 // the groups of x.reps[:next] have given their pairs
	groupsTo := func(doc int64) error {
		for ; next < len(x.reps) && x.reps[next] <= doc; next++ {
			if err := x.groupPairs(x.reps[next], &res, s.add); err != nil {
				return err
			}
		}
		return nil
	}
	if v.Pairs != nil {
		err := workfile.ReadVerifiedPairs(ctx, st, v.Pairs, func(rows []records.Pair) error {
			for _, r := range rows {
				// A group's pairs start with its representative: they
				// wait before any verified pair after it is written.
				if err := groupsTo(r.A); err != nil {
					return err
				}
				if err := x.expandPair(r, &res, s); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			s.abort()
			return res, fmt.Errorf("pairs: %w", err)
		}
	}
	if err := groupsTo(math.MaxInt64); err != nil {
		s.abort()
		return res, err
	}
	var err error
	res.listed, err = s.close()
	return res, err
}

// expandPair gives s the pairs of verified pair r expanded to the members
// of both groups: r itself in its turn, the others to wait.
func (x *expander) expandPair(r records.Pair, res *expanded, s *pairSink) error {
	ga, gb := x.group(groupMember{r.A, r.AID, r.AURL}), x.group(groupMember{r.B, r.BID, r.BURL})
	if k, ok := x.bounded[r.A]; ok {
		// Only the kept document's pairs: skip the product.
		ga, gb = onlyKept(ga, gb, k.doc)
	}
	for _, a := range ga {
		for _, b := range gb {
			p, ok := x.pair(r.A, a, b, r, res)
			var err error
			switch {
			case !ok:
			case a.doc == r.A && b.doc == r.B:
				err = s.ordered(p)
			default:
				err = s.add(p)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// groupPairs gives add the pairs inside the group represented by rep
// (similarity 1); in a bounded cluster, only its kept document's.
func (x *expander) groupPairs(rep int64, res *expanded, add func(records.Pair) error) error {
	g := x.group(x.repOf[rep])
	tmpl := x.identical()
	give := func(a, b groupMember) error {
		if p, ok := x.pair(rep, a, b, tmpl, res); ok {
			return add(p)
		}
		return nil
	}
	if k, ok := x.bounded[rep]; ok {
		// Only the kept document's pairs: skip the square.
		for _, a := range g {
			if a.doc != k.doc {
				continue
			}
			for _, b := range g {
				if b.doc == k.doc {
					continue
				}
				if err := give(a, b); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for i, a := range g {
		for _, b := range g[i+1:] {
			if err := give(a, b); err != nil {
				return err
			}
		}
	}
	return nil
}

// pair returns the row of the pair of documents a and b made from tmpl,
// counted in res, or false when the pair is not listed: both are earlier
// jobs' documents, or first (the verified pair's first document, or the
// group's representative) is in a bounded cluster and neither is its kept
// document.
func (x *expander) pair(first int64, a, b groupMember, tmpl records.Pair, res *expanded) (records.Pair, bool) {
	if x.spec.Earlier(a.doc) && x.spec.Earlier(b.doc) {
		return records.Pair{}, false // a pair of earlier jobs' documents: theirs to list
	}
	if k, ok := x.bounded[first]; ok {
		if a.doc != k.doc && b.doc != k.doc {
			return records.Pair{}, false
		}
		res.keptListed[k.cluster]++
	}
	if a.doc > b.doc {
		a, b = b, a
	}
	tmpl.A, tmpl.B, tmpl.AID, tmpl.BID, tmpl.AURL, tmpl.BURL = a.doc, b.doc, a.id, b.id, a.url, b.url
	tmpl.AJob, tmpl.AOut, tmpl.APublished = nil, nil, nil
	if i, ok := x.spec.AgainstOf(a.doc); ok {
		tmpl.AJob, tmpl.AOut, tmpl.APublished = x.jobs.of(a.doc), &x.spec.Against[i].Out, &x.published
		if x.unpublished[a.doc] {
			tmpl.APublished = &x.dropped
		}
		res.against++
	}
	res.examples.Add(manifest.Example{A: tmpl.A, B: tmpl.B, AID: tmpl.AID, BID: tmpl.BID, Similarity: tmpl.Similarity, Estimate: tmpl.Estimate,
		Method: tmpl.Method, Hamming: tmpl.Hamming, BandsCollided: tmpl.BandsCollided, FirstBand: tmpl.FirstBand})
	return tmpl, true
}

// onlyKept narrows two groups to the pairs that include document k: if k
// is in one group, the other group is paired with k alone.
func onlyKept(ga, gb []groupMember, k int64) ([]groupMember, []groupMember) {
	for _, m := range ga {
		if m.doc == k {
			return []groupMember{m}, gb
		}
	}
	for _, m := range gb {
		if m.doc == k {
			return ga, []groupMember{m}
		}
	}
	return nil, nil
}
