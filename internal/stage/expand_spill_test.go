package stage

import (
	"bytes"
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
		x := &expander{groups: map[int64][]groupMember{}, repIDs: map[int64]string{}, bounded: map[int64]keptDoc{}, params: job.DefaultParams()}
		next := int64(1000)
		for rep := int64(0); rep < 200; rep += 2 {
			x.reps = append(x.reps, rep)
			x.repIDs[rep] = id(rep)
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
