package bands

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/pkg/minhash"
)

func TestSCurveWorkedExample(t *testing.T) {
	p := Params{Bands: 20, Rows: 5}
	tests := []struct {
		s    float64
		want string
	}{
		{0.2, "0.006"}, {0.3, "0.047"}, {0.4, "0.186"}, {0.5, "0.470"},
		{0.6, "0.802"}, {0.7, "0.975"}, {0.8, "0.9996"},
	}
	for _, tc := range tests {
		prec := len(tc.want) - 2
		got := Probability(tc.s, p)
		if g := strconv.FormatFloat(got, 'f', prec, 64); g != tc.want {
			t.Errorf("Probability(%v) = %v, rounds to %s, want %s", tc.s, got, g, tc.want)
		}
		if d := got - (1 - math.Pow(1-math.Pow(tc.s, 5), 20)); math.Abs(d) > 1e-12*got {
			t.Errorf("Probability(%v) differs from the plain formula by %g", tc.s, d)
		}
	}
	if got := ApproxThreshold(p); math.Abs(got-math.Pow(0.05, 0.2)) > 1e-15 {
		t.Errorf("ApproxThreshold = %v", got)
	}
}

func TestSteepest(t *testing.T) {
	for _, p := range []Params{{20, 5}, {32, 4}, {16, 8}, {4, 32}, {100, 2}, {2, 3}, {1, 4}, {9, 1}} {
		b, r := float64(p.Bands), float64(p.Rows)
		want := math.Pow((r-1)/(b*r-1), 1/r)
		if got := Steepest(p); math.Abs(got-want) > 1e-15 {
			t.Errorf("%v: Steepest = %v, want %v", p, got, want)
		}
		// Numerical derivative peak on a grid of step 1e-5.
		const h = 1e-5
		bestS, bestD := 0.0, -1.0
		for s := 0.0; s <= 1; s += h {
			lo, hi := max(s-h, 0), min(s+h, 1)
			if d := (Probability(hi, p) - Probability(lo, p)) / (hi - lo); d > bestD {
				bestS, bestD = s, d
			}
		}
		if math.Abs(bestS-want) > 2*h {
			t.Errorf("%v: derivative peaks at %v, Steepest %v", p, bestS, want)
		}
	}
}

func TestOptimalErrors(t *testing.T) {
	tests := []struct {
		t      float64
		k      int
		fp, fn float64
	}{
		{0, 128, .5, .5}, {1, 128, .5, .5}, {-0.1, 128, .5, .5}, {math.NaN(), 128, .5, .5},
		{0.5, 0, .5, .5}, {0.5, 128, -1, 1}, {0.5, 128, 0, 0}, {0.5, 128, math.NaN(), 1}, {0.5, 128, math.Inf(1), 1},
	}
	for _, tc := range tests {
		if _, err := Optimal(tc.t, tc.k, tc.fp, tc.fn); !errors.Is(err, ErrInvalid) {
			t.Errorf("Optimal(%v, %d, %v, %v) error = %v, want ErrInvalid", tc.t, tc.k, tc.fp, tc.fn, err)
		}
	}
	if err := (Params{0, 3}).Validate(); !errors.Is(err, ErrInvalid) {
		t.Errorf("Validate of 0 bands: %v", err)
	}
}

// gaussArea integrates f over [a, b] with 64 panels of 20-point
// Gauss-Legendre (nodes computed by Newton iteration): an integrator
// independent of the one under test.
func gaussArea(f func(float64) float64, a, b float64) float64 {
	const n = 20
	var x, w [n]float64
	for i := range n {
		z := math.Cos(math.Pi * (float64(i) + 0.75) / (n + 0.5))
		for range 100 {
			p0, p1 := 1.0, 0.0
			for j := 1; j <= n; j++ {
				p0, p1 = ((2*float64(j)-1)*z*p0-(float64(j)-1)*p1)/float64(j), p0
			}
			dp := n * (z*p0 - p1) / (z*z - 1)
			dz := p0 / dp
			z -= dz
			if math.Abs(dz) < 1e-16 {
				p0, p1 = 1.0, 0.0
				for j := 1; j <= n; j++ {
					p0, p1 = ((2*float64(j)-1)*z*p0-(float64(j)-1)*p1)/float64(j), p0
				}
				dp = n * (z*p0 - p1) / (z*z - 1)
				x[i], w[i] = z, 2/((1-z*z)*dp*dp)
				break
			}
		}
	}
	const panels = 64
	h := (b - a) / panels
	sum := 0.0
	for p := range panels {
		lo := a + float64(p)*h
		for i := range n {
			sum += w[i] * h / 2 * f(lo+h/2*(x[i]+1))
		}
	}
	return sum
}

func TestAreasMatchIndependentIntegration(t *testing.T) {
	for _, p := range []Params{{1, 1}, {20, 5}, {4, 32}, {128, 1}, {1, 128}} {
		for _, th := range []float64{0.1, 0.5, 0.9} {
			fp, fn := Areas(th, p)
			gfp := gaussArea(func(s float64) float64 { return Probability(s, p) }, 0, th)
			gfn := gaussArea(func(s float64) float64 { return 1 - Probability(s, p) }, th, 1)
			if math.Abs(fp-gfp) > 1e-9 || math.Abs(fn-gfn) > 1e-9 {
				t.Errorf("%v t=%v: areas %v %v, Gauss-Legendre %v %v", p, th, fp, fn, gfp, gfn)
			}
		}
	}
}

// TestOptimalIsTrueMinimum compares Optimal with a brute force over all
// b*r <= k using the independent integrator.
func TestOptimalIsTrueMinimum(t *testing.T) {
	ks := []int{16, 64, 128}
	if testing.Short() {
		ks = []int{16, 64}
	}
	for _, k := range ks {
		for _, th := range []float64{0.5, 0.8, 0.9} {
			for _, wt := range [][2]float64{{0.5, 0.5}, {0.1, 0.9}, {0.05, 0.95}} {
				got, err := Optimal(th, k, wt[0], wt[1])
				if err != nil {
					t.Fatal(err)
				}
				cost := func(p Params) float64 {
					fp := gaussArea(func(s float64) float64 { return Probability(s, p) }, 0, th)
					fn := gaussArea(func(s float64) float64 { return 1 - Probability(s, p) }, th, 1)
					return wt[0]*fp + wt[1]*fn
				}
				gotCost := cost(got)
				for b := 1; b <= k; b++ {
					for r := 1; b*r <= k; r++ {
						if c := cost(Params{b, r}); c < gotCost-1e-9 {
							t.Errorf("k=%d t=%v w=%v: Optimal %v costs %.6g, %v costs %.6g", k, th, wt, got, gotCost, Params{b, r}, c)
						}
					}
				}
			}
		}
	}
}

// keyRef is the documented definition of a band key.
func keyRef(i int, band []uint32) uint64 {
	buf := binary.LittleEndian.AppendUint32(nil, uint32(i))
	for _, v := range band {
		buf = binary.LittleEndian.AppendUint32(buf, v)
	}
	return xxhash.Sum64(buf)
}

func TestKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, p := range []Params{{1, 1}, {32, 4}, {20, 5}, {4, 31}, {2, 32}, {1, 100}, {3, 70}} {
		sig := make(minhash.Signature, p.K()+3)
		for i := range sig {
			sig[i] = r.Uint32()
		}
		keys := Keys([]uint64{7}, sig, p)
		if len(keys) != p.Bands+1 || keys[0] != 7 {
			t.Fatalf("%v: Keys returned %d values", p, len(keys))
		}
		for i, key := range keys[1:] {
			if want := keyRef(i, sig[i*p.Rows:(i+1)*p.Rows]); key != want {
				t.Fatalf("%v: key %d = %x, want %x", p, i, key, want)
			}
		}
		allocs := testing.AllocsPerRun(10, func() { keys = Keys(keys[:0], sig, p) })
		if allocs != 0 {
			t.Errorf("%v: %v allocations", p, allocs)
		}
	}
	// Equal values in different bands give different keys.
	same := minhash.Signature{5, 5, 5, 5}
	k := Keys(nil, same, Params{2, 2})
	if k[0] == k[1] {
		t.Error("band index is not part of the key")
	}
	if got := Keys(nil, nil, Params{2, 2}); len(got) != 0 {
		t.Error("an empty signature has keys")
	}
	defer func() {
		if recover() == nil {
			t.Error("short signature did not panic")
		}
	}()
	Keys(nil, same, Params{3, 2})
}

func TestPartition(t *testing.T) {
	for _, tc := range []struct {
		key   uint64
		parts int
		want  int
	}{{0, 1, 0}, {10, 3, 1}, {math.MaxUint64, 7, int(uint64(math.MaxUint64) % 7)}, {5, 5, 0}} {
		if got := Partition(tc.key, tc.parts); got != tc.want {
			t.Errorf("Partition(%d, %d) = %d, want %d", tc.key, tc.parts, got, tc.want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Partition(k, 0) did not panic")
		}
	}()
	Partition(1, 0)
}

// optimalByAll is Optimal integrating every pair (b, r), as it did
// before it bounded their costs first.
func optimalByAll(t float64, k int, fpWeight, fnWeight float64) Params {
	var pairs []Params
	var costs []float64
	for b := 1; b <= k; b++ {
		for r := 1; b*r <= k; r++ {
			fp, fn := Areas(t, Params{b, r})
			pairs, costs = append(pairs, Params{b, r}), append(costs, fpWeight*fp+fnWeight*fn)
		}
	}
	return firstLeast(pairs, costs)
}

// TestOptimalBounded checks that Optimal, which integrates only the pairs
// whose lower bound comes near the least cost, chooses what integrating
// every pair chooses, over thresholds, sizes and weights.
func TestOptimalBounded(t *testing.T) {
	ks := []int{1, 3, 16, 100, 128}
	ths := []float64{0.05, 0.2, 0.33, 0.5, 0.7, 0.77, 0.8, 0.9, 0.99}
	if testing.Short() {
		ks, ths = []int{1, 7, 128}, []float64{0.05, 0.5, 0.8, 0.99}
	}
	for _, k := range ks {
		for _, th := range ths {
			for _, w := range [][2]float64{{0.5, 0.5}, {0.05, 0.95}, {1, 0}, {0, 1}, {2, 5}} {
				got, err := Optimal(th, k, w[0], w[1])
				if err != nil {
					t.Fatal(err)
				}
				if want := optimalByAll(th, k, w[0], w[1]); got != want {
					t.Errorf("k=%d t=%v w=%v: Optimal %v, every pair integrated %v", k, th, w, got, want)
				}
			}
		}
	}
}

// TestLowerCost checks lowerCost against the integrated cost of every
// pair at K = 64.
func TestLowerCost(t *testing.T) {
	for _, th := range []float64{0.1, 0.5, 0.8, 0.95} {
		for b := 1; b <= 64; b++ {
			for r := 1; b*r <= 64; r++ {
				p := Params{b, r}
				fp, fn := Areas(th, p)
				if lb, c := lowerCost(th, p, 0.3, 0.7), 0.3*fp+0.7*fn; lb > c {
					t.Errorf("t=%v %v: bound %v above the cost %v", th, p, lb, c)
				}
			}
		}
	}
}
