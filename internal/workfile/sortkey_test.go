package workfile

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/pkg/records"
)

// The packed sorts must give what the comparison sorts they replace give,
// on either side of the 64 bits a key may take.

// randomOrdinal is the ordinal of one of docs documents of each of the
// given chunks.
func randomOrdinal(r *rand.Rand, chunks []int, docs int) int64 {
	return job.Ordinal(chunks[r.IntN(len(chunks))], r.IntN(docs))
}

// randomEdges returns n edges (a < b) among docs documents of each of
// chunks, in bands bands, with repeats, in no order.
func randomEdges(r *rand.Rand, n int, chunks []int, docs, bands int) []records.Candidate {
	out := make([]records.Candidate, n)
	for i := range out {
		a, b := randomOrdinal(r, chunks, docs), randomOrdinal(r, chunks, docs)
		for a == b {
			b = randomOrdinal(r, chunks, docs)
		}
		out[i] = records.Candidate{A: min(a, b), B: max(a, b), Band: int32(r.IntN(bands))}
	}
	return out
}

// farOrdinals are ordinals at the extremes: the first and last chunks
// and indexes an ordinal can have.
var farOrdinals = []int64{
	job.Ordinal(0, 0), job.Ordinal(0, 1<<32-1), job.Ordinal(1, 0),
	job.Ordinal(1<<31-1, 0), job.Ordinal(1<<31-1, 1<<32-1),
}

// farEdges returns n edges among farOrdinals, in bands up to the largest.
func farEdges(r *rand.Rand, n int) []records.Candidate {
	bands := []int32{0, 1, 255, 256, math.MaxInt32}
	out := make([]records.Candidate, n)
	for i := range out {
		a := farOrdinals[r.IntN(len(farOrdinals)-1)]
		b := farOrdinals[slices.Index(farOrdinals, a)+1+r.IntN(len(farOrdinals)-1-slices.Index(farOrdinals, a))]
		out[i] = records.Candidate{A: a, B: b, Band: bands[r.IntN(len(bands))]}
	}
	return out
}

// sameRows fails t if got is not want.
func sameRows[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: %d rows %v..., want %d %v...", what, len(got), got[:min(4, len(got))], len(want), want[:min(4, len(want))])
	}
}

func TestOrdinalCode(t *testing.T) {
	tests := []struct {
		name      string
		ordinals  []int64
		ok        bool
		wantBits  uint
		wantChunk uint64
	}{
		{"none", nil, true, 0, 0},
		{"one", []int64{job.Ordinal(3, 5)}, true, 3, 3},
		{"first ordinal", []int64{0}, true, 0, 0},
		{"two chunks of 10,000", []int64{job.Ordinal(0, 9999), job.Ordinal(1, 0), job.Ordinal(0, 0)}, true, 1 + 14, 0},
		{"later chunks", []int64{job.Ordinal(40, 7), job.Ordinal(47, 1)}, true, 3 + 3, 40},
		{"the extremes", farOrdinals, true, 31 + 32, 0},
		{"a negative ordinal", []int64{job.Ordinal(1, 1), -1}, false, 0, 0},
		{"the smallest int64", []int64{math.MinInt64}, false, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var span ordinalSpan
			for _, x := range tt.ordinals {
				span.add(x)
			}
			code, ok := span.code()
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if code.bits() != tt.wantBits || code.minChunk != tt.wantChunk {
				t.Errorf("code %+v: %d bits from chunk %d, want %d from %d", code, code.bits(), code.minChunk, tt.wantBits, tt.wantChunk)
			}
			sorted := slices.Sorted(slices.Values(tt.ordinals))
			for i, x := range sorted {
				k := code.pack(x)
				if k >= 1<<code.bits() && code.bits() < 64 {
					t.Errorf("pack(%#x) = %#x, wider than %d bits", x, k, code.bits())
				}
				if got := code.unpack(k); got != x {
					t.Errorf("unpack(pack(%#x)) = %#x", x, got)
				}
				if i > 0 && code.pack(sorted[i-1]) > k {
					t.Errorf("pack(%#x) = %#x, below pack(%#x) = %#x", x, k, sorted[i-1], code.pack(sorted[i-1]))
				}
			}
		})
	}
}

func TestCompactEdges(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	e := func(a, b int64, band int32) records.Candidate { return records.Candidate{A: a, B: b, Band: band} }
	x, y, z := job.Ordinal(0, 1), job.Ordinal(0, 2), job.Ordinal(1, 0)
	tests := []struct {
		name   string
		edges  []records.Candidate
		packed bool // whether the keys fit in 64 bits
	}{
		{"none", nil, true},
		{"one", []records.Candidate{e(x, y, 4)}, true},
		{"a pair in three bands, highest first", []records.Candidate{e(x, z, 9), e(x, y, 7), e(x, z, 2), e(x, z, 5)}, true},
		{"a pair twice in one band", []records.Candidate{e(y, z, 3), e(y, z, 3), e(x, y, 3)}, true},
		{"band 0 only", []records.Candidate{e(y, z, 0), e(x, z, 0), e(x, y, 0), e(x, z, 0)}, true},
		{"many repeats", randomEdges(r, 5000, []int{0, 1}, 40, 20), true},
		{"templated-like", randomEdges(r, 20000, []int{0, 1}, 10000, 64), true},
		{"later chunks", randomEdges(r, 5000, []int{500, 900, 1000}, 100000, 300), true},
		{"the largest band", []records.Candidate{e(x, y, math.MaxInt32), e(x, y, 1), e(x, z, math.MaxInt32)}, true},
		{"keys of 64 bits", []records.Candidate{e(0, job.Ordinal(1, 1<<30-1), 3), e(0, 1, 0)}, true}, // 2*(1+30)+2 bits
		{"keys of 65 bits", []records.Candidate{e(0, job.Ordinal(1, 1<<30-1), 7), e(0, 1, 0)}, false},
		{"the extremes", farEdges(r, 3000), false},
		{"a negative band", []records.Candidate{e(x, y, 1), e(x, y, -1)}, false},
	}
	// One bufs for every case, as a reduce task keeps them from one
	// partition to the next, larger or smaller.
	bufs := &SortBufs{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, packed := edgeCode(tt.edges); packed != tt.packed {
				t.Errorf("packed = %v, want %v", packed, tt.packed)
			}
			want := compactEdgesCompared(slices.Clone(tt.edges))
			sameRows(t, "compactEdges", CompactEdges(slices.Clone(tt.edges), nil), want)
			sameRows(t, "compactEdges with bufs", CompactEdges(slices.Clone(tt.edges), bufs), want)
		})
	}
}

func TestEdgeRequests(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	e := func(a, b int64) records.Candidate { return records.Candidate{A: a, B: b} }
	sorted := func(edges []records.Candidate) []records.Candidate {
		slices.SortFunc(edges, CompareEdge)
		return edges
	}
	tests := []struct {
		name   string
		edges  []records.Candidate // sorted by compareEdge
		packed bool
	}{
		{"none", nil, true},
		{"one", []records.Candidate{e(job.Ordinal(2, 1), job.Ordinal(0, 5))}, true},
		{"one document asked for by two chunks", []records.Candidate{
			e(job.Ordinal(0, 1), job.Ordinal(1, 9)), e(job.Ordinal(0, 2), job.Ordinal(1, 9)), e(job.Ordinal(1, 3), job.Ordinal(1, 9)),
		}, true},
		{"many repeats", sorted(randomEdges(r, 5000, []int{0, 1, 2}, 30, 5)), true},
		{"templated-like", sorted(randomEdges(r, 20000, []int{0, 1}, 10000, 64)), true},
		{"later chunks", sorted(randomEdges(r, 5000, []int{500, 900, 1000}, 100000, 3)), true},
		{"keys of 64 bits", []records.Candidate{e(0, job.Ordinal(1<<15, 1<<32-1))}, true},  // 2*16+32 bits
		{"keys of 66 bits", []records.Candidate{e(0, job.Ordinal(1<<16, 1<<32-1))}, false}, // 2*17+32 bits
		{"the extremes", sorted(farEdges(r, 3000)), false},
		{"a negative ordinal", []records.Candidate{e(-1, 0), e(0, 1)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, packed := requestCode(tt.edges); packed != tt.packed {
				t.Errorf("packed = %v, want %v", packed, tt.packed)
			}
			sameRows(t, "edgeRequests", EdgeRequests(tt.edges), edgeRequestsCompared(tt.edges))
		})
	}
}

func TestSortRequests(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	random := func(n int, chunks []int, docs int, dests []int32) []Request {
		out := make([]Request, n)
		for i := range out {
			out[i] = Request{Doc: randomOrdinal(r, chunks, docs), Dest: dests[r.IntN(len(dests))]}
		}
		return out
	}
	q := func(chunk, i int, dest int32) Request {
		return Request{Doc: job.Ordinal(chunk, i), Dest: dest}
	}
	tests := []struct {
		name   string
		reqs   []Request
		packed bool
	}{
		{"none", nil, true},
		{"one", []Request{q(3, 4, 5)}, true},
		{"repeats", []Request{q(1, 2, 0), q(1, 1, 3), q(1, 2, 0), q(1, 1, 0), q(1, 2, 0)}, true},
		{"one chunk's, many repeats", random(5000, []int{7}, 50, []int32{0, 1, 2, 7}), true},
		{"templated-like", random(20000, []int{1}, 10000, []int32{0, 1}), true},
		{"several chunks", random(5000, []int{3, 4, 90}, 1000, []int32{5, 200, 1 << 20}), true},
		{"the largest verify chunk", []Request{q(1, 1, math.MaxInt32), q(1, 1, 0), q(1, 0, math.MaxInt32)}, true}, // 31+1 bits
		{"keys of 64 bits", []Request{q(0, 0, 0), q(1<<30-1, 1<<32-1, 3)}, true},                                  // 30+32 bits of document, 2 of verify chunk
		{"keys of 65 bits", []Request{q(0, 0, 0), q(1<<30-1, 1<<32-1, 4)}, false},
		{"the extremes", func() []Request {
			out := make([]Request, 3000)
			dests := []int32{0, 1, math.MaxInt32}
			for i := range out {
				out[i] = Request{Doc: farOrdinals[r.IntN(len(farOrdinals))], Dest: dests[r.IntN(len(dests))]}
			}
			return out
		}(), false},
		{"a negative verify chunk", []Request{q(1, 1, -1), q(1, 1, 0)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, packed := destCode(tt.reqs); packed != tt.packed {
				t.Errorf("packed = %v, want %v", packed, tt.packed)
			}
			sameRows(t, "sortRequests", SortRequests(slices.Clone(tt.reqs)), sortRequestsCompared(slices.Clone(tt.reqs)))
		})
	}
}

// benchPartition is about one reduce partition of the templated 20k
// corpus at threshold 0.5: 400,000 edges (15% repeats) among two chunks of
// 10,000 documents, in 64 bands, appended band after band as the
// bucketer does.
func benchPartition() []records.Candidate {
	r := rand.New(rand.NewPCG(7, 8))
	edges := randomEdges(r, 400_000, []int{0, 1}, 10_000, 64)
	for i := range edges[:len(edges)*15/100] {
		edges[len(edges)-1-i].A, edges[len(edges)-1-i].B = edges[i].A, edges[i].B
	}
	slices.SortStableFunc(edges, func(x, y records.Candidate) int { return int(x.Band - y.Band) })
	return edges
}

func BenchmarkCompactEdges(b *testing.B) {
	in := benchPartition()
	s := make([]records.Candidate, len(in))
	bufs := &SortBufs{}
	for _, f := range []struct {
		name    string
		compact func([]records.Candidate) []records.Candidate
	}{
		{"compared", compactEdgesCompared},
		{"packed", func(e []records.Candidate) []records.Candidate { return CompactEdges(e, nil) }},
		{"packed,bufs", func(e []records.Candidate) []records.Candidate { return CompactEdges(e, bufs) }},
	} {
		b.Run(f.name, func(b *testing.B) {
			for b.Loop() {
				copy(s, in)
				f.compact(s)
			}
		})
	}
}

func BenchmarkEdgeRequests(b *testing.B) {
	edges := CompactEdges(benchPartition(), nil)
	for _, f := range []struct {
		name     string
		requests func([]records.Candidate) []Request
	}{{"compared", edgeRequestsCompared}, {"packed", EdgeRequests}} {
		b.Run(f.name, func(b *testing.B) {
			for b.Loop() {
				f.requests(edges)
			}
		})
	}
}

// BenchmarkSortRequests sorts a gather task's requests on the templated
// corpus: every partition's (32) requests of its chunk, 6,000 each.
func BenchmarkSortRequests(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	in := make([]Request, 32*6000)
	for i := range in {
		in[i] = Request{Doc: job.Ordinal(1, r.IntN(10_000)), Dest: int32(r.IntN(2))}
	}
	s := make([]Request, len(in))
	for _, f := range []struct {
		name string
		sort func([]Request) []Request
	}{{"compared", sortRequestsCompared}, {"packed", SortRequests}} {
		b.Run(f.name, func(b *testing.B) {
			for b.Loop() {
				copy(s, in)
				f.sort(s)
			}
		})
	}
}

// TestSortBySecond checks sortBySecond against a comparison sort by
// second document, then index: packed and radix-sorted, and by
// comparison when the packing would not fit.
func TestSortBySecond(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	edgesOf := func(n int, second func() int64) []records.Candidate {
		edges := make([]records.Candidate, n)
		for i := range edges {
			edges[i] = records.Candidate{A: job.Ordinal(1, i), B: second(), Band: 1}
		}
		return edges
	}
	tests := []struct {
		name  string
		edges []records.Candidate
	}{
		{"empty", nil},
		{"one chunk, repeats", edgesOf(5000, func() int64 { return job.Ordinal(2, rng.IntN(300)) })},
		{"many chunks", edgesOf(5000, func() int64 { return job.Ordinal(rng.IntN(1000), rng.IntN(1<<20)) })},
		{"too wide to pack", edgesOf(3000, func() int64 { return job.Ordinal(rng.IntN(1<<30), rng.IntN(1<<31)) })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var idx []int
			for i := range tt.edges {
				if rng.IntN(3) > 0 { // a block's rest: some of its edges
					idx = append(idx, i)
				}
			}
			want := slices.Clone(idx)
			slices.SortStableFunc(want, func(x, y int) int { return cmp.Compare(tt.edges[x].B, tt.edges[y].B) })
			SortBySecond(tt.edges, idx)
			if !slices.Equal(idx, want) {
				t.Errorf("%d indices sorted differently", len(idx))
			}
		})
	}
}

// TestSortEdgesGrouped checks the packed sort by (group, a, b, band)
// against the comparison sort, with and without groups, on edges whose
// keys fit in 64 bits (with groups that use the last bits) and on edges
// whose keys do not (far ordinals; the comparison sort then).
func TestSortEdgesGrouped(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, tc := range []struct {
		name   string
		edges  []records.Candidate
		groups int
	}{
		{"none", nil, 1},
		{"one chunk", randomEdges(r, 3000, []int{4}, 500, 16), 1},
		{"chunks, groups", randomEdges(r, 5000, []int{0, 3, 76}, 130000, 16), 128},
		{"chunks, three groups", randomEdges(r, 5000, []int{1, 2}, 9000, 20), 3},
		// 2*(8+21) bits of documents, 4 of bands and 2 of groups: 64
		{"64 bits with the groups", randomEdges(r, 4000, []int{0, 255}, 1<<21, 16), 4},
		{"65 bits with the groups", randomEdges(r, 4000, []int{0, 255}, 1<<21, 16), 5},
		{"far ordinals", farEdges(r, 2000), 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			group := func(a int64) int { return int(uint64(a)*0x9e3779b97f4a7c15>>40) % tc.groups }
			want := slices.Clone(tc.edges)
			slices.SortFunc(want, func(x, y records.Candidate) int {
				return cmp.Or(cmp.Compare(group(x.A), group(y.A)), CompareEdge(x, y))
			})
			got := slices.Clone(tc.edges)
			SortEdgesGrouped(got, tc.groups, group)
			sameRows(t, "grouped", got, want)
			if tc.groups == 1 {
				got = slices.Clone(tc.edges)
				SortEdgesGrouped(got, 1, nil)
				sameRows(t, "ungrouped", got, want)
			}
		})
	}
}
