package minhash

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// refDart is Dart's cell model computed the slow, obvious way: each
// element's stream is enumerated one occupied cell at a time, the gap by a
// linear scan of the thresholds (G is the least g with u >= thr[g]; below
// the last threshold, M cells are skipped and the element draws again),
// points of rounds below R are merged into per-column minima of
// (round, tie), and R doubles until the first K columns all hold a point.
func refDart(d *Dart, hashes []uint64) Signature {
	if len(hashes) == 0 {
		return Signature{}
	}
	k, cols := uint64(d.k), d.geo.cols
	thr := d.geo.thr
	if cols == 1 {
		thr = []uint64{0} // every cell is occupied: G = 0
	}
	m := uint64(len(thr))
	for rounds := uint64(1); ; rounds *= 2 {
		best := make([]uint64, cols)
		for j := range best {
			best[j] = math.MaxUint64
		}
		for _, x := range hashes {
			s := (x ^ d.s1) * d.s2
			c := uint64(math.MaxUint64) // cell -1
			for {
				s += golden
				u := mix64(s)
				gap := uint64(0)
				for u < thr[m-1] {
					gap += m
					s += golden
					u = mix64(s)
				}
				g := uint64(0)
				for u < thr[g] {
					g++
				}
				c += gap + g + 1
				t, j := c/cols, c%cols
				if t >= rounds {
					break
				}
				best[j] = min(best[j], t<<32|uint64(uint32(u)))
			}
		}
		if !slices.Contains(best[:k], math.MaxUint64) {
			sig := make(Signature, k)
			for j := range sig {
				sig[j] = uint32(best[j])
			}
			return sig
		}
	}
}

// TestDartMatchesReference checks Sketch against refDart, bit for bit, for
// K with and without a power of two, and sets from one hash to more than
// the pooled size.
func TestDartMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	ks := []int{1, 2, 3, 7, 8, 64, 100, 127, 128, 129, 256, 1000}
	ns := []int{1, 2, 3, 5, 10, 31, 100, 300, 1000, 3000}
	reps := 3
	if testing.Short() {
		reps = 1
	}
	for _, k := range ks {
		d, err := NewDart(k, uint64(k)*3+1)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range ns {
			for range reps {
				set := randomSet(r, n)
				if got, want := d.Sketch(nil, set), refDart(d, set); !slices.Equal(got, want) {
					t.Fatalf("K=%d n=%d: Sketch differs from the reference", k, n)
				}
			}
		}
	}
	d, _ := NewDart(MaxDartK, 9)
	for _, n := range []int{1, 50, 5000} {
		set := randomSet(r, n)
		if got, want := d.Sketch(nil, set), refDart(d, set); !slices.Equal(got, want) {
			t.Fatalf("K=%d n=%d: Sketch differs from the reference", MaxDartK, n)
		}
	}
	d, _ = NewDart(128, 10)
	set := randomSet(r, maxPooledN+1000) // scratch not pooled
	if got, want := d.Sketch(nil, set), refDart(d, set); !slices.Equal(got, want) {
		t.Fatalf("n=%d: Sketch differs from the reference", len(set))
	}
}

// TestDartKernelsAgree runs the assembly kernels and their Go versions on
// the same states, when the assembly is built, and checks that a slab run
// element by element and pass by pass gives the same result.
func TestDartKernelsAgree(t *testing.T) {
	if !useAsm {
		t.Skip("no assembly kernels in this build")
	}
	r := rand.New(rand.NewPCG(6, 6))
	for _, k := range []int{2, 5, 128, 300, 4096} {
		d, _ := NewDart(k, uint64(k))
		geo := &d.geo
		for _, n := range []int{1, 2, 7, 100, 1000} {
			hashes := randomSet(r, n)
			var mins1, mins2 [MaxDartK]uint64
			for j := range mins1[:geo.cols] {
				mins1[j] = emptyKey
				mins2[j] = emptyKey
			}
			kn1 := &kernel{guide: geo.guide, mins: &mins1}
			kn1.p = [kParams]uint64{
				kGolden: golden, kMixKey: mixKey, kTail: geo.tail, kMask: geo.cols - 1,
				kEnd: d.firstEnd(n), kShift: uint64(geo.shift), kS1: d.s1, kS2: d.s2,
			}
			kn2 := &kernel{guide: geo.guide, mins: &mins2, p: kn1.p}
			el1, el2 := make([]elem, n), make([]elem, n)
			act1, act2 := make([]uint32, n), make([]uint32, n)
			na1 := dartStartAMD64(&el1[0], &act1[0], &hashes[0], n, &kn1.guide[0], &kn1.p)
			na2 := kn2.startGo(el2, act2, hashes)
			// Depth first: a slab of the listed elements, on copies.
			el3, el4 := slices.Clone(el1), slices.Clone(el2)
			mins3, mins4 := mins1, mins2
			kn3 := &kernel{guide: geo.guide, mins: &mins3, p: kn1.p}
			kn4 := &kernel{guide: geo.guide, mins: &mins4, p: kn1.p}
			if na1 > 0 {
				dartSlabAMD64(&el3[0], &act1[0], na1, &kn3.mins[0], &kn3.guide[0], &kn3.p)
			}
			kn4.slabGo(el4, act2[:na2])
			if !slices.Equal(el3, el4) || mins3 != mins4 {
				t.Fatalf("K=%d n=%d: assembly and Go slab kernels differ", k, n)
			}
			// Breadth first: pass after pass.
			for step := 0; ; step++ {
				if na1 != na2 || !slices.Equal(el1, el2) || !slices.Equal(act1[:na1], act2[:na2]) || mins1 != mins2 {
					t.Fatalf("K=%d n=%d pass %d: assembly and Go kernels differ", k, n, step)
				}
				if na1 == 0 {
					break
				}
				na1 = dartPassAMD64(&el1[0], &act1[0], na1, &kn1.mins[0], &kn1.guide[0], &kn1.p)
				na2 = kn2.passGo(el2, act2[:na2])
			}
			// Both orders merge the same points and leave the same states.
			if !slices.Equal(el1, el3) || mins1 != mins3 {
				t.Fatalf("K=%d n=%d: passes and slab differ", k, n)
			}
		}
	}
}

// TestDartGolden pins the signatures of fixed inputs: any change to the
// sampling (streams, thresholds, tie, layout of cells) changes them.
func TestDartGolden(t *testing.T) {
	tests := []struct {
		k    int
		seed uint64
		set  []uint64
		want Signature
	}{
		{1, 1, []uint64{1, 2, 3}, Signature{0x2540db30}},
		{8, 42, []uint64{1}, Signature{0x7634f385, 0x5178de51, 0xa94870c8, 0xdb9ca200, 0x0fa5ff1b, 0xf8f85ad4, 0xcab0b062, 0x06783e76}},
		{8, 42, []uint64{1, 2, 3, 4, 5}, Signature{0xc3b18965, 0x5178de51, 0x3be5106c, 0x122afb40, 0x0832b44a, 0xdad43aa8, 0x1b4e9257, 0x4963f8c2}},
		{5, 7, []uint64{0xdeadbeef, 0xfeedface, 0xcafef00d}, Signature{0x6da9ffbe, 0xa0edd819, 0xf8309570, 0x7abc1a38, 0xfa52429c}},
	}
	for _, tc := range tests {
		d, _ := NewDart(tc.k, tc.seed)
		if got := d.Sketch(nil, tc.set); !slices.Equal(got, tc.want) {
			t.Errorf("K=%d seed=%d %x: got %#x, want %#x", tc.k, tc.seed, tc.set, got, tc.want)
		}
	}
	// K = 128 on 300 hashes: an FNV-1a digest of the signature.
	d, _ := NewDart(128, 1)
	r := rand.New(rand.NewPCG(1, 2))
	sig := d.Sketch(nil, randomSet(r, 300))
	h := uint64(14695981039346656037)
	for _, v := range sig {
		h = (h ^ uint64(v)) * 1099511628211
	}
	const want = 0x55d96cdbe8116f1d
	if h != want {
		t.Errorf("K=128 n=300: digest %#x, want %#x (first values %#x)", h, want, sig[:4])
	}
}

// TestDartThresholds checks thr[g] against 2^64 (1-1/C)^(g+1) computed
// with 200-bit floats, rounded to a multiple of 2^32, plus g; and the guide
// against the definition of G on every bucket edge and threshold.
func TestDartThresholds(t *testing.T) {
	for _, k := range []int{2, 3, 17, 128, 129, 1024, 4096} {
		geo := newGeometric(k)
		p := new(big.Float).SetPrec(200).Quo(big.NewFloat(float64(geo.cols-1)), big.NewFloat(float64(geo.cols)))
		x := new(big.Float).SetPrec(200).SetMantExp(big.NewFloat(1), 64)
		unit := new(big.Float).SetPrec(200).SetMantExp(big.NewFloat(1), 32)
		for g := 0; ; g++ {
			x.Mul(x, p)
			q := new(big.Float).Quo(x, unit)
			q.Add(q, big.NewFloat(0.5))
			n, _ := q.Uint64() // truncation of x/2^32 + 1/2
			if n<<32 < 1<<(64-tailLog2) {
				if g != len(geo.thr) {
					t.Fatalf("K=%d: %d thresholds, want %d", k, len(geo.thr), g)
				}
				break
			}
			if want := n<<32 + uint64(g); g >= len(geo.thr) || geo.thr[g] != want {
				t.Fatalf("K=%d: threshold %d differs from 2^64 (1-1/C)^%d", k, g, g+1)
			}
		}
		if geo.m != uint64(len(geo.thr)) || geo.tail != geo.thr[geo.m-1] {
			t.Fatalf("K=%d: M or tail inconsistent", k)
		}
		// Probe u at every threshold and bucket edge, +-1.
		var probes []uint64
		for _, th := range geo.thr {
			probes = append(probes, th-1, th, th+1)
		}
		w := uint64(1) << geo.shift
		for i := range uint64(len(geo.guide)) {
			probes = append(probes, i*w, i*w+w-1)
		}
		for _, u := range probes {
			if u < geo.tail {
				continue
			}
			want := 0
			for u < geo.thr[want] {
				want++
			}
			e := geo.guide[u>>geo.shift]
			got := int(e&0xffffffff) + b2i(u < e)
			if got != want {
				t.Fatalf("K=%d u=%#x: guide gives G=%d, want %d", k, u, got, want)
			}
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// gapOf draws the gap as refDart does, from the stream state s (advanced),
// and returns it with the tie of the last draw.
func gapOf(geo *geometric, s *uint64) (gap uint64, tie uint32) {
	m := uint64(len(geo.thr))
	*s += golden
	u := mix64(*s)
	for u < geo.tail {
		gap += m
		*s += golden
		u = mix64(*s)
	}
	g := uint64(0)
	for u < geo.thr[g] {
		g++
	}
	return gap + g, uint32(u)
}

// TestDartGapDistribution compares the gaps of many element streams with
// Geometric(1/C), P(G = g) = (1-1/C)^g / C, by a chi-square test with a
// bin per gap value up to about three times M (so gaps drawn through one
// or more skips of M cells, the tail path, are in it) and an open last
// bin; and checks that the tie is independent of the gap (a contingency
// chi-square of ten gap classes against the tie's top 3 bits).
func TestDartGapDistribution(t *testing.T) {
	const draws = 3_200_000
	for _, k := range []int{2, 8, 128} {
		d, _ := NewDart(k, 77)
		geo := &d.geo
		q := 1 - 1/float64(geo.cols)
		// Bins 0..nb-2 are single gaps, with at least 40 expected draws;
		// bin nb-1 is the rest.
		nb := 1
		for draws*math.Pow(q, float64(nb))/float64(geo.cols) >= 40 {
			nb++
		}
		count := make([]float64, nb)
		var tieCount [10][8]float64 // gap class x top 3 bits of the tie
		r := rand.New(rand.NewPCG(uint64(k), 1))
		skips := 0
		for range draws / 8 {
			s := r.Uint64() // a fresh element stream every 8 draws
			for range 8 {
				g, tie := gapOf(geo, &s)
				if g >= geo.m {
					skips++
				}
				count[min(g, uint64(nb-1))]++
				tieCount[min(g*10/uint64(nb), 9)][tie>>29]++
			}
		}
		chi := 0.0
		for g := range nb {
			e := draws * math.Pow(q, float64(g)) / float64(geo.cols)
			if g == nb-1 {
				e = draws * math.Pow(q, float64(g)) // P(G >= g)
			}
			chi += (count[g] - e) * (count[g] - e) / e
		}
		zGap := chiSquareZ(chi, nb-1)
		if zGap > 3.1 {
			t.Errorf("K=%d: gap chi-square %.1f with %d df (z=%.1f)", k, chi, nb-1, zGap)
		}
		if uint64(nb) < 2*geo.m || skips == 0 {
			t.Errorf("K=%d: the bins (%d) do not cover the tail path (M=%d, %d skips)", k, nb, geo.m, skips)
		}
		zTie := contingencyZ(tieCount[:])
		if zTie > 3.1 {
			t.Errorf("K=%d: tie vs gap contingency z=%.1f", k, zTie)
		}
		t.Logf("K=%d: gap chi-square z=%+.2f (%d bins, M=%d), tie-gap contingency z=%+.2f; %.2f%% of draws took the tail path",
			k, zGap, nb, geo.m, zTie, 100*float64(skips)/draws)
	}
}

// contingencyZ returns the chi-square independence test of a table of
// counts, as a normal deviate (rows and columns without counts dropped).
func contingencyZ(table [][8]float64) float64 {
	var rows []float64
	cols := make([]float64, 8)
	total := 0.0
	for _, row := range table {
		sum := 0.0
		for j, v := range row {
			sum += v
			cols[j] += v
		}
		rows = append(rows, sum)
		total += sum
	}
	chi, nr, nc := 0.0, 0, 0
	for _, c := range cols {
		if c > 0 {
			nc++
		}
	}
	for i, row := range table {
		if rows[i] == 0 {
			continue
		}
		nr++
		for j, v := range row {
			if cols[j] == 0 {
				continue
			}
			e := rows[i] * cols[j] / total
			chi += (v - e) * (v - e) / e
		}
	}
	return chiSquareZ(chi, (nr-1)*(nc-1))
}

// chiSquareZ returns the Wilson-Hilferty normal deviate of a chi-square
// statistic x with k degrees of freedom: about N(0, 1) under the null.
func chiSquareZ(x float64, k int) float64 {
	kf := float64(k)
	return (math.Cbrt(x/kf) - (1 - 2/(9*kf))) / math.Sqrt(2/(9*kf))
}

func TestDartAllocations(t *testing.T) {
	d, _ := NewDart(128, 1)
	r := rand.New(rand.NewPCG(8, 8))
	sets := [][]uint64{randomSet(r, 1), randomSet(r, 300), randomSet(r, 5000)}
	sig := make(Signature, 128)
	for _, s := range sets { // fill the pool
		sig = d.Sketch(sig, s)
	}
	allocs := testing.AllocsPerRun(100, func() {
		for _, s := range sets {
			sig = d.Sketch(sig, s)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per run, want 0", allocs)
	}
}

// TestDartConcurrent sketches from several goroutines with one Dart.
func TestDartConcurrent(t *testing.T) {
	d, _ := NewDart(64, 3)
	r := rand.New(rand.NewPCG(9, 9))
	sets := make([][]uint64, 40)
	want := make([]Signature, len(sets))
	for i := range sets {
		sets[i] = randomSet(r, 1+i*37)
		want[i] = d.Sketch(nil, sets[i])
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Go(func() {
			var sig Signature
			for rep := range 20 {
				i := (w*7 + rep*3) % len(sets)
				sig = d.Sketch(sig, sets[i])
				if !slices.Equal(sig, want[i]) {
					errs <- fmt.Errorf("goroutine %d: set %d differs", w, i)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
