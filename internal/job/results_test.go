package job

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestNoteBounded checks that a reduce result keeps the BoundedListed
// largest bounded buckets, largest first, ties by (band, key), whatever
// the order in which they were noted.
func TestNoteBounded(t *testing.T) {
	var all []BoundedBucket
	for i := range 25 {
		// Sizes 100..108 with ties; bands and keys make ties orderable.
		all = append(all, BoundedBucket{Band: int32(i % 3), Key: int64(25 - i), Docs: int64(100 + i%9), Representatives: int64(i)})
	}
	want := slices.Clone(all)
	slices.SortFunc(want, func(x, y BoundedBucket) int {
		switch {
		case x.Docs != y.Docs:
			return int(y.Docs - x.Docs)
		case x.Band != y.Band:
			return int(x.Band - y.Band)
		}
		return int(x.Key - y.Key)
	})
	want = want[:BoundedListed]
	if want[0].Docs != 108 || want[BoundedListed-1].Docs != 105 {
		t.Fatalf("the test's expectation is wrong: %+v", want)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		var res ReduceResult
		for _, i := range r.Perm(len(all)) {
			res.NoteBounded(all[i])
			if len(res.Bounded) > BoundedListed {
				t.Fatalf("%d buckets listed", len(res.Bounded))
			}
		}
		if !slices.Equal(res.Bounded, want) {
			t.Fatalf("listed\n%+v\nwant\n%+v", res.Bounded, want)
		}
	}

	// Fewer than BoundedListed: all of them, in order.
	list := InsertBounded(nil, BoundedBucket{Band: 2, Key: 1, Docs: 10})
	list = InsertBounded(list, BoundedBucket{Band: 1, Key: 9, Docs: 10})
	list = InsertBounded(list, BoundedBucket{Band: 1, Key: 3, Docs: 10})
	list = InsertBounded(list, BoundedBucket{Band: 5, Key: 0, Docs: 11})
	if got := []int64{list[0].Key, list[1].Key, list[2].Key, list[3].Key}; !slices.Equal(got, []int64{0, 3, 9, 1}) {
		t.Errorf("order by keys %v, want 0 3 9 1", got)
	}
}

// TestHistEdges checks that HistBin puts a similarity in the bin whose
// edges, as HistEdges gives them, hold it: at every edge, just below and
// above it, and at the fractions of small sets.
func TestHistEdges(t *testing.T) {
	edges := HistEdges()
	if len(edges) != HistBins+1 || edges[0] != 0 || edges[HistBins] != 1 || !slices.IsSorted(edges) {
		t.Fatalf("edges %v", edges)
	}
	var sims []float64
	for _, e := range edges {
		sims = append(sims, e, math.Nextafter(e, 0), math.Nextafter(e, 1))
	}
	for d := 1; d <= 60; d++ {
		for n := 0; n <= d; n++ {
			sims = append(sims, float64(n)/float64(d))
		}
	}
	for _, s := range sims {
		if s < 0 || s > 1 {
			continue
		}
		i := HistBin(s)
		if !(edges[i] <= s && (s < edges[i+1] || i == HistBins-1 && s == 1)) {
			t.Errorf("similarity %v in bin %d, whose edges are %v and %v", s, i, edges[i], edges[i+1])
		}
	}
}
