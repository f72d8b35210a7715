package workfile

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/pkg/records"
)

// bandLists returns n sorted lists of band records drawn from few bands,
// keys and documents (many records equal across lists), with extremes of
// each field among them, and some lists empty.
func bandLists(seed uint64, n, rows int) [][]records.BandRecord {
	rng := rand.New(rand.NewPCG(seed, 3))
	keys := []int64{math.MinInt64, -1, 0, 1, 7, math.MaxInt64}
	docs := []int64{math.MinInt64, 0, 1 << 32, 5<<32 | 9, math.MaxInt64}
	lists := make([][]records.BandRecord, n)
	for i := range lists {
		if rng.IntN(5) == 0 {
			continue
		}
		for range rng.IntN(rows) {
			lists[i] = append(lists[i], records.BandRecord{
				Band: int32(rng.IntN(3)) - 1, Key: keys[rng.IntN(len(keys))], Doc: docs[rng.IntN(len(docs))],
				FPHi: int64(i), FPLo: int64(len(lists[i])), // where it comes from
			})
		}
		slices.SortStableFunc(lists[i], CompareBand)
	}
	return lists
}

// genericBandMerge merges lists as reduce did before BandMerge: Merge over
// the lists' rows with CompareBand.
func genericBandMerge(t *testing.T, lists [][]records.BandRecord) []records.BandRecord {
	t.Helper()
	srcs := make([]Source[records.BandRecord], len(lists))
	for i, l := range lists {
		srcs[i] = &sliceSource[records.BandRecord]{rows: l}
	}
	m, err := NewMerge(CompareBand, srcs...)
	if err != nil {
		t.Fatal(err)
	}
	return drain(t, m.Next)
}

// TestBandMerge checks that BandMerge gives the records of Merge with
// CompareBand, in the same order (stable across lists), for numbers of
// lists on both sides of powers of two.
func TestBandMerge(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 7, 8, 9, 33} {
		for seed := range uint64(4) {
			lists := bandLists(seed, n, 40)
			want := genericBandMerge(t, lists)
			got := drain(t, NewBandMerge(lists, make([]string, n)).Next)
			if !slices.Equal(got, want) {
				t.Fatalf("%d lists, seed %d: %d records merged, not Merge's %d in its order", n, seed, len(got), len(want))
			}
		}
	}
}

// TestBandMergeUnsorted checks that a list out of order is an error
// naming it, met when the record before the one out of place is taken
// (as reduce's sources of Merge met it): here the third.
func TestBandMergeUnsorted(t *testing.T) {
	lists := [][]records.BandRecord{
		{{Band: 0, Key: 1, Doc: 1}, {Band: 0, Key: 5, Doc: 1}},
		{{Band: 0, Key: 2, Doc: 1}, {Band: 0, Key: 3, Doc: 1}, {Band: 0, Key: 1, Doc: 2}},
	}
	m := NewBandMerge(lists, []string{"a.bnd", "b.bnd"})
	var n int
	for {
		_, ok, err := m.Next()
		if err != nil {
			if !strings.Contains(err.Error(), "b.bnd") || n != 2 {
				t.Fatalf("after %d records: %v; want b.bnd's error after 2", n, err)
			}
			return
		}
		if !ok {
			t.Fatal("an unsorted list merged without an error")
		}
		n++
	}
}

// BenchmarkBandMerge merges lists as reduce does, with BandMerge and with
// Merge over the same lists (merger=generic).
func BenchmarkBandMerge(b *testing.B) {
	for _, n := range []int{8, 77} {
		rng := rand.New(rand.NewPCG(1, 2))
		lists := make([][]records.BandRecord, n)
		for i := range lists {
			lists[i] = make([]records.BandRecord, 1<<14)
			for j := range lists[i] {
				lists[i][j] = records.BandRecord{Band: int32(rng.IntN(16)), Key: int64(rng.Uint64()), Doc: int64(i)<<32 | int64(j)}
			}
			slices.SortFunc(lists[i], CompareBand)
		}
		total := n << 14
		b.Run(fmt.Sprintf("lists=%d/merger=band", n), func(b *testing.B) {
			for range b.N {
				m := NewBandMerge(lists, make([]string, n))
				for {
					if _, ok, _ := m.Next(); !ok {
						break
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*total), "ns/record")
		})
		b.Run(fmt.Sprintf("lists=%d/merger=generic", n), func(b *testing.B) {
			for range b.N {
				srcs := make([]Source[records.BandRecord], n)
				for i, l := range lists {
					srcs[i] = &sliceSource[records.BandRecord]{rows: l}
				}
				m, _ := NewMerge(CompareBand, srcs...)
				for {
					if _, ok, _ := m.Next(); !ok {
						break
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*total), "ns/record")
		})
	}
}
