package workfile

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// partitionEdges returns the edge streams of parts partitions of pairs
// (a, b) of docs documents of chunk 0, each pair in about per of them
// (the partitions of the bands it collides in, a band of each), each
// stream sorted: the way a verify task's edges come from every partition.
func partitionEdges(r *rand.Rand, parts, pairs, docs, per int) [][]records.Candidate {
	streams := make([][]records.Candidate, parts)
	for range pairs {
		a := r.IntN(docs - 1)
		b := a + 1 + r.IntN(docs-a-1)
		for range 1 + r.IntN(2*per-1) {
			p := r.IntN(parts)
			streams[p] = append(streams[p], records.Candidate{A: job.Ordinal(0, a), B: job.Ordinal(0, b), Band: int32(p + parts*r.IntN(4))})
		}
	}
	for p, s := range streams {
		slices.SortFunc(s, CompareEdge)
		streams[p] = slices.CompactFunc(s, func(x, y records.Candidate) bool { return x.A == y.A && x.B == y.B })
	}
	return streams
}

// writeStreams writes each stream as the chunk-0 range of an edge file.
func writeStreams(tb testing.TB, st storage.FS, streams [][]records.Candidate) []fileinfo.Info {
	tb.Helper()
	var infos []fileinfo.Info
	for p, s := range streams {
		ranges, err := WriteEdges(context.Background(), st, job.EdgeFile(p), s)
		if err != nil {
			tb.Fatal(err)
		}
		if info, ok := ranges[0]; ok {
			infos = append(infos, info)
		}
	}
	return infos
}

// mergeAll returns every edge mergeEdges gives of infos.
func mergeAll(tb testing.TB, st storage.FS, infos []fileinfo.Info) []records.Candidate {
	tb.Helper()
	m, err := MergeEdges(context.Background(), st, infos)
	if err != nil {
		tb.Fatal(err)
	}
	defer m.Close()
	return drain(tb, m.Next)
}

// TestMergeEdges checks that the edges of every partition come out in
// (a, b, band) order, each as often as the partitions hold it.
func TestMergeEdges(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	e := func(a, b int, band int32) records.Candidate {
		return records.Candidate{A: job.Ordinal(0, a), B: job.Ordinal(0, b), Band: band}
	}
	tests := []struct {
		name    string
		streams [][]records.Candidate
	}{
		{"none", nil},
		{"one stream", [][]records.Candidate{{e(0, 1, 2), e(0, 3, 1), e(2, 3, 0)}}},
		{"empty streams among others", [][]records.Candidate{nil, {e(1, 2, 0)}, nil, {e(0, 2, 1), e(1, 2, 3)}, nil}},
		{"a pair in every stream, by band", [][]records.Candidate{{e(0, 1, 2)}, {e(0, 1, 0)}, {e(0, 1, 1)}}},
		{"claims first", [][]records.Candidate{{e(0, 1, 3)}, {e(0, 1, ClaimBand), e(0, 2, ClaimBand)}}},
		{"32 partitions", partitionEdges(r, 32, 3000, 500, 7)},
		{"5 partitions", partitionEdges(r, 5, 3000, 500, 3)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newStore(t)
			got := mergeAll(t, st, writeStreams(t, st, tt.streams))
			want := slices.SortedFunc(slices.Values(slices.Concat(tt.streams...)), CompareEdge)
			if !slices.Equal(got, want) {
				t.Errorf("merged %d edges, want %d: %v, want %v", len(got), len(want), head(got), head(want))
			}
		})
	}
}

// countMerged returns the number of edges MergeEdges gives of infos.
func countMerged(tb testing.TB, st storage.FS, infos []fileinfo.Info) int {
	m, err := MergeEdges(context.Background(), st, infos)
	if err != nil {
		tb.Fatal(err)
	}
	defer m.Close()
	return countEdges(tb, m.Next)
}

// countEdges returns the number of edges next gives.
func countEdges(tb testing.TB, next func() (records.Candidate, bool, error)) int {
	for n := 0; ; n++ {
		_, more, err := next()
		if err != nil {
			tb.Fatal(err)
		}
		if !more {
			return n
		}
	}
}

// TestEdgeKey checks that edge keys order as compareEdge orders their
// edges, give them back, and that a stream that is over comes after
// every edge, the greatest too.
func TestEdgeKey(t *testing.T) {
	edges := []records.Candidate{
		{}, {A: 1}, {B: 1}, {Band: 1}, {Band: ClaimBand}, {A: -1}, {B: -1},
		{A: math.MaxInt64, B: math.MaxInt64, Band: math.MaxInt32},
		{A: math.MinInt64, B: math.MinInt64, Band: math.MinInt32},
		{A: job.Ordinal(3, 7), B: job.Ordinal(3, 9), Band: 12},
		{A: job.Ordinal(3, 7), B: job.Ordinal(4, 0), Band: ClaimBand},
		{A: job.Ordinal(3, 8), B: job.Ordinal(3, 9), Band: 0},
	}
	for _, x := range edges {
		if got := keyOf(x).edge(); got != x {
			t.Errorf("%+v comes back as %+v", x, got)
		}
		if !keyOf(x).before(overKey()) || overKey().before(keyOf(x)) {
			t.Errorf("%+v does not come before a stream that is over", x)
		}
		for _, y := range edges {
			if got, want := keyOf(x).before(keyOf(y)), CompareEdge(x, y) < 0; got != want {
				t.Errorf("%+v before %+v: %v, want %v", x, y, got, want)
			}
		}
	}
}

// head returns the first edges of s.
func head(s []records.Candidate) []records.Candidate { return s[:min(len(s), 8)] }

// edgeSource is an edge range as a Source of the generic Merge, to
// compare it with EdgeMerger.
type edgeSource struct{ s *edgeStream }

func (e edgeSource) Next() (records.Candidate, bool, error) {
	ok, err := e.s.next()
	return e.s.cur, ok, err
}

// countMergedGeneric returns the number of edges the generic Merge gives
// of infos, read as MergeEdges reads them.
func countMergedGeneric(tb testing.TB, st storage.FS, infos []fileinfo.Info) int {
	var srcs []Source[records.Candidate]
	for _, info := range infos {
		s, err := openEdges(context.Background(), st, info)
		if err != nil {
			tb.Fatal(err)
		}
		defer s.f.Close()
		srcs = append(srcs, edgeSource{s})
	}
	m, err := NewMerge(CompareEdge, srcs...)
	if err != nil {
		tb.Fatal(err)
	}
	return countEdges(tb, m.Next)
}

// BenchmarkMergeEdges times the merge of a verify task's edges from 32
// partitions (40,000 pairs in about 7 each, as the templated corpus at
// 0.5 has them), reporting the time an edge: by EdgeMerger, and by the
// generic Merge over the same streams (merger=generic), which is what
// keeps EdgeMerger (see its doc).
func BenchmarkMergeEdges(b *testing.B) {
	for _, merger := range []string{"edge", "generic"} {
		count := countMerged
		if merger == "generic" {
			count = countMergedGeneric
		}
		for _, parts := range []int{32, 4} {
			b.Run(fmt.Sprintf("merger=%s/partitions=%d", merger, parts), func(b *testing.B) {
				st, err := storage.NewDir(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				streams := partitionEdges(rand.New(rand.NewPCG(1, 2)), parts, 40000, 5000, min(7, parts))
				infos := writeStreams(b, st, streams)
				n := 0
				for b.Loop() {
					n = count(b, st, infos)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/edge")
			})
		}
	}
}
