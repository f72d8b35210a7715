package shingle

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// countCommon is the reference intersection: a's values looked up in a
// map of b's.
func countCommon[T uint32 | uint64](a, b []T) int {
	in := make(map[T]bool, len(b))
	for _, v := range b {
		in[v] = true
	}
	n := 0
	for _, v := range a {
		if in[v] {
			n++
		}
	}
	return n
}

// overlapping returns two sorted, repeat-free sets of na and nb values
// with common values in common, drawn by r below limit (values near 0 and
// near limit-1 included, to reach both ends of the comparisons).
func overlapping(r *rand.Rand, na, nb, common int, limit uint64) (a, b []uint64) {
	seen := map[uint64]bool{}
	draw := func() uint64 {
		for {
			var v uint64
			switch r.IntN(20) {
			case 0:
				v = r.Uint64N(4)
			case 1:
				v = limit - 1 - r.Uint64N(4)
			default:
				v = r.Uint64N(limit)
			}
			if !seen[v] {
				seen[v] = true
				return v
			}
		}
	}
	for range common {
		v := draw()
		a, b = append(a, v), append(b, v)
	}
	for len(a) < na {
		a = append(a, draw())
	}
	for len(b) < nb {
		b = append(b, draw())
	}
	slices.Sort(a)
	slices.Sort(b)
	return a, b
}

func TestIntersection(t *testing.T) {
	tests := []struct {
		na, nb, common int
	}{
		{0, 0, 0}, {0, 5, 0}, {1, 1, 1}, {1, 1, 0}, {3, 3, 3},
		{31, 31, 10}, {32, 32, 16}, {33, 40, 33}, // around splitMin
		{100, 100, 100}, {100, 100, 0}, {500, 700, 300}, {2000, 1800, 1500},
		{10, 320, 10}, {10, 321, 5}, {10, 5000, 7}, {1, 5000, 1}, {3, 5000, 0}, // around gallopRatio
		{200, 6000, 150},
	}
	r := rand.New(rand.NewPCG(21, 1))
	for _, tc := range tests {
		for _, limit := range []uint64{math.MaxUint64, math.MaxUint32 + 1, 1 << 20} {
			for rep := range 5 {
				name := fmt.Sprintf("%d,%d,%d/limit=%d/%d", tc.na, tc.nb, tc.common, limit, rep)
				a, b := overlapping(r, tc.na, tc.nb, tc.common, limit)
				if got := Intersection(a, b); got != tc.common {
					t.Errorf("%s: Intersection = %d, want %d", name, got, tc.common)
				}
				if got := Intersection(b, a); got != tc.common {
					t.Errorf("%s: Intersection(b, a) = %d, want %d", name, got, tc.common)
				}
				if limit > math.MaxUint32+1 {
					continue
				}
				a32, b32 := narrow(a), narrow(b)
				if got := Intersection(a32, b32); got != tc.common {
					t.Errorf("%s: Intersection of 32-bit sets = %d, want %d", name, got, tc.common)
				}
			}
		}
	}
}

func narrow(s []uint64) []uint32 {
	out := make([]uint32, len(s))
	for i, v := range s {
		out[i] = uint32(v)
	}
	return out
}

// TestIntersectionRandom compares Intersection with a map look-up on
// random sets of random sizes and overlaps (fixed seed).
func TestIntersectionRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 2))
	for i := range 3000 {
		na, nb := r.IntN(300), r.IntN(3000)
		if i%3 == 0 {
			nb = r.IntN(300)
		}
		common := r.IntN(min(na, nb) + 1)
		limit := []uint64{math.MaxUint64, 1 << 16, uint64(na + nb - common + r.IntN(10))}[i%3]
		a, b := overlapping(r, na, nb, common, limit)
		if got, want := Intersection(a, b), countCommon(a, b); got != want || got != common {
			t.Fatalf("sets of %d and %d below %d: Intersection = %d, map = %d, want %d", na, nb, limit, got, want, common)
		}
	}
}

// BenchmarkIntersection times Intersection, and its merge in one piece
// (intersectMerge, "merge1"), on pairs of shingle sets like those of long
// templated pages (1,500 common hashes, 400 of each page's own), on
// shorter ones, and on pairs of very different sizes. The benchmark cycles
// through 256 different pairs so that the branch predictor cannot learn
// one pair's merge. (The plain merge with branches that Jaccard used
// before took 2.2-2.5 times as long as "intersection" here.)
func BenchmarkIntersection(b *testing.B) {
	r := rand.New(rand.NewPCG(21, 3))
	cases := []struct {
		name           string
		na, nb, common int
	}{
		{"templated-1900", 1900, 1900, 1500},
		{"half-1000", 1000, 1000, 500},
		{"short-60", 60, 60, 50},
		{"skewed-50-5000", 50, 5000, 40},
	}
	for _, c := range cases {
		pairs := make([][2][]uint64, 256)
		for i := range pairs {
			pairs[i][0], pairs[i][1] = overlapping(r, c.na, c.nb, c.common, math.MaxUint64)
		}
		for _, f := range []struct {
			name string
			f    func(a, b []uint64) int
		}{{"intersection", Intersection[uint64]}, {"merge1", intersectMerge[uint64]}} {
			b.Run(c.name+"/"+f.name, func(b *testing.B) {
				k := 0
				for b.Loop() {
					p := pairs[k%len(pairs)]
					if f.f(p[0], p[1]) != c.common {
						b.Fatal("wrong count")
					}
					k++
				}
			})
		}
	}
}
