package shingle

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// templatedGroup returns the shingle sets of pages of template families
// laid out as corpus.TemplatedConfig does: page k is of family k mod
// families, and is its family's template of templ hashes and a unique
// part of unique[0] to unique[1] hashes taken in turn from a pool of pool
// hashes, which wraps, so that pages of different families share some.
func templatedGroup(r *rand.Rand, pages, families, templ int, unique [2]int, pool int) [][]uint64 {
	draw := func(n int) []uint64 {
		s := make([]uint64, n)
		for i := range s {
			s[i] = r.Uint64()
		}
		return s
	}
	templates := make([][]uint64, families)
	for f := range templates {
		templates[f] = draw(templ)
	}
	text := draw(pool)
	sets := make([][]uint64, pages)
	next := 0
	for k := range sets {
		u := unique[0] + r.IntN(unique[1]-unique[0]+1)
		s := slices.Clone(templates[k%families])
		for range min(u, pool) {
			s = append(s, text[next%pool])
			next++
		}
		slices.Sort(s)
		sets[k] = slices.Compact(s)
	}
	return sets
}

// randomGroup returns n sets of up to size values below limit (a small
// limit makes them overlap), sorted and repeat-free.
func randomGroup(r *rand.Rand, n, size int, limit uint64) [][]uint64 {
	sets := make([][]uint64, n)
	for i := range sets {
		s := make([]uint64, r.IntN(size+1))
		for j := range s {
			s[j] = r.Uint64N(limit)
		}
		sets[i] = SortUnique(s)
	}
	return sets
}

// relabelAll relabels sets as one group with r, in order, and returns
// their Bits.
func relabelAll(r *Relabeler, hint int, sets [][]uint64) []Bits {
	return relabelRange(r, hint, 0, sets)
}

// relabelRange relabels sets, whose values share their top skip bits, as
// one group with r, in order, and returns their Bits.
func relabelRange(r *Relabeler, hint, skip int, sets [][]uint64) []Bits {
	r.Reset(hint, skip)
	var all Bits
	type end struct{ runs, words int }
	ends := make([]end, len(sets))
	for i, s := range sets {
		all = r.Append(all, s)
		ends[i] = end{len(all.Runs), len(all.Words)}
	}
	out := make([]Bits, len(sets))
	var from end
	for i, to := range ends {
		out[i] = Bits{Runs: all.Runs[from.runs:to.runs:to.runs], Words: all.Words[from.words:to.words:to.words]}
		from = to
	}
	return out
}

// checkBits checks that b is a well-formed Bits of as many values as set:
// runs in order, apart, of as many words as they hold, each starting and
// ending with a nonzero word.
func checkBits(t *testing.T, name string, set []uint64, b Bits) {
	t.Helper()
	words := 0
	for i, run := range b.Runs {
		if run.Len == 0 || i > 0 && run.Start <= b.Runs[i-1].Start+b.Runs[i-1].Len {
			t.Fatalf("%s: run %d (%+v) is empty, or not after run %d", name, i, run, i-1)
		}
		if words+int(run.Len) > len(b.Words) {
			t.Fatalf("%s: runs of more than the %d words", name, len(b.Words))
		}
		if b.Words[words] == 0 || b.Words[words+int(run.Len)-1] == 0 {
			t.Fatalf("%s: run %d (%+v) starts or ends with a zero word", name, i, run)
		}
		words += int(run.Len)
	}
	n := 0
	for _, w := range b.Words {
		n += bits.OnesCount64(w)
	}
	if words != len(b.Words) || n != len(set) {
		t.Fatalf("%s: runs of %d words, %d words; Bits of %d values, set of %d", name, words, len(b.Words), n, len(set))
	}
}

// checkPairs compares, for the pairs (i, j) of sets that pairs lists,
// BitsIntersection with the reference (a map look-up) and Intersection,
// and JaccardCount of it with Jaccard.
func checkPairs(t *testing.T, name string, sets [][]uint64, bs []Bits, pairs [][2]int) {
	t.Helper()
	for _, p := range pairs {
		a, b := sets[p[0]], sets[p[1]]
		got := BitsIntersection(bs[p[0]], bs[p[1]])
		if want := countCommon(a, b); got != want || got != Intersection(a, b) {
			t.Fatalf("%s: sets %d and %d (of %d and %d values): BitsIntersection = %d, map = %d, Intersection = %d",
				name, p[0], p[1], len(a), len(b), got, want, Intersection(a, b))
		}
		if j, want := JaccardCount(got, len(a), len(b)), Jaccard(a, b); j != want && !(math.IsNaN(j) && math.IsNaN(want)) {
			t.Fatalf("%s: sets %d and %d: JaccardCount = %v, Jaccard = %v", name, p[0], p[1], j, want)
		}
	}
}

// allPairs lists every pair (i, j), i <= j, of n sets.
func allPairs(n int) [][2]int {
	var out [][2]int
	for i := range n {
		for j := i; j < n; j++ {
			out = append(out, [2]int{i, j})
		}
	}
	return out
}

func TestRelabeler(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 4))
	same := randomGroup(r, 1, 2000, math.MaxUint64)[0]
	// The values of the top quarter of the range: a shard of 4.
	quarter := templatedGroup(r, 30, 3, 300, [2]int{0, 100}, 2000)
	for k, s := range quarter {
		for i := range s {
			s[i] |= 3 << 62
		}
		quarter[k] = SortUnique(s)
	}
	tests := []struct {
		name string
		sets [][]uint64
		// pairs, when not every pair (the reference is slow on large groups)
		pairs [][2]int
		skip  int // the top bits the values share
	}{
		{"no sets", nil, nil, 0},
		{"one set", [][]uint64{{3, 9, 27}}, nil, 0},
		{"empty sets", [][]uint64{nil, {}, {5, 6}, nil}, nil, 0},
		{"identical sets", [][]uint64{same, same, same, same}, nil, 0},
		{"sets sharing nothing", randomGroup(r, 6, 500, math.MaxUint64), nil, 0},
		{"extreme values", [][]uint64{{0, 1, 1 << 63, math.MaxUint64}, {0, math.MaxUint64 - 1, math.MaxUint64}, {1, 1 << 63}}, nil, 0},
		// Small values all fall in the first slot: long probe sequences
		// that wrap around the table.
		{"small values", randomGroup(r, 20, 400, 1000), nil, 0},
		{"values in one word", randomGroup(r, 10, 64, 64), nil, 0},
		{"sparse random", randomGroup(r, 40, 300, 1<<12), nil, 0},
		{"templated families", templatedGroup(r, 60, 3, 1500, [2]int{100, 900}, 20000), nil, 0},
		{"a shard of 4", quarter, nil, 2},
		{"one huge component", templatedGroup(r, 3000, 40, 1500, [2]int{100, 900}, 100000), func() [][2]int {
			var ps [][2]int
			for range 3000 {
				ps = append(ps, [2]int{r.IntN(3000), r.IntN(3000)})
			}
			return ps
		}(), 0},
	}
	var rl Relabeler
	for _, tc := range tests {
		pairs := tc.pairs
		if pairs == nil {
			pairs = allPairs(len(tc.sets))
		}
		// Hint 0 grows the table from its least size; a hint of every
		// value sizes it once. The Relabeler is reused across cases.
		for _, hint := range []int{0, 1 << 20} {
			name := fmt.Sprintf("%s/hint=%d", tc.name, hint)
			bs := relabelRange(&rl, hint, tc.skip, tc.sets)
			for i, s := range tc.sets {
				checkBits(t, name, s, bs[i])
			}
			checkPairs(t, name, tc.sets, bs, pairs)
		}
	}
}

// TestRelabelerRandom compares BitsIntersection with the reference on
// random groups, dense and sparse, relabeled in random orders (fixed
// seed).
func TestRelabelerRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 5))
	var rl Relabeler
	for i := range 300 {
		var sets [][]uint64
		switch i % 3 {
		case 0: // dense: families of long pages
			sets = templatedGroup(r, 1+r.IntN(40), 1+r.IntN(5), r.IntN(300), [2]int{0, r.IntN(200)}, 1+r.IntN(3000))
		case 1: // sparse: random sets of overlapping values
			sets = randomGroup(r, 1+r.IntN(30), r.IntN(400), 1+r.Uint64N(5000))
		default: // sparse: random hashes, next to nothing shared
			sets = randomGroup(r, 1+r.IntN(30), r.IntN(400), math.MaxUint64)
		}
		r.Shuffle(len(sets), func(i, j int) { sets[i], sets[j] = sets[j], sets[i] })
		bs := relabelAll(&rl, r.IntN(1000), sets)
		for k, s := range sets {
			checkBits(t, fmt.Sprint(i), s, bs[k])
		}
		checkPairs(t, fmt.Sprint(i), sets, bs, allPairs(len(sets)))
	}
}

// TestRelabelerIDs checks that a Relabeler gives a group's values the ids
// 0, 1, 2, ... in the order they are first met, set after set, whether a
// set's values are looked up or taken from a reference (see Relabeler):
// each set's Bits hold exactly the ids of a plain map's numbering. The
// groups make references that are used (template families, near copies
// of a set), that share a least value with a set of other values, that
// outgrow maxRefValues, and sets not in order.
func TestRelabelerIDs(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 8))
	base := randomGroup(r, 1, 3000, math.MaxUint64)[0]
	near := func(n int) [][]uint64 { // copies of base, a tenth of each replaced
		sets := make([][]uint64, n)
		for k := range sets {
			s := slices.Clone(base)
			for i := range len(s) / 10 {
				s[r.IntN(len(s))] = r.Uint64() | uint64(i&1)
			}
			sets[k] = SortUnique(s)
		}
		return sets
	}
	shuffled := templatedGroup(r, 40, 4, 500, [2]int{10, 300}, 5000)
	for _, s := range shuffled {
		r.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
	}
	tests := []struct {
		name string
		sets [][]uint64
	}{
		{"templated families", templatedGroup(r, 300, 7, 1500, [2]int{100, 900}, 20000)},
		{"near copies", near(50)},
		{"same least value, other values", [][]uint64{{1, 10, 20, 30}, {1, 11, 21, 31}, {1, 10, 21, 30, 40}, {0, 1, 10}, {2, 3, 10, 20}}},
		{"past the references' bound", templatedGroup(r, 600, 300, 1500, [2]int{100, 400}, 1<<20)},
		{"not in order", shuffled},
	}
	var rl Relabeler
	for _, tc := range tests {
		bs := relabelAll(&rl, 0, tc.sets)
		ids := map[uint64]uint32{}
		for k, s := range tc.sets {
			want := make([]uint32, 0, len(s))
			for _, v := range s {
				id, ok := ids[v]
				if !ok {
					id = uint32(len(ids))
					ids[v] = id
				}
				want = append(want, id)
			}
			slices.Sort(want)
			var got []uint32
			w := 0
			for _, run := range bs[k].Runs {
				for key := run.Start; key < run.Start+run.Len; key++ {
					for x := bs[k].Words[w]; x != 0; x &= x - 1 {
						got = append(got, 64*key+uint32(bits.TrailingZeros64(x)))
					}
					w++
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s: set %d: Bits hold ids %v..., want %v...", tc.name, k, got[:min(8, len(got))], want[:min(8, len(want))])
			}
		}
		if rl.Len() != len(ids) {
			t.Errorf("%s: %d values, want %d", tc.name, rl.Len(), len(ids))
		}
		if len(rl.refs) == 0 {
			t.Errorf("%s: no references kept", tc.name)
		}
	}
}

// BenchmarkRelabel times the relabeling of a group of pages like one of
// the verify stage's windows on the templated corpus at 0.5 (5,000 pages
// of 133 families, 1,500-hash templates and unique parts of 100 to 900
// hashes from a pool of 250,000: about 450,000 distinct values), and the
// intersection of pairs of pages of a family by their Bits and by their
// hashes (Intersection), cycling through 4,096 pairs.
func BenchmarkRelabel(b *testing.B) {
	r := rand.New(rand.NewPCG(21, 6))
	const pages, families = 5000, 133
	sets := templatedGroup(r, pages, families, 1500, [2]int{100, 900}, 250000)
	values := 0
	for _, s := range sets {
		values += len(s)
	}
	var rl Relabeler
	b.Run("relabel", func(b *testing.B) {
		for b.Loop() {
			relabelAll(&rl, 0, sets)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*values), "ns/value")
	})
	bs := relabelAll(&rl, 0, sets)
	pairs := make([][2]int, 4096)
	runs, words := 0, 0
	for i := range pairs {
		a := r.IntN(pages - families)
		pairs[i] = [2]int{a, a + families*(1+r.IntN((pages-a-1)/families))}
		for _, d := range pairs[i] {
			runs += len(bs[d].Runs)
			words += len(bs[d].Words)
		}
	}
	b.Logf("%d pages, %d values, %d distinct; a pair's two pages: %.1f runs, %.1f words", pages, values, rl.Len(),
		float64(runs)/float64(len(pairs)), float64(words)/float64(len(pairs)))
	b.Run("bits", func(b *testing.B) {
		k := 0
		for b.Loop() {
			p := pairs[k%len(pairs)]
			BitsIntersection(bs[p[0]], bs[p[1]])
			k++
		}
	})
	b.Run("intersection", func(b *testing.B) {
		k := 0
		for b.Loop() {
			p := pairs[k%len(pairs)]
			Intersection(sets[p[0]], sets[p[1]])
			k++
		}
	})
}

// BenchmarkBitsIntersection times BitsIntersection on Bits of one run of
// many words each (the cost of a word), and of many runs of a word each,
// interleaved (the cost of a run), cycling through 256 pairs of random
// words.
func BenchmarkBitsIntersection(b *testing.B) {
	r := rand.New(rand.NewPCG(21, 7))
	words := func(n int) []uint64 {
		w := make([]uint64, n)
		for i := range w {
			w[i] = r.Uint64() | 1 // nonzero
		}
		return w
	}
	const n = 64
	cases := []struct {
		name string
		make func() (Bits, Bits)
		per  string
	}{
		{"one-run-64-words", func() (Bits, Bits) {
			return Bits{Runs: []BitsRun{{0, n}}, Words: words(n)}, Bits{Runs: []BitsRun{{0, n}}, Words: words(n)}
		}, "ns/word"},
		{"64-runs-interleaved", func() (Bits, Bits) {
			var ra, rb []BitsRun
			for i := range uint32(n) {
				ra = append(ra, BitsRun{Start: 4 * i, Len: 1})
				rb = append(rb, BitsRun{Start: 4*i + 2 - 2*uint32(r.IntN(2)), Len: 1}) // equal or apart
			}
			return Bits{Runs: ra, Words: words(n)}, Bits{Runs: rb, Words: words(n)}
		}, "ns/run"},
	}
	for _, c := range cases {
		pairs := make([][2]Bits, 256)
		for i := range pairs {
			pairs[i][0], pairs[i][1] = c.make()
		}
		b.Run(c.name, func(b *testing.B) {
			k := 0
			for b.Loop() {
				p := pairs[k%len(pairs)]
				BitsIntersection(p[0], p[1])
				k++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, c.per)
		})
	}
}
