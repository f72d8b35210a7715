package cluster

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/workfile"
	"github.com/neardup/neardup/internal/worktest"
	"github.com/neardup/neardup/pkg/records"
)

// expandCase is an expander's input: representatives 0..199 with
// verified pairs among them, the even ones with exact groups of up to 3
// members numbered from 1000 (groups), some of them in bounded clusters
// whose kept document is a member (bounded).
type expandCase struct {
	pairs []records.Pair
	x     func() *expander
}

func newExpandCase(seed uint64, groups, bounded bool) expandCase {
	rng := rand.New(rand.NewPCG(seed, 7))
	id := func(d int64) string { return fmt.Sprintf("d%d", d) }
	x := func() *expander {
		x := newExpander(&job.Spec{Params: job.DefaultParams()})
		next := int64(1000)
		for rep := int64(0); groups && rep < 200; rep += 2 {
			x.reps = append(x.reps, rep)
			x.repOf[rep] = groupMember{doc: rep, id: id(rep), url: "u" + id(rep)}
			for range 1 + int(rep)%3 {
				x.groups[rep] = append(x.groups[rep], groupMember{doc: next, id: id(next)})
				next++
			}
			if bounded && rep%8 == 0 {
				x.bounded[rep] = keptDoc{cluster: rep, doc: x.groups[rep][0].doc}
			}
		}
		return x
	}
	seen := map[[2]int64]bool{}
	var pairs []records.Pair
	for len(pairs) < 300 {
		a, b := rng.Int64N(200), rng.Int64N(200)
		if a >= b || seen[[2]int64{a, b}] {
			continue
		}
		seen[[2]int64{a, b}] = true
		pairs = append(pairs, records.Pair{A: a, B: b, AID: id(a), BID: id(b), AURL: "u" + id(a), BURL: "u" + id(b), Similarity: 0.9, Estimate: 0.9, Method: "exact"})
	}
	slices.SortFunc(pairs, workfile.ComparePair)
	return expandCase{pairs: pairs, x: x}
}

// want is what the pairs/ file holds, by brute force: every pair of the
// product of the groups of a verified pair's documents and every pair
// inside a group, but in a bounded cluster (by its first document) those
// of its kept document only, sorted.
func (c expandCase) want() []records.Pair {
	x := c.x()
	var out []records.Pair
	keep := func(first int64, a, b groupMember, tmpl records.Pair) {
		if k, ok := x.bounded[first]; ok && a.doc != k.doc && b.doc != k.doc {
			return
		}
		if a.doc > b.doc {
			a, b = b, a
		}
		tmpl.A, tmpl.B, tmpl.AID, tmpl.BID, tmpl.AURL, tmpl.BURL = a.doc, b.doc, a.id, b.id, a.url, b.url
		out = append(out, tmpl)
	}
	for _, r := range c.pairs {
		for _, a := range x.group(groupMember{r.A, r.AID, r.AURL}) {
			for _, b := range x.group(groupMember{r.B, r.BID, r.BURL}) {
				keep(r.A, a, b, r)
			}
		}
	}
	for _, rep := range x.reps {
		g := x.group(x.repOf[rep])
		for i := range g {
			for j := i + 1; j < len(g); j++ {
				keep(rep, g[i], g[j], x.identical())
			}
		}
	}
	slices.SortFunc(out, workfile.ComparePair)
	return out
}

// TestExpandSpill expands verified pairs (alone, with exact groups, and
// with bounded clusters) holding every added pair until its turn (no
// limit), and spilling sorted runs from nearly the first pair (16) or
// partway (100; the pairs alone never spill): the pairs/ file holds the
// pairs the brute force lists, byte-identical to those rows written at
// once (Dense or not), and no run is left in the work area.
func TestExpandSpill(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name            string
		groups, bounded bool
		dense           bool
	}{
		{"pairs", false, false, false},
		{"groups", true, false, true},
		{"bounded", true, true, false},
		{"bounded-dense", true, true, true},
	} {
		c := newExpandCase(7, tc.groups, tc.bounded)
		want := c.want()
		if tc.groups && len(want) <= len(c.pairs) {
			t.Fatalf("%s: %d pairs expanded from %d: no pair added", tc.name, len(want), len(c.pairs))
		}
		direct := worktest.NewStore(t)
		if _, err := pqfile.Write(ctx, direct, "want.parquet", want, pairOptions(tc.dense)); err != nil {
			t.Fatal(err)
		}
		wantData, err := os.ReadFile(direct.Path("want.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		for _, spill := range []int{1 << 30, 16, 100} {
			t.Run(fmt.Sprintf("%s/spill-%d", tc.name, spill), func(t *testing.T) {
				st := worktest.NewStore(t)
				info := worktest.WritePairs(t, st, job.VerifiedFile(0), c.pairs)
				x := c.x()
				x.dense = tc.dense
				res, err := x.writeSpilling(ctx, st, verifyFiles{Chunk: 0, Pairs: &info}, spill)
				if err != nil {
					t.Fatal(err)
				}
				rows, err := pqfile.Read[records.Pair](ctx, st, job.PairFile(0), nil)
				if err != nil || res.listed != int64(len(want)) || !slices.Equal(rows, want) {
					t.Fatalf("%d rows (listed %d), want %d; same rows %v; %v", len(rows), res.listed, len(want), slices.Equal(rows, want), err)
				}
				data, err := os.ReadFile(st.Path(job.PairFile(0)))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(data, wantData) {
					t.Error("the pairs/ file differs from its rows written at once")
				}
				if left, err := st.List(ctx, job.ClusterDir); err != nil || len(left) > 0 {
					t.Errorf("left in the work area: %v (%v)", left, err)
				}
			})
		}
	}
}

// TestPairSinkSpillsPartway gives a sink pairs in its order, a few added
// ones far ahead of their turn, and a spill limit they pass only after
// the first pairs are written: the sink starts spilling partway, and the
// file holds every pair in order, byte-identical to the one written
// without a limit.
func TestPairSinkSpillsPartway(t *testing.T) {
	ctx := context.Background()
	var files [][]byte
	for _, spill := range []int{1 << 30, 10} {
		st := worktest.NewStore(t)
		s := newPairSink(ctx, st, 0, spill, false)
		var spilledAt int64 = -1
		for a := int64(0); a < 100; a++ {
			if err := s.ordered(records.Pair{A: a, B: a + 1}); err != nil {
				t.Fatal(err)
			}
			if a >= 50 {
				// Pairs whose turn is far ahead: they wait, up to spill.
				if err := s.add(records.Pair{A: 200 + a, B: 1000}); err != nil {
					t.Fatal(err)
				}
			}
			if s.spilling && spilledAt < 0 {
				spilledAt = s.rows
			}
		}
		rows, err := s.close()
		if err != nil || rows != 150 {
			t.Fatalf("spill %d: %d rows, %v", spill, rows, err)
		}
		if spill < 100 && spilledAt <= 0 {
			t.Errorf("spill %d: spilling began after %d pairs written, want partway", spill, spilledAt)
		}
		got, err := pqfile.Read[records.Pair](ctx, st, job.PairFile(0), nil)
		if err != nil || len(got) != 150 || !slices.IsSortedFunc(got, workfile.ComparePair) {
			t.Fatalf("spill %d: %d rows, sorted %v, %v", spill, len(got), slices.IsSortedFunc(got, workfile.ComparePair), err)
		}
		data, err := os.ReadFile(st.Path(job.PairFile(0)))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, data)
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("the file written spilling partway differs")
	}
}

// TestPairSinkAbortRemovesRuns spills a sink's pairs into runs and then
// gives it a pair out of order: it fails, and neither the pairs/ file
// nor a run is left in the work area.
func TestPairSinkAbortRemovesRuns(t *testing.T) {
	ctx := context.Background()
	st := worktest.NewStore(t)
	s := newPairSink(ctx, st, 0, 4, false)
	for a := int64(0); a < 40; a++ {
		if err := s.ordered(records.Pair{A: a, B: a + 1}); err != nil {
			t.Fatal(err)
		}
		if err := s.add(records.Pair{A: 100 + a, B: 1000}); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.runs) == 0 {
		t.Fatal("no run written: the test spills nothing")
	}
	if err := s.ordered(records.Pair{A: 1, B: 0}); err == nil {
		t.Fatal("a pair out of order was taken")
	}
	s.abort()
	var left []string
	err := filepath.WalkDir(st.Root(), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, path)
		}
		return err
	})
	if err != nil || len(left) > 0 {
		t.Errorf("left in the work area: %v (%v)", left, err)
	}
}

// TestMergeRunsFanIn merges numbers of sorted runs below, at and above
// mergeFanIn (so in one, two and three passes), of distinct keys and of
// few keys (many ties): the output holds every row in order, rows of
// equal keys in the order of their runs (as a stable sort of the runs one
// after the other has them), byte-identical to those rows written at
// once, and no intermediate run is left in the work area.
func TestMergeRunsFanIn(t *testing.T) {
	ctx := context.Background()
	compare := func(x, y records.Duplicate) int { return cmp.Compare(x.Doc, y.Doc) }
	for _, tt := range []struct {
		n    int
		keys int64
	}{
		{0, 1 << 40}, {1, 1 << 40}, {mergeFanIn, 1 << 40}, {mergeFanIn + 1, 1 << 40}, {3 * mergeFanIn, 1 << 40}, {mergeFanIn*mergeFanIn + 5, 1 << 40},
		{mergeFanIn + 1, 3}, {3 * mergeFanIn, 8}, {mergeFanIn*mergeFanIn + 5, 20},
	} {
		n := tt.n
		t.Run(fmt.Sprintf("%d runs of %d keys", n, tt.keys), func(t *testing.T) {
			st := worktest.NewStore(t)
			rng := rand.New(rand.NewPCG(uint64(n), uint64(tt.keys)))
			var all []records.Duplicate
			var runs []*fileinfo.Info
			for i := range n {
				run := make([]records.Duplicate, rng.IntN(50))
				for j := range run {
					run[j].Doc = rng.Int64N(tt.keys)
				}
				slices.SortFunc(run, compare)
				for j := range run {
					run[j].ID = fmt.Sprint(i, "/", j)
				}
				all = append(all, run...)
				info, err := pqfile.Write(ctx, st, fmt.Sprintf("runs/%03d.parquet", i), run, pqfile.Options{Raw: true})
				if err != nil {
					t.Fatal(err)
				}
				runs = append(runs, &info)
				if i%5 == 0 {
					runs = append(runs, nil) // a task without rows
				}
			}
			slices.SortStableFunc(all, compare)
			o := outputFile("doc")
			rows, err := mergeRuns(ctx, st, runs, "merged.parquet", o, compare)
			if err != nil {
				t.Fatal(err)
			}
			if rows != int64(len(all)) {
				t.Fatalf("%d rows merged, want %d", rows, len(all))
			}
			if _, err := pqfile.Write(ctx, st, "direct.parquet", all, o); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(st.Path("merged.parquet"))
			want, _ := os.ReadFile(st.Path("direct.parquet"))
			if !bytes.Equal(got, want) {
				t.Error("merged file differs from the rows written at once")
			}
			if left, err := st.List(ctx, job.ClusterDir); err != nil || len(left) > 0 {
				t.Errorf("left in the work area: %v (%v)", left, err)
			}
		})
	}
}

// TestDensePairs: a job's pairs/ files are Dense from densePairsPerDoc
// edges a document.
func TestDensePairs(t *testing.T) {
	for _, tt := range []struct {
		edges, docs int64
		want        bool
	}{
		{0, 0, true}, // no documents: no pairs/ rows either way
		{0, 100, false},
		{199, 100, false},
		{200, 100, true},
		{45378 + 5002, 100000, false}, // the 100k benchmark job
		{1368727 + 201, 20000, true},  // the templated corpus at 0.5
	} {
		if got := densePairs(tt.edges, tt.docs); got != tt.want {
			t.Errorf("densePairs(%d, %d) = %v, want %v", tt.edges, tt.docs, got, tt.want)
		}
	}
}
