package shingle

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSetSorter(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	random := func(n int, mask uint64) []uint64 {
		h := make([]uint64, n)
		for i := range h {
			h[i] = rng.Uint64() & mask
		}
		return h
	}
	tests := []struct {
		name string
		in   []uint64
	}{
		{"empty", nil},
		{"one", []uint64{7}},
		{"small with repeats", []uint64{5, 1, 5, 3, 1, 0, ^uint64(0)}},
		{"random 7", random(7, ^uint64(0))},
		{"random 8", random(8, ^uint64(0))},
		{"random 9 with repeats", random(9, 0x3<<62)},
		{"random 63", random(63, ^uint64(0))},
		{"random 64", random(64, ^uint64(0))},
		{"two values, many times", random(1000, 1<<63)},
		{"random 500", random(500, ^uint64(0))},
		{"random 100000", random(100000, ^uint64(0))},
		{"many repeats", random(5000, 0xff<<56)},
		{"skewed: small values only", random(3000, 0xffff)},
		{"descending", func() []uint64 {
			h := random(2000, ^uint64(0))
			slices.Sort(h)
			slices.Reverse(h)
			return h
		}()},
	}
	var s SetSorter
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := slices.Clone(tt.in)
			slices.Sort(want)
			want = slices.Compact(want)
			got := s.SortUnique(slices.Clone(tt.in))
			if !slices.Equal(got, want) {
				t.Fatalf("SortUnique differs from sort+compact (len %d vs %d)", len(got), len(want))
			}
		})
	}
}

// BenchmarkSortUnique sorts sets of random hashes, different sets in
// turn (at least 256, 8 MiB of them), as a corpus's documents come: one
// set sorted again and again, or a few dozen in turn, let the branch
// predictor learn a sort's branches (pdqsort took 5.8 ns a hash of 500 on
// one set, 32 on sets in turn; SetSorter's insertion sort with a branch
// 2.8 ns on one set, 3.0 on 64, 4.7-4.9 on 256 or more, about what the
// shingles of the 100k benchmark corpus take).
func BenchmarkSortUnique(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{10, 50, 500, 5000} {
		srcs := make([][]uint64, max(256, (1<<20)/n))
		for k := range srcs {
			srcs[k] = make([]uint64, n)
			for i := range srcs[k] {
				srcs[k][i] = rng.Uint64()
			}
		}
		h := make([]uint64, n)
		b.Run("pdqsort/"+itoa(n), func(b *testing.B) {
			k := 0
			for b.Loop() {
				copy(h, srcs[k%len(srcs)])
				k++
				slices.Sort(h)
				_ = slices.Compact(h)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/shingle")
		})
		b.Run("SetSorter/"+itoa(n), func(b *testing.B) {
			var s SetSorter
			b.ReportAllocs()
			k := 0
			for b.Loop() {
				copy(h, srcs[k%len(srcs)])
				k++
				s.SortUnique(h)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/shingle")
		})
	}
}

func itoa(n int) string {
	return string(rune('0'+n/1000%10)) + string(rune('0'+n/100%10)) + string(rune('0'+n/10%10)) + string(rune('0'+n%10))
}
