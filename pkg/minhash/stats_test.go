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

// statSizes and statJs are the set sizes and target similarities of the
// statistical tests (tiny sets round J, see pairWithJaccard).
var (
	statSizes = []int{1, 2, 5, 10, 20, 50, 100, 1000, 10000}
	statJs    = []float64{0.3, 0.5, 0.7, 0.8, 0.9}
)

// newSketcher returns the named sketch ("dart" or "classic").
func newSketcher(t testing.TB, kind string, k int, seed uint64) Sketcher {
	var sk Sketcher
	var err error
	switch kind {
	case "dart":
		sk, err = NewDart(k, seed)
	case "classic":
		sk, err = NewClassic(k, seed)
	default:
		t.Fatalf("unknown sketch %q", kind)
	}
	if err != nil {
		t.Fatal(err)
	}
	return sk
}

// TestEstimatorStatistics checks, for Dart and Classic, pairs of sets of
// n = 1..10000 hashes with known Jaccard similarity J, over many trials
// (fresh random sets and a different sketch seed each): with K independent
// values, the number of equal values M = K*Estimate is Binomial(K, J), so
//   - the mean of M is within 3 standard errors sqrt(KJ(1-J)/T) of KJ;
//   - its sample variance S^2 is within 3 standard errors of KJ(1-J), the
//     standard error of S^2 being sqrt((mu4 - sigma^4 (T-3)/(T-1)) / T) with
//     the binomial's fourth central moment mu4 = Kpq(1 + 3(K-2)pq);
//   - over all cells, the sums of the squared deviates of the means and of
//     the variances are each consistent with chi-square(cells) (cells are
//     independent), so that a small systematic bias cannot hide;
//   - pairs whose J rounds to 0 or 1 (tiny sets) have every estimate equal
//     to J.
func TestEstimatorStatistics(t *testing.T) {
	const k = 128
	trials := 400
	if testing.Short() {
		trials = 100
	}
	for _, kind := range []string{"dart", "classic"} {
		var chiMean, chiVar float64
		cells := 0
		worstMean, worstVar := 0.0, 0.0
		for ci, n := range statSizes {
			for cj, jt := range statJs {
				r := rand.New(rand.NewPCG(uint64(ci), uint64(cj)))
				var sum, sum2 float64
				var exact float64
				var sa, sb Signature
				for tr := range trials {
					var a, b []uint64
					a, b, exact = pairWithJaccard(r, n, jt)
					sk := newSketcher(t, kind, k, uint64(tr)*7919+uint64(ci*16+cj))
					sa, sb = sk.Sketch(sa, a), sk.Sketch(sb, b)
					m := Estimate(sa, sb) * k
					sum += m
					sum2 += m * m
				}
				tf := float64(trials)
				mean := sum / tf
				variance := (sum2 - sum*sum/tf) / (tf - 1)
				if exact == 0 || exact == 1 {
					if mean != k*exact || variance != 0 {
						t.Errorf("%s n=%d J=%v: estimates not all %v (mean %v)", kind, n, exact, exact, mean/k)
					}
					continue
				}
				p, q := exact, 1-exact
				sigma2 := k * p * q
				mu4 := k * p * q * (1 + 3*(k-2)*p*q)
				zMean := (mean - k*p) / math.Sqrt(sigma2/tf)
				zVar := (variance - sigma2) / math.Sqrt((mu4-sigma2*sigma2*(tf-3)/(tf-1))/tf)
				chiMean += zMean * zMean
				chiVar += zVar * zVar
				cells++
				worstMean = max(worstMean, math.Abs(zMean))
				worstVar = max(worstVar, math.Abs(zVar))
				t.Logf("%-7s n=%5d J=%.3f  mean=%.4f (z=%+.2f)  sd=%.4f  binomial sd=%.4f (z=%+.2f)",
					kind, n, exact, mean/k, zMean, math.Sqrt(variance)/k, math.Sqrt(sigma2)/k, zVar)
				if math.Abs(zMean) > 3 {
					t.Errorf("%s n=%d J=%.3f: mean estimate %.4f is %.1f standard errors from J", kind, n, exact, mean/k, zMean)
				}
				if math.Abs(zVar) > 3 {
					t.Errorf("%s n=%d J=%.3f: sd %.4f vs binomial %.4f, %.1f standard errors", kind, n, exact,
						math.Sqrt(variance)/k, math.Sqrt(sigma2)/k, zVar)
				}
			}
		}
		zm, zv := chiSquareZ(chiMean, cells), chiSquareZ(chiVar, cells)
		t.Logf("%s: %d cells, worst |z| mean %.2f, spread %.2f; sum of z^2: means %.1f (z=%+.2f), spreads %.1f (z=%+.2f), chi-square with %d df",
			kind, cells, worstMean, worstVar, chiMean, zm, chiVar, zv, cells)
		if zm > 3.1 || zv > 3.1 {
			t.Errorf("%s: sums of squared deviates too large for chi-square(%d): means %.1f, spreads %.1f", kind, cells, chiMean, chiVar)
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
