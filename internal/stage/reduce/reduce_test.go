package reduce

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/workfile"
	"github.com/neardup/neardup/internal/worktest"
	"github.com/neardup/neardup/pkg/records"
)

// TestBucketer checks how one bucket becomes candidate pairs and claims.
func TestBucketer(t *testing.T) {
	rec := func(band int32, doc int64, fp int64) records.BandRecord {
		return records.BandRecord{Band: band, Key: 7, Doc: doc, FPHi: fp, FPLo: -fp}
	}
	e := func(a, b int64, band int32) records.Candidate { return records.Candidate{A: a, B: b, Band: band} }
	tests := []struct {
		name       string
		maxBucket  int
		bucket     []records.BandRecord
		wantEdges  []records.Candidate
		wantClaims []records.Candidate
		notCmp     int64
	}{
		{"single document", 10, []records.BandRecord{rec(0, 1, 1)}, nil, nil, 0},
		{"every pair", 10, []records.BandRecord{rec(3, 1, 1), rec(3, 2, 2), rec(3, 5, 3)},
			[]records.Candidate{e(1, 2, 3), e(1, 5, 3), e(2, 5, 3)}, nil, 0},
		{"exact group in band 0: one representative, members claimed", 10,
			[]records.BandRecord{rec(0, 1, 9), rec(0, 2, 4), rec(0, 3, 9), rec(0, 4, 9)},
			[]records.Candidate{e(1, 2, 0)}, []records.Candidate{e(1, 3, workfile.ClaimBand), e(1, 4, workfile.ClaimBand)}, 0},
		{"exact group in another band: no claims", 10,
			[]records.BandRecord{rec(2, 1, 9), rec(2, 2, 4), rec(2, 3, 9)},
			[]records.Candidate{e(1, 2, 2)}, nil, 0},
		{"bucket over the bound: each compared with the hubs", 3,
			// 5 representatives, budget 3 pairs: max(1, 3/5) = 1 hub.
			[]records.BandRecord{rec(1, 10, 1), rec(1, 11, 2), rec(1, 12, 3), rec(1, 13, 4), rec(1, 14, 5)},
			[]records.Candidate{e(10, 11, 1), e(10, 12, 1), e(10, 13, 1), e(10, 14, 1)}, nil, 10 - 4},
		{"one hub while the budget is below the bucket size", 4,
			// 5 representatives, budget 6 pairs: max(1, 6/5) = 1 hub.
			[]records.BandRecord{rec(1, 10, 1), rec(1, 11, 2), rec(1, 12, 3), rec(1, 13, 4), rec(1, 14, 5)},
			[]records.Candidate{e(10, 11, 1), e(10, 12, 1), e(10, 13, 1), e(10, 14, 1)}, nil, 6},
		{"hubs from the budget", 6,
			// 7 representatives, budget 15 pairs: 15/7 = 2 hubs, 6 + 5 pairs of 21.
			[]records.BandRecord{rec(1, 10, 1), rec(1, 11, 2), rec(1, 12, 3), rec(1, 13, 4), rec(1, 14, 5), rec(1, 15, 6), rec(1, 16, 7)},
			[]records.Candidate{e(10, 11, 1), e(10, 12, 1), e(10, 13, 1), e(10, 14, 1), e(10, 15, 1), e(10, 16, 1),
				e(11, 12, 1), e(11, 13, 1), e(11, 14, 1), e(11, 15, 1), e(11, 16, 1)}, nil, 21 - 11},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &job.ReduceResult{}
			b := &bucketer{maxBucket: tt.maxBucket, res: res}
			b.add(slices.Clone(tt.bucket))
			if got := b.finish(); !slices.Equal(got, tt.wantEdges) {
				t.Errorf("edges %v, want %v", got, tt.wantEdges)
			}
			if !slices.Equal(b.claims, tt.wantClaims) {
				t.Errorf("claims %v, want %v", b.claims, tt.wantClaims)
			}
			if res.PairsNotCompared != tt.notCmp || (tt.notCmp > 0) != (res.BoundedBuckets == 1) {
				t.Errorf("%d bounded buckets, %d pairs not compared; want %d not compared", res.BoundedBuckets, res.PairsNotCompared, tt.notCmp)
			}
		})
	}
}

// bandRec is a band record of a hand-made band file.
func bandRec(band int32, key int64, doc int64, fp int64) records.BandRecord {
	return records.BandRecord{Band: band, Key: key, Doc: doc, FPHi: fp, FPLo: ^fp}
}

// writeBandFile writes a band file as map does and returns its map result.
func writeBandFile(t *testing.T, st storage.FS, part, chunk int, recs ...records.BandRecord) job.MapResult {
	t.Helper()
	info, err := pqfile.Write(context.Background(), st, job.BandFile(part, chunk), recs, pqfile.Options{SortedBy: []string{"band", "key", "doc"}, Raw: true})
	if err != nil {
		t.Fatal(err)
	}
	return job.MapResult{Chunk: chunk, BandFiles: map[int]fileinfo.Info{part: info}}
}

// TestReduceRouting checks a partition merged from two chunks' band files:
// its buckets, candidates (deduplicated across bands, lowest band kept),
// claims, and the edge files routed by the chunk of the first document.
func TestReduceRouting(t *testing.T) {
	ctx := context.Background()
	st := worktest.NewStore(t)
	a, b := job.Ordinal(0, 0), job.Ordinal(0, 1)
	a2, c, d := job.Ordinal(1, 0), job.Ordinal(1, 1), job.Ordinal(1, 2) // a2 has a's set
	maps := []job.MapResult{
		writeBandFile(t, st, 2, 0,
			bandRec(0, 10, a, 1), bandRec(0, 10, b, 2),
			bandRec(1, 20, b, 2), bandRec(1, 21, a, 1)),
		writeBandFile(t, st, 2, 1,
			bandRec(0, 10, a2, 1), bandRec(0, 10, c, 3),
			bandRec(1, 20, c, 3), bandRec(1, 21, a2, 1),
			bandRec(2, 30, c, 3), bandRec(2, 30, d, 4)),
		{Chunk: 2, BandFiles: map[int]fileinfo.Info{}}, // no records in this partition
	}
	res, err := Reduce(ctx, st, &job.Spec{Params: job.DefaultParams()}, 2, maps)
	if err != nil {
		t.Fatal(err)
	}
	if res.Part != 2 || res.Records != 10 || res.Groups != 4 || res.MaxGroup != 4 || res.Candidates != 4 || res.ExactClaims != 1 {
		t.Errorf("result %+v", res)
	}
	cands, err := pqfile.Read[records.Candidate](ctx, st, res.File.Name, &res.File)
	if err != nil {
		t.Fatal(err)
	}
	e := func(x, y int64, band int32) records.Candidate { return records.Candidate{A: x, B: y, Band: band} }
	// b c collide in bands 0 and 1: listed once, with band 0.
	if want := []records.Candidate{e(a, b, 0), e(a, c, 0), e(b, c, 0), e(c, d, 2)}; !slices.Equal(cands, want) || res.File.Name != job.CandidateFile(2) {
		t.Errorf("candidates %v in %s, want %v", cands, res.File.Name, want)
	}
	want := map[int][]records.Candidate{
		0: {e(a, b, 0), e(a, a2, workfile.ClaimBand), e(a, c, 0), e(b, c, 0)},
		1: {e(c, d, 2)},
	}
	if len(res.EdgeFiles) != len(want) {
		t.Errorf("edge files for chunks %v", res.EdgeFiles)
	}
	for chunk, w := range want {
		info := res.EdgeFiles[chunk]
		got, err := workfile.ReadEdges(ctx, st, info, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, w) || info.Name != job.EdgeFile(2) {
			t.Errorf("chunk %d: edges %v in %s, want %v", chunk, got, info.Name, w)
		}
	}
	// The gather stage's requests, for each chunk of edges, only when it
	// runs (--gather on).
	if len(res.RequestFiles) != 0 {
		t.Errorf("gather %s: request files %v, want none", job.DefaultParams().Gather, res.RequestFiles)
	}
	on := &job.Spec{Params: job.DefaultParams()}
	on.Params.Gather = job.GatherOn
	res, err = Reduce(ctx, st, on, 2, maps)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.RequestFiles) != len(want) || res.RequestFiles[0].Name != job.RequestFile(2) {
		t.Errorf("gather on: request files %v, want one for each of chunks 0 and 1", res.RequestFiles)
	}
}

// TestReduceErrors checks that a band file read twice, an unsorted band
// file and a damaged one fail the task.
func TestReduceErrors(t *testing.T) {
	ctx := context.Background()
	st := worktest.NewStore(t)
	sorted := writeBandFile(t, st, 0, 0, bandRec(0, 1, 0, 1), bandRec(0, 1, 1, 2), bandRec(1, 5, 0, 1))
	unsorted := writeBandFile(t, st, 0, 1, bandRec(1, 5, 1<<32, 1), bandRec(0, 1, 1<<32+1, 2))
	damaged := writeBandFile(t, st, 0, 2, bandRec(0, 1, 2<<32, 1))
	damaged.BandFiles[0] = fileinfo.Info{Name: damaged.BandFiles[0].Name, Rows: 1, Checksum: 1, Bytes: damaged.BandFiles[0].Bytes}
	tests := []struct {
		name string
		maps []job.MapResult
		want string
	}{
		{"read twice", []job.MapResult{sorted, sorted}, "twice"},
		{"unsorted", []job.MapResult{sorted, unsorted}, "not sorted"},
		{"damaged", []job.MapResult{sorted, damaged}, pqfile.ErrCorrupt.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Reduce(ctx, st, &job.Spec{Params: job.DefaultParams()}, 0, tt.maps); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestMergeEdgeLists checks the merge of claims and candidates against
// sorting them together, as reduce routed them before.
func TestMergeEdgeLists(t *testing.T) {
	e := func(a, b int64, band int32) records.Candidate { return records.Candidate{A: a, B: b, Band: band} }
	x, y, z := job.Ordinal(0, 4), job.Ordinal(1, 0), job.Ordinal(1, 7)
	tests := []struct {
		name          string
		claims, edges []records.Candidate
	}{
		{"none", nil, nil},
		{"no claims", nil, []records.Candidate{e(x, y, 0), e(y, z, 3)}},
		{"claims only", []records.Candidate{e(x, z, workfile.ClaimBand)}, nil},
		{"a claim first", []records.Candidate{e(0, x, workfile.ClaimBand)}, []records.Candidate{e(x, y, 0), e(y, z, 3)}},
		{"a claim last", []records.Candidate{e(z, z+1, workfile.ClaimBand)}, []records.Candidate{e(x, y, 0), e(y, z, 3)}},
		{"a claim of each candidate's pair", []records.Candidate{e(x, y, workfile.ClaimBand), e(y, z, workfile.ClaimBand)}, []records.Candidate{e(x, y, 0), e(y, z, 3)}},
		{"claims after, between and before", []records.Candidate{e(0, 1, workfile.ClaimBand), e(x, z, workfile.ClaimBand), e(z, z+1, workfile.ClaimBand)},
			[]records.Candidate{e(x, y, 2), e(x, z+5, 1), e(y, z, 3)}},
		{"the extremes", []records.Candidate{e(0, 0, workfile.ClaimBand), e(math.MaxInt64, math.MaxInt64, workfile.ClaimBand)},
			[]records.Candidate{e(0, 0, 0), e(0, math.MaxInt64, math.MaxInt32), e(math.MaxInt64, math.MaxInt64, 0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := slices.Concat(tt.claims, tt.edges)
			slices.SortFunc(want, workfile.CompareEdge)
			// In edges' array: without room for the claims, and with it.
			if got := mergeEdgeLists(slices.Clone(tt.edges), slices.Clone(tt.claims)); !slices.Equal(got, want) {
				t.Errorf("merged %v, want %v", got, want)
			}
			roomy := append(make([]records.Candidate, 0, len(want)+3), tt.edges...)
			if got := mergeEdgeLists(roomy, slices.Clone(tt.claims)); !slices.Equal(got, want) || (len(got) > 0 && &got[0] != &roomy[:1][0]) {
				t.Errorf("merged %v, want %v in the edges' array", got, want)
			}
		})
	}
}
