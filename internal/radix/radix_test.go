package radix

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// randomKeys returns n keys of the given bits (the low ones), with
// repeats when n exceeds 2^bits.
func randomKeys(r *rand.Rand, n int, bits uint) []uint64 {
	s := make([]uint64, n)
	for i := range s {
		s[i] = r.Uint64() >> (64 - bits)
	}
	return s
}

func TestSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sorted := randomKeys(r, 5000, 40)
	slices.Sort(sorted)
	tests := []struct {
		name string
		in   []uint64
	}{
		{"nil", nil},
		{"empty", []uint64{}},
		{"one", []uint64{7}},
		{"small", []uint64{5, 3, 9, 3, 0, math.MaxUint64, 1}},
		{"small, largest", slices.Repeat([]uint64{math.MaxUint64, 0}, smallSort/2)},
		{"just above small", randomKeys(r, smallSort+1, 64)},
		{"all equal", slices.Repeat([]uint64{1<<40 | 17}, 1000)},
		{"all zero", make([]uint64, 1000)},
		{"all largest", slices.Repeat([]uint64{math.MaxUint64}, 1000)},
		{"sorted", sorted},
		{"reversed", func() []uint64 { s := slices.Clone(sorted); slices.Reverse(s); return s }()},
		{"many repeats", randomKeys(r, 20000, 6)},
		{"narrow", randomKeys(r, 20000, 20)},
		{"full width", randomKeys(r, 20000, 64)},
		{"one byte differs", func() []uint64 {
			s := randomKeys(r, 3000, 8)
			for i := range s {
				s[i] = s[i]<<32 | 0xff00ff00000000ff
			}
			return s
		}()},
		{"extremes", func() []uint64 {
			vals := []uint64{0, 1, 255, 256, 1<<32 - 1, 1 << 32, 1<<63 - 1, 1 << 63, math.MaxUint64 - 1, math.MaxUint64}
			s := make([]uint64, 3000)
			for i := range s {
				s[i] = vals[r.IntN(len(vals))]
			}
			return s
		}()},
		{"each byte", func() []uint64 {
			var s []uint64
			for d := range 8 {
				for v := range uint64(300) {
					s = append(s, v<<(8*d), math.MaxUint64-v<<(8*d))
				}
			}
			return s
		}()},
	}
	for _, tt := range tests {
		for _, bufLen := range []int{0, len(tt.in), len(tt.in) + 5} {
			t.Run(fmt.Sprintf("%s/buf=%d", tt.name, bufLen), func(t *testing.T) {
				got := slices.Clone(tt.in)
				Sort(got, make([]uint64, bufLen))
				want := slices.Sorted(slices.Values(tt.in))
				if !slices.Equal(got, want) {
					t.Fatalf("Sort of %d keys differs from slices.Sort (first: %v, want %v)", len(got), got[:min(5, len(got))], want[:min(5, len(want))])
				}
			})
		}
	}
}

// BenchmarkSort sorts keys shaped as one reduce partition's packed
// candidate edges on the templated corpus at threshold 0.5: 400,000 of
// 38 bits (two 15-bit documents and a band), with repeats.
func BenchmarkSort(b *testing.B) {
	for _, n := range []int{1000, 10_000, 400_000} {
		in := randomKeys(rand.New(rand.NewPCG(5, 6)), n, 38)
		s := make([]uint64, len(in))
		buf := make([]uint64, len(in))
		b.Run(fmt.Sprintf("n=%d/slices.Sort", n), func(b *testing.B) {
			for b.Loop() {
				copy(s, in)
				slices.Sort(s)
			}
		})
		b.Run(fmt.Sprintf("n=%d/radix", n), func(b *testing.B) {
			for b.Loop() {
				copy(s, in)
				Sort(s, buf)
			}
		})
	}
}
