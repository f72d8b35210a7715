package stage

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/pkg/records"
)

// TestExpandSpill expands the same verified pairs and groups holding all
// pairs in memory and spilling sorted runs of a few pairs: the pairs/
// files are byte-identical.
func TestExpandSpill(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 7))
	id := func(d int64) string { return fmt.Sprintf("d%d", d) }
	// Representatives 0..199 (even ones with a group of up to 3 members
	// numbered from 1000), random verified pairs among them.
	x := func() *expander {
		x := &expander{groups: map[int64][]groupMember{}, repOf: map[int64]groupMember{}, bounded: map[int64]keptDoc{}, spec: &job.Spec{Params: job.DefaultParams()}}
		next := int64(1000)
		for rep := int64(0); rep < 200; rep += 2 {
			x.reps = append(x.reps, rep)
			x.repOf[rep] = groupMember{doc: rep, id: id(rep)}
			for range 1 + int(rep)%3 {
				x.groups[rep] = append(x.groups[rep], groupMember{doc: next, id: id(next)})
				next++
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
		pairs = append(pairs, records.Pair{A: a, B: b, AID: id(a), BID: id(b), Similarity: 0.9, Estimate: 0.9, Method: "exact"})
	}
	slices.SortFunc(pairs, comparePair)
	var files [][]byte
	for _, spill := range []int{1 << 30, 7, 100} {
		st := newStore(t)
		info, err := pqfile.Write(ctx, st, job.VerifiedFile(0), pairs, pqfile.Sorted("a", "b"))
		if err != nil {
			t.Fatal(err)
		}
		res, err := x().writeSpilling(ctx, st, verifyFiles{Chunk: 0, Pairs: &info}, spill)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(st.Path(job.PairFile(0)))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := pqfile.Read[records.Pair](ctx, st, job.PairFile(0), nil)
		if err != nil || int64(len(rows)) != res.listed || !slices.IsSortedFunc(rows, comparePair) {
			t.Fatalf("spill %d: %d rows (listed %d), sorted %v, %v", spill, len(rows), res.listed, slices.IsSortedFunc(rows, comparePair), err)
		}
		files = append(files, data)
	}
	for i := 1; i < len(files); i++ {
		if !bytes.Equal(files[i], files[0]) {
			t.Errorf("case %d: the pairs/ file differs from the one written without spilling", i)
		}
	}
}

// TestMergeRunsFanIn merges numbers of sorted runs below, at and above
// mergeFanIn (so in one, two and three passes): the output holds every
// row in order, byte-identical to a merge of the same rows written at
// once, and no intermediate run is left in the work area.
func TestMergeRunsFanIn(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{0, 1, mergeFanIn, mergeFanIn + 1, 3 * mergeFanIn, mergeFanIn*mergeFanIn + 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			st := newStore(t)
			rng := rand.New(rand.NewPCG(uint64(n), 1))
			var all []records.Duplicate
			var runs []*pqfile.Info
			for i := range n {
				run := make([]records.Duplicate, rng.IntN(50))
				for j := range run {
					run[j] = records.Duplicate{Doc: rng.Int64N(1 << 40), ID: fmt.Sprint(i, "/", j)}
				}
				slices.SortFunc(run, func(x, y records.Duplicate) int { return cmp.Compare(x.Doc, y.Doc) })
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
			less := func(x, y records.Duplicate) bool { return x.Doc < y.Doc || x.Doc == y.Doc && x.ID < y.ID }
			slices.SortFunc(all, func(x, y records.Duplicate) int {
				if less(x, y) {
					return -1
				}
				return 1
			})
			o := outputFile("doc")
			rows, err := mergeRuns(ctx, st, runs, "merged.parquet", o, less)
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
