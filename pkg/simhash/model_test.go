package simhash

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestFlipProbability checks known values of the model: J = 1/3 gives
// cos θ = 1/2, θ = π/3; J = 0.8 gives cos θ = 8/9.
func TestFlipProbability(t *testing.T) {
	tests := []struct {
		j, q, dist float64
	}{
		{1, 0, 0},
		{0, 0.5, 32},
		{1.0 / 3, 1.0 / 3, 64.0 / 3},
		{0.8, math.Acos(8.0/9) / math.Pi, 64 * math.Acos(8.0/9) / math.Pi},
		{-0.5, 0.5, 32}, // clamped
		{1.5, 0, 0},     // clamped
	}
	for _, tc := range tests {
		q, d := FlipProbability(tc.j), ExpectedDistance(tc.j)
		if math.Abs(q-tc.q) > 1e-12 || math.Abs(d-tc.dist) > 1e-10 {
			t.Errorf("J=%g: q = %.6f, distance %.4f; want %.6f, %.4f", tc.j, q, d, tc.q, tc.dist)
		}
	}
	// The figures quoted in the documentation.
	if q, d := FlipProbability(0.8), ExpectedDistance(0.8); math.Abs(q-0.152) > 0.001 || math.Abs(d-9.7) > 0.05 {
		t.Errorf("J=0.8: q = %.4f, distance %.3f; quoted 0.152 and 9.7", q, d)
	}
}

// binomPMF returns P(D = i) for D ~ Binomial(n, q), through logarithms
// (independent of the recurrence in FoundProbability).
func binomPMF(n, i int, q float64) float64 {
	ln, _ := math.Lgamma(float64(n + 1))
	li, _ := math.Lgamma(float64(i + 1))
	lr, _ := math.Lgamma(float64(n - i + 1))
	return math.Exp(ln - li - lr + float64(i)*math.Log(q) + float64(n-i)*math.Log1p(-q))
}

func TestFoundProbability(t *testing.T) {
	c6432 := math.Exp(func() float64 { l, _ := math.Lgamma(65); m, _ := math.Lgamma(33); return l - 2*m }())
	tests := []struct {
		j    float64
		k    int
		want float64
	}{
		{1, 0, 1},
		{1, 3, 1},
		{0.5, -1, 0},
		{0.5, 64, 1},
		{0.5, 100, 1},
		{0, 0, math.Pow(2, -64)},
		{0, 32, 0.5 + c6432/math.Pow(2, 65)}, // symmetric around 32
		{0, 63, 1 - math.Pow(2, -64)},
		{1.0 / 3, 0, math.Pow(2.0/3, 64)},
		{1.0 / 3, 1, math.Pow(2.0/3, 64) + 64*math.Pow(2.0/3, 63)/3},
	}
	for _, tc := range tests {
		if got := FoundProbability(tc.j, tc.k); math.Abs(got-tc.want) > 1e-12*max(1, tc.want) && math.Abs(got/tc.want-1) > 1e-9 {
			t.Errorf("FoundProbability(%g, %d) = %.15g, want %.15g", tc.j, tc.k, got, tc.want)
		}
	}
	// Against a sum of log-computed binomial terms.
	for _, j := range []float64{0.5, 0.8, 0.9, 0.95, 0.99} {
		q, sum := FlipProbability(j), 0.0
		for k := range 64 {
			sum += binomPMF(64, k, q)
			if got := FoundProbability(j, k); math.Abs(got-sum) > 1e-12 {
				t.Errorf("FoundProbability(%g, %d) = %.15g, sum of terms %.15g", j, k, got, sum)
			}
		}
	}
}

func TestCandidateProbability(t *testing.T) {
	tests := []struct {
		j    float64
		k    int
		want float64
	}{
		{1, 3, 1},
		{1, MaxK, 1},
		{0, 0, math.Pow(2, -64)},
		{0, 1, math.Pow(2, -31) - math.Pow(2, -64)},                     // 1 - (1-2^-32)^2
		{0, 3, 1 - math.Pow(1-math.Pow(2, -16), 4)},                     // 6.1e-5, as the package doc says
		{0, 6, 1 - (1-math.Pow(2, -10))*math.Pow(1-math.Pow(2, -9), 6)}, // 7 blocks: 10 + 6*9 bits
		{0, MaxK, 1 - math.Pow(15.0/16, 16)},                            // 0.644
		{1.0 / 3, 0, math.Pow(2.0/3, 64)},                               // one block: P(distance 0)
		{0.8, 1, 1 - math.Pow(1-math.Pow(1-FlipProbability(0.8), 32), 2)},
	}
	for _, tc := range tests {
		b, err := NewBlocks(tc.k)
		if err != nil {
			t.Fatal(err)
		}
		if got := CandidateProbability(tc.j, b); math.Abs(got/tc.want-1) > 1e-6 {
			t.Errorf("CandidateProbability(%g, k=%d) = %.10g, want %.10g", tc.j, tc.k, got, tc.want)
		}
	}
	if got := CandidateProbability(0.9, Blocks{}); got != 0 {
		t.Errorf("the zero Blocks: %g", got)
	}
}

// TestModelMonotone checks that, as J grows, q falls and both
// probabilities rise; that a larger k finds more; and that every found
// pair is a candidate (pigeonhole), with equality at k = 0.
func TestModelMonotone(t *testing.T) {
	for k := 0; k <= MaxK; k++ {
		b, _ := NewBlocks(k)
		prevQ, prevC, prevF := 1.0, -1.0, -1.0
		for i := 0; i <= 100; i++ {
			j := float64(i) / 100
			q, c, f := FlipProbability(j), CandidateProbability(j, b), FoundProbability(j, k)
			if q > prevQ || c < prevC-1e-15 || f < prevF-1e-15 {
				t.Fatalf("k=%d J=%.2f: q %g (before %g), P(candidate) %g (%g), P(found) %g (%g)", k, j, q, prevQ, c, prevC, f, prevF)
			}
			if f > c+1e-12 || k == 0 && math.Abs(f-c) > 1e-12 {
				t.Fatalf("k=%d J=%.2f: P(found) %g, P(candidate) %g", k, j, f, c)
			}
			if k > 0 && f < FoundProbability(j, k-1) {
				t.Fatalf("k=%d J=%.2f: P(found) %g below that at k-1", k, j, f)
			}
			prevQ, prevC, prevF = q, c, f
		}
	}
}

// equalSets returns two sets of n random hashes that share m of them.
func equalSets(r *rand.Rand, n, m int) (a, b []uint64) {
	h := randomHashes(r, 2*n-m)
	return h[:n], h[n-m:]
}

// TestModelMonteCarlo fingerprints random sets of n = 1000 hashes that
// share m of them (Jaccard m/(2n-m)) and compares, over the trials, the
// mean Hamming distance, the share within distance k and the share that
// shares a block key for k with the model, each within 3 standard errors.
// The model is for many shingles: with fewer, the ±1 votes flip a bit
// slightly less often than θ/π (by 0.6% at n = 300 and J = 0.8, 1.4% at
// J = 0.94, where 2000 trials would see it), hence n = 1000 (0.2% and
// 0.4%).
func TestModelMonteCarlo(t *testing.T) {
	const n = 1000
	tests := []struct {
		m    int
		ks   []int
		seed uint64
	}{
		{667, []int{6, 15}, 41}, // J = 0.500
		{889, []int{3, 10}, 42}, // J = 0.800
		{967, []int{3, 6}, 44},  // J = 0.936
	}
	trials := 2000
	if testing.Short() {
		trials = 500
	}
	for _, tc := range tests {
		j := float64(tc.m) / float64(2*n-tc.m)
		t.Run(fmt.Sprintf("J=%.3f", j), func(t *testing.T) {
			r := rand.New(rand.NewPCG(tc.seed, 0))
			within := make([]int, len(tc.ks))
			shared := make([]int, len(tc.ks))
			blocks := make([]Blocks, len(tc.ks))
			for i, k := range tc.ks {
				blocks[i], _ = NewBlocks(k)
			}
			sum := 0
			for range trials {
				a, b := equalSets(r, n, tc.m)
				fa, fb := Fingerprint(a), Fingerprint(b)
				d := Distance(fa, fb)
				sum += d
				for i, k := range tc.ks {
					if d <= k {
						within[i]++
					}
					if sharedKeys(blocks[i], fa, fb) > 0 {
						shared[i]++
					}
				}
			}
			q := FlipProbability(j)
			mean, se := float64(sum)/float64(trials), math.Sqrt(64*q*(1-q)/float64(trials))
			t.Logf("mean distance %.3f, model %.3f (z = %+.2f)", mean, 64*q, (mean-64*q)/se)
			if math.Abs(mean-64*q) > 3*se {
				t.Errorf("mean distance %.3f, model %.3f ± %.3f", mean, 64*q, se)
			}
			check := func(what string, k, count int, p float64) {
				got := float64(count) / float64(trials)
				se := math.Sqrt(p * (1 - p) / float64(trials))
				t.Logf("k=%d: %s %.4f, model %.4f (z = %+.2f)", k, what, got, p, (got-p)/max(se, 1e-12))
				// A count of 1 is allowed for very small p.
				if math.Abs(got-p) > 3*se+1/float64(trials) {
					t.Errorf("k=%d: %s %.4f, model %.4f ± %.4f", k, what, got, p, se)
				}
			}
			for i, k := range tc.ks {
				check("P(distance <= k)", k, within[i], FoundProbability(j, k))
				check("P(candidate)", k, shared[i], CandidateProbability(j, blocks[i]))
			}
		})
	}
}
