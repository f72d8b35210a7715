package stage

import (
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/pkg/records"
)

// TestBucketer checks how one bucket becomes candidate pairs and claims.
func TestBucketer(t *testing.T) {
	rec := func(band int32, doc int64, fp int64) records.Band {
		return records.Band{Band: band, Key: 7, Doc: doc, FPHi: fp, FPLo: -fp}
	}
	e := func(a, b int64, band int32) records.Candidate { return records.Candidate{A: a, B: b, Band: band} }
	tests := []struct {
		name       string
		maxBucket  int
		bucket     []records.Band
		wantEdges  []records.Candidate
		wantClaims []records.Candidate
		notCmp     int64
	}{
		{"single document", 10, []records.Band{rec(0, 1, 1)}, nil, nil, 0},
		{"every pair", 10, []records.Band{rec(3, 1, 1), rec(3, 2, 2), rec(3, 5, 3)},
			[]records.Candidate{e(1, 2, 3), e(1, 5, 3), e(2, 5, 3)}, nil, 0},
		{"exact group in band 0: one representative, members claimed", 10,
			[]records.Band{rec(0, 1, 9), rec(0, 2, 4), rec(0, 3, 9), rec(0, 4, 9)},
			[]records.Candidate{e(1, 2, 0)}, []records.Candidate{e(1, 3, claimBand), e(1, 4, claimBand)}, 0},
		{"exact group in another band: no claims", 10,
			[]records.Band{rec(2, 1, 9), rec(2, 2, 4), rec(2, 3, 9)},
			[]records.Candidate{e(1, 2, 2)}, nil, 0},
		{"bucket over the bound: each compared with the hubs", 3,
			// 5 representatives, budget 3 pairs: max(1, 3/5) = 1 hub.
			[]records.Band{rec(1, 10, 1), rec(1, 11, 2), rec(1, 12, 3), rec(1, 13, 4), rec(1, 14, 5)},
			[]records.Candidate{e(10, 11, 1), e(10, 12, 1), e(10, 13, 1), e(10, 14, 1)}, nil, 10 - 4},
		{"one hub while the budget is below the bucket size", 4,
			// 5 representatives, budget 6 pairs: max(1, 6/5) = 1 hub.
			[]records.Band{rec(1, 10, 1), rec(1, 11, 2), rec(1, 12, 3), rec(1, 13, 4), rec(1, 14, 5)},
			[]records.Candidate{e(10, 11, 1), e(10, 12, 1), e(10, 13, 1), e(10, 14, 1)}, nil, 6},
		{"hubs from the budget", 6,
			// 7 representatives, budget 15 pairs: 15/7 = 2 hubs, 6 + 5 pairs of 21.
			[]records.Band{rec(1, 10, 1), rec(1, 11, 2), rec(1, 12, 3), rec(1, 13, 4), rec(1, 14, 5), rec(1, 15, 6), rec(1, 16, 7)},
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
