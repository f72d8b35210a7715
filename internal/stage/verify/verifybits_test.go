package verify

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/internal/workfile"
	"github.com/neardup/neardup/internal/worktest"
	"github.com/neardup/neardup/pkg/records"
	"github.com/neardup/neardup/pkg/shingle"
)

// familySets returns n sets of families template families: set k is its
// family's template of templ values and own values of up to own, drawn
// at random, sorted.
func familySets(r *rand.Rand, n, families, templ, own int) [][]uint64 {
	templates := make([][]uint64, families)
	for f := range templates {
		for range templ {
			templates[f] = append(templates[f], r.Uint64())
		}
	}
	sets := make([][]uint64, n)
	for k := range sets {
		s := slices.Clone(templates[k%families])
		for range r.IntN(own + 1) {
			s = append(s, r.Uint64())
		}
		sets[k] = shingle.SortUnique(s)
	}
	return sets
}

// edgesOfSets returns the documents of sets (ordinal k for set k) and
// the edges (a, b) of pairs, as judgeEdges lets them wait, in two parts.
func edgesOfSets(sets [][]uint64, pairs [][2]int) [][]exactEdge {
	return edgesOfDocs(entriesOf(sets), pairs)
}

// entriesOf returns the entries of documents of sets.
func entriesOf(sets [][]uint64) []*sigEntry {
	docs := make([]*sigEntry, len(sets))
	for k, s := range sets {
		docs[k] = &sigEntry{set: s, n: len(s)}
	}
	return docs
}

// edgesOfDocs returns the edges (a, b) of pairs of docs (ordinal k for
// docs[k]), as judgeEdges lets them wait, in two parts.
func edgesOfDocs(docs []*sigEntry, pairs [][2]int) [][]exactEdge {
	xs := make([][]exactEdge, 2)
	for i, p := range pairs {
		x := exactEdge{e: records.Candidate{A: int64(p[0]), B: int64(p[1]), Band: 1}, a: docs[p[0]], b: docs[p[1]]}
		xs[i%2] = append(xs[i%2], x)
	}
	return xs
}

// noDrops is the setFiller of entries that never drop their sets: it
// fails if one did.
func noDrops(_ context.Context, docs map[int64]*sigEntry) error {
	for doc, e := range docs {
		if e.dropped() {
			return fmt.Errorf("document %d dropped its set", doc)
		}
	}
	return nil
}

// cliques returns every pair of sets of one family, of n sets of
// families families (set k of family k mod families).
func cliques(n, families int) [][2]int {
	var out [][2]int
	for a := range n {
		for b := a + families; b < n; b += families {
			out = append(out, [2]int{a, b})
		}
	}
	return out
}

// degreesOf counts the pairs of each document.
func degreesOf(pairs [][2]int) map[int64]int32 {
	deg := map[int64]int32{}
	for _, p := range pairs {
		deg[int64(p[0])]++
		deg[int64(p[1])]++
	}
	return deg
}

// TestEdgeBits checks that the intersections of edgeBits are those of
// the sets, and which documents get Bits: every document of template
// families whose pages are all pairs, with their Bits compared, none of
// sparse pairs; documents relabeled once (kept for later calls); a
// dictionary started again past its budget.
func TestEdgeBits(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 8))
	dense := familySets(r, 240, 4, 1500, 600) // 60 pages a family
	odd := [][]uint64{nil, {}, dense[0], dense[0], {1, 2, 3}, {4, 5, 6}}
	var chain [][2]int
	for k := range 239 {
		chain = append(chain, [2]int{k, k + 1})
	}
	// A clique of the odd sets (empty, identical, sharing nothing), each
	// of its documents in pairs with 80 pages: they get Bits, the pages
	// (in 6 pairs each) not.
	oddSets := append(slices.Clone(dense), odd...)
	var oddPairs [][2]int
	for a := range odd {
		for b := a + 1; b < len(odd); b++ {
			oddPairs = append(oddPairs, [2]int{240 + a, 240 + b})
		}
		for k := range 80 {
			oddPairs = append(oddPairs, [2]int{k, 240 + a})
		}
	}
	tests := []struct {
		name      string
		sets      [][]uint64
		pairs     [][2]int
		relabeled int  // documents
		byBits    bool // every pair whose documents both have Bits is counted by them
	}{
		{"template families, every pair", dense, cliques(240, 4), 240, true},
		{"sparse pairs", dense, chain, 0, false},
		{"empty, identical and disjoint sets", oddSets, oddPairs, 6, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			bs := newBitSets(2)
			xs := edgesOfSets(tt.sets, tt.pairs)
			eb, err := bs.prepare(ctx, xs, degreesOf(tt.pairs), noDrops)
			if err != nil {
				t.Fatal(err)
			}
			if len(bs.byDoc) != tt.relabeled {
				t.Errorf("%d documents relabeled, want %d", len(bs.byDoc), tt.relabeled)
			}
			checkEdgeBits(t, eb, xs, tt.byBits)
			// Again, in a later call: nothing more to relabel.
			values := bs.values()
			eb, err = bs.prepare(ctx, xs, degreesOf(tt.pairs), noDrops)
			if err != nil {
				t.Fatal(err)
			}
			if bs.values() != values || len(bs.byDoc) != tt.relabeled {
				t.Errorf("again: %d values, %d documents, want %d and %d", bs.values(), len(bs.byDoc), values, tt.relabeled)
			}
			checkEdgeBits(t, eb, xs, tt.byBits)
			// Past the budget, the dictionary starts again.
			bs.maxValues = 1
			if eb, err = bs.prepare(ctx, xs, degreesOf(tt.pairs), noDrops); err != nil {
				t.Fatal(err)
			}
			if tt.relabeled > 0 && bs.values() != values {
				t.Errorf("a new dictionary holds %d values, want %d", bs.values(), values)
			}
			checkEdgeBits(t, eb, xs, tt.byBits)
		})
	}
	t.Run("no bitSets", func(t *testing.T) {
		var bs *bitSets
		xs := edgesOfSets(dense, cliques(240, 4))
		eb, err := bs.prepare(context.Background(), xs, nil, noDrops)
		if err != nil {
			t.Fatal(err)
		}
		checkEdgeBits(t, eb, xs, false)
	})
}

// checkEdgeBits checks that eb's intersection of every edge of xs is the
// sets' and, with byBits, that it is counted by the Bits of both.
func checkEdgeBits(t *testing.T, eb *edgeBits, xs [][]exactEdge, byBits bool) {
	t.Helper()
	k := 0
	for _, part := range xs {
		for _, x := range part {
			got, err := eb.intersection(k, x)
			if err != nil {
				t.Fatal(err)
			}
			if want := shingle.Intersection(x.a.set, x.b.set); got != want {
				t.Fatalf("edge %d (%d, %d): intersection %d, want %d", k, x.e.A, x.e.B, got, want)
			}
			if byBits {
				a, b := eb.docs[eb.ends[k][0]], eb.docs[eb.ends[k][1]]
				if len(a.Runs) == 0 || len(b.Runs) == 0 || bitsCost(a, b) >= mergeNs*float64(x.a.n+x.b.n) {
					t.Fatalf("edge %d (%d, %d) is not counted by Bits (%d and %d runs)", k, x.e.A, x.e.B, len(a.Runs), len(b.Runs))
				}
			}
			k++
		}
	}
}

// TestVerifyBits checks that a verify task over long templated pages
// (corpus.TemplatedConfig, at 0.5) finds the same pairs, similarities and
// counts with its documents' sets relabeled as Bits (see bitSets) as by
// merging every pair's sets: with the task's budgets, with a dictionary
// started again at every judgeEdges call, with one shard and with eight,
// and in windows of 50 documents (many blocks, and documents relabeled in
// one kept for the next, without their sets), with a new dictionary at
// every call or no cache budget; and that with the task's budgets each
// document is loaded once, sets dropped and needed again loaded again.
func TestVerifyBits(t *testing.T) {
	ctx := context.Background()
	in := mapReduce(t, templatedLines(t, 600, 3), worktest.Resolved(t, func(p *job.Params) { p.Threshold = 0.5 }))
	run := func(window int, cacheBytes int64, newBits func(int) *bitSets) (*job.VerifyResult, []records.Pair, int64) {
		t.Helper()
		res, err := verify(ctx, in.st, in.spec, 0, in.reduces, in.src, window, cacheBytes, newBits)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := worktest.ReadPairs(ctx, in.st, res.File)
		if err != nil {
			t.Fatal(err)
		}
		loads := res.Loads
		res.File, res.Seconds, res.Loads = nil, 0, 0
		return res, rows, loads
	}
	wantRes, wantPairs, _ := run(verifyWindowDocs, verifyCacheBytes, nil)
	docs := edgeDocs(t, in)
	if wantRes.Exact < 10000 {
		t.Fatalf("%d pairs checked exactly: not the dense case", wantRes.Exact)
	}
	var made []*bitSets
	keep := func(bs *bitSets) *bitSets { made = append(made, bs); return bs }
	// loads: "once", each document of the edges loaded once; "again",
	// some loaded again (their sets dropped, then needed by a new
	// dictionary).
	variants := []struct {
		name    string
		window  int
		cache   int64
		newBits func(int) *bitSets
		loads   string
	}{
		{"the task's", verifyWindowDocs, verifyCacheBytes, func(parts int) *bitSets { return keep(newBitSets(parts)) }, "once"},
		{"a dictionary a call", verifyWindowDocs, verifyCacheBytes, func(parts int) *bitSets {
			bs := newBitSets(parts)
			bs.maxValues, bs.maxBytes = 1, 1
			return keep(bs)
		}, "again"},
		{"one shard", verifyWindowDocs, verifyCacheBytes, func(int) *bitSets { return keep(newBitSets(1)) }, "once"},
		{"eight shards", verifyWindowDocs, verifyCacheBytes, func(int) *bitSets { return keep(newBitSets(8)) }, "once"},
		{"windows of 50", 50, verifyCacheBytes, func(parts int) *bitSets { return keep(newBitSets(parts)) }, "once"},
		{"windows of 50, a dictionary a call", 50, verifyCacheBytes, func(parts int) *bitSets {
			bs := newBitSets(parts)
			bs.maxValues, bs.maxBytes = 1, 1
			return keep(bs)
		}, "again"},
		{"windows of 50, no cache", 50, 0, func(parts int) *bitSets { return keep(newBitSets(parts)) }, ""},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			made = nil
			res, pairs, loads := run(v.window, v.cache, v.newBits)
			// (A dictionary started again at every call may end empty:
			// loads again show that documents were relabeled.)
			if len(made) != 1 || len(made[0].byDoc) == 0 && v.loads != "again" {
				t.Fatalf("no document relabeled")
			}
			if !reflect.DeepEqual(res, wantRes) {
				t.Errorf("result %+v,\nwant %+v", res, wantRes)
			}
			if !reflect.DeepEqual(pairs, wantPairs) {
				t.Errorf("%d pairs differ from the %d merged: first %s", len(pairs), len(wantPairs), firstDiff(pairs, wantPairs))
			}
			if v.loads == "once" && loads != docs || v.loads == "again" && loads <= docs {
				t.Errorf("%d loads of %d documents, want %s", loads, docs, v.loads)
			}
		})
	}
}

// edgeDocs returns the number of documents the edges of in's chunk 0
// name.
func edgeDocs(t *testing.T, in verifyInput) int64 {
	t.Helper()
	var infos []fileinfo.Info
	for _, rr := range in.reduces {
		if info, ok := rr.EdgeFiles[0]; ok {
			infos = append(infos, info)
		}
	}
	m, err := workfile.MergeEdges(context.Background(), in.st, infos)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	docs := map[int64]bool{}
	for {
		e, more, err := m.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !more {
			return int64(len(docs))
		}
		docs[e.A], docs[e.B] = true, true
	}
}

// firstDiff describes the first pair where got and want differ.
func firstDiff(got, want []records.Pair) string {
	for i := range min(len(got), len(want)) {
		if !reflect.DeepEqual(got[i], want[i]) {
			return fmt.Sprintf("%+v, want %+v", got[i], want[i])
		}
	}
	return "one is longer"
}

// TestDroppedSets checks the pairs of documents whose entries dropped
// their sets (see sigCache.settle), in a later call than the one that
// relabeled them: counted by their Bits with documents that have Bits or
// are worth them (a document paired with one whose set was dropped is),
// their sets loaded again (fill) for a partner not worth relabeling and
// for a new dictionary. A filler that does not load them makes the call
// fail (errDropped) rather than count a pair, or relabel a set, without
// its shingles.
func TestDroppedSets(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 9))
	sets := familySets(r, 260, 4, 1500, 600) // 240 relabeled first, 20 new pages
	huge := make([]uint64, 100000)           // a new document far longer than its partner
	for k := range huge {
		huge[k] = r.Uint64()
	}
	sets = append(sets, shingle.SortUnique(huge))
	tests := []struct {
		name      string
		pairs     [][2]int // of the later call
		maxValues int      // the dictionary's, from the later call
		fills     []int    // the documents loaded again
		relabeled int      // documents with Bits after the later call
	}{
		{"pairs among documents with Bits", cliques(240, 4), 1 << 20, nil, 240},
		{"new documents paired with them", newPairs(240, 20, 2), 1 << 20, nil, 260},
		{"a partner not worth relabeling", [][2]int{{7, 260}}, 1 << 20, []int{7}, 240},
		{"a new dictionary", cliques(240, 4), 1, stage.Seq(240), 240},
	}
	for _, tt := range tests {
		for _, loads := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/loads=%v", tt.name, loads), func(t *testing.T) {
				ctx := context.Background()
				docs := entriesOf(sets)
				bs := newBitSets(2)
				first := cliques(240, 4)
				if _, err := bs.prepare(ctx, edgesOfDocs(docs, first), degreesOf(first), noDrops); err != nil {
					t.Fatal(err)
				}
				for k := range 240 {
					docs[k].set = nil // as settle drops them
				}
				var filled []int
				fill := func(_ context.Context, need map[int64]*sigEntry) error {
					for doc, e := range need {
						if e.dropped() {
							filled = append(filled, int(doc))
							if loads {
								e.set = sets[doc]
							}
						}
					}
					return nil
				}
				bs.maxValues = tt.maxValues
				xs := edgesOfDocs(docs, tt.pairs)
				err := countAll(ctx, bs, xs, degreesOf(tt.pairs), fill, sets)
				slices.Sort(filled)
				if !slices.Equal(filled, tt.fills) {
					t.Errorf("loaded again %v, want %v", filled, tt.fills)
				}
				if !loads && len(tt.fills) > 0 {
					if !errors.Is(err, errDropped) {
						t.Fatalf("sets not loaded again: %v, want %v", err, errDropped)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if len(bs.byDoc) != tt.relabeled {
					t.Errorf("%d documents have Bits, want %d", len(bs.byDoc), tt.relabeled)
				}
			})
		}
	}
}

// countAll prepares the edges xs and checks each one's intersection
// against that of its documents' sets.
func countAll(ctx context.Context, bs *bitSets, xs [][]exactEdge, deg map[int64]int32, fill setFiller, sets [][]uint64) error {
	eb, err := bs.prepare(ctx, xs, deg, fill)
	if err != nil {
		return err
	}
	k := 0
	for _, part := range xs {
		for _, x := range part {
			got, err := eb.intersection(k, x)
			if err != nil {
				return err
			}
			if want := shingle.Intersection(sets[x.e.A], sets[x.e.B]); got != want {
				return fmt.Errorf("edge %d (%d, %d): intersection %d, want %d", k, x.e.A, x.e.B, got, want)
			}
			k++
		}
	}
	return nil
}

// newPairs pairs each of n documents from first (n at most 24) with per
// documents before first, of its family (of 4).
func newPairs(first, n, per int) [][2]int {
	var out [][2]int
	for d := first; d < first+n; d++ {
		for k := range per {
			out = append(out, [2]int{d - 4*(6+k), d})
		}
	}
	return out
}
