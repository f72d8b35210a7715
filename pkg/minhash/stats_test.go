package minhash

import (
	"math"
	"math/rand/v2"
	"testing"
)

// pairWithJaccard returns two sets of n random 64-bit values sharing
// round(2nJ/(1+J)) values, and their exact Jaccard similarity.
func pairWithJaccard(r *rand.Rand, n int, j float64) (a, b []uint64, exact float64) {
	inter := int(math.Round(2 * float64(n) * j / (1 + j)))
	inter = min(inter, n)
	a = make([]uint64, 0, n)
	b = make([]uint64, 0, n)
	for range inter {
		v := r.Uint64()
		a = append(a, v)
		b = append(b, v)
	}
	for range n - inter {
		a = append(a, r.Uint64())
		b = append(b, r.Uint64())
	}
	return a, b, float64(inter) / float64(2*n-inter)
}

func meanSD(x []float64) (mean, sd float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		sd += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(sd / float64(len(x)-1))
}

// TestEstimatorStatistics checks, for each sketch and for pairs of sets of
// 5..5000 shingles with known Jaccard 0.3..0.95, over many trials (each a
// different sketch seed and fresh random sets):
//   - the mean estimate is within 3 standard errors of the truth, the
//     standard error of the mean being sqrt(J(1-J)/K)/sqrt(trials), except
//     for OPH on sets smaller than 2K shingles, where densification makes
//     the per-trial variance larger and the observed variance is used;
//   - for sets of at least 2K shingles the sample standard deviation is at
//     most 1.25 times the binomial sqrt(J(1-J)/K).
func TestEstimatorStatistics(t *testing.T) {
	const k = 128
	trials := 400
	if testing.Short() {
		trials = 100
	}
	sizes := []int{5, 50, 500, 5000}
	js := []float64{0.3, 0.5, 0.8, 0.95}
	for _, kind := range []string{"OPH", "Classic"} {
		for ci, n := range sizes {
			for cj, jt := range js {
				r := rand.New(rand.NewPCG(uint64(ci), uint64(cj)))
				ests := make([]float64, trials)
				var exact float64
				var sa, sb Signature
				for tr := range ests {
					var a, b []uint64
					a, b, exact = pairWithJaccard(r, n, jt)
					seed := uint64(tr)*7919 + uint64(ci*16+cj)
					var sk Sketcher
					if kind == "OPH" {
						sk, _ = NewOPH(k, seed)
					} else {
						sk, _ = NewClassic(k, seed)
					}
					sa = sk.Sketch(sa, a)
					sb = sk.Sketch(sb, b)
					ests[tr] = Estimate(sa, sb)
				}
				mean, sd := meanSD(ests)
				if exact == 1 { // n=5, J=0.95 rounds to identical sets
					if mean != 1 {
						t.Errorf("%s n=%d: identical sets have mean estimate %v", kind, n, mean)
					}
					continue
				}
				binom := StdErr(exact, k)
				seMean := binom / math.Sqrt(float64(trials))
				observed := kind == "OPH" && n < 2*k
				if observed {
					seMean = sd / math.Sqrt(float64(trials))
				}
				z := (mean - exact) / seMean
				t.Logf("%-7s n=%4d J=%.3f  mean=%.4f (z=%+.2f)  sd=%.4f  binomial sd=%.4f  ratio=%.2f",
					kind, n, exact, mean, z, sd, binom, sd/binom)
				if math.Abs(z) > 3 {
					t.Errorf("%s n=%d J=%.3f: mean %.4f is %.1f standard errors from the truth", kind, n, exact, mean, z)
				}
				if n >= 2*k && sd > 1.25*binom {
					t.Errorf("%s n=%d J=%.3f: sd %.4f > 1.25 * binomial %.4f", kind, n, exact, sd, binom)
				}
			}
		}
	}
}

// TestClassicBiasOnStructuredInput documents why shingle hashes must be
// mixed: multiply-shift over small consecutive integers is biased, over
// mixed hashes it is not. Only the mixed case is asserted.
func TestClassicBiasOnStructuredInput(t *testing.T) {
	const k, n, trials = 128, 1000, 200
	mix := func(x uint64) uint64 { g := splitmix64{x}; return g.next() }
	for _, mixed := range []bool{false, true} {
		sum := 0.0
		for tr := range trials {
			// A = {0..n-1}, B = {n/3 .. n/3+n-1}: J = (2n/3)/(4n/3) = 0.5.
			a := make([]uint64, n)
			b := make([]uint64, n)
			for i := range n {
				a[i], b[i] = uint64(i), uint64(i+n/3)
				if mixed {
					a[i], b[i] = mix(a[i]), mix(b[i])
				}
			}
			c, _ := NewClassic(k, uint64(tr))
			sum += Estimate(c.Sketch(nil, a), c.Sketch(nil, b))
		}
		exact := float64(n-n/3) / float64(n+n/3)
		mean := sum / trials
		se := StdErr(exact, k) / math.Sqrt(trials)
		t.Logf("mixed=%v: mean estimate %.4f, truth %.4f, bias %+.4f (%.1f SE)", mixed, mean, exact, mean-exact, (mean-exact)/se)
		if mixed && math.Abs(mean-exact) > 3*se {
			t.Errorf("mixed input: bias %.4f", mean-exact)
		}
	}
}
