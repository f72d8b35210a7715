package workfile

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/neardup/neardup/pkg/records"
)

// TestSortBandRecords checks sortBandRecords against a comparison sort by
// compareBand, on records appended in document order as map appends them
// (the radix sort) and on others (the comparison sort it falls back to).
func TestSortBandRecords(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// inDocOrder makes n records of docs in ascending order, up to bands
	// bands each, with keys from key.
	inDocOrder := func(n, bands int, key func(i int) int64) []records.BandRecord {
		var recs []records.BandRecord
		for doc := int64(1 << 32); len(recs) < n; doc++ {
			for b := range bands {
				if len(recs) < n && rng.IntN(3) == 0 {
					recs = append(recs, records.BandRecord{Band: int32(b), Key: key(len(recs)), Doc: doc, FPHi: doc, FPLo: -doc})
				}
			}
		}
		return recs
	}
	random := func(int) int64 { return int64(rng.Uint64()) }
	tests := []struct {
		name string
		recs []records.BandRecord
	}{
		{"empty", nil},
		{"small", inDocOrder(100, 16, random)},
		{"random keys", inDocOrder(20000, 16, random)},
		{"few keys (buckets of many documents)", inDocOrder(20000, 16, func(int) int64 { return int64(rng.IntN(50)) - 25 })},
		{"extreme keys", inDocOrder(5000, 16, func(i int) int64 {
			return []int64{math.MinInt64, math.MaxInt64, -1, 0, 1, math.MinInt64 + 1}[i%6]
		})},
		{"keys sharing their high bytes", inDocOrder(5000, 16, func(int) int64 { return 0x0102030405000000 | int64(rng.IntN(1<<16)) })},
		{"one band, one key", inDocOrder(3000, 1, func(int) int64 { return 7 })},
		{"256 bands", inDocOrder(5000, 256, random)},
		{"a band over 255 (compared)", inDocOrder(5000, 300, random)},
		{"not in document order (compared)", func() []records.BandRecord {
			r := inDocOrder(5000, 16, random)
			rng.Shuffle(len(r), func(i, j int) { r[i], r[j] = r[j], r[i] })
			return r
		}()},
	}
	var scratch []records.BandRecord
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := slices.SortedFunc(slices.Values(tt.recs), CompareBand)
			got := slices.Clone(tt.recs)
			scratch = SortBandRecords(got, scratch)
			if !slices.Equal(got, want) {
				t.Fatalf("%d records sorted differently from compareBand's order", len(got))
			}
		})
	}
}

// BenchmarkSortBandRecords sorts the records of one partition of a run of
// the 100k job's size (about 50,000), by radix and by comparison.
func BenchmarkSortBandRecords(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	var recs []records.BandRecord
	for doc := int64(0); len(recs) < 50000; doc++ {
		for band := range 16 {
			if rng.IntN(32) == 0 {
				recs = append(recs, records.BandRecord{Band: int32(band), Key: int64(rng.Uint64()), Doc: doc})
			}
		}
	}
	for _, radix := range []bool{true, false} {
		b.Run(fmt.Sprintf("radix=%v", radix), func(b *testing.B) {
			work := make([]records.BandRecord, len(recs))
			var scratch []records.BandRecord
			for b.Loop() {
				copy(work, recs)
				if radix {
					scratch = SortBandRecords(work, scratch)
				} else {
					slices.SortFunc(work, CompareBand)
				}
			}
		})
	}
}
