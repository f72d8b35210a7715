package bands

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/neardup/neardup/pkg/minhash"
)

// pairWithJaccard returns two sets of n random 64-bit values sharing
// round(2nJ/(1+J)) values, and their exact Jaccard similarity.
func pairWithJaccard(r *rand.Rand, n int, j float64) (a, b []uint64, exact float64) {
	inter := min(int(math.Round(2*float64(n)*j/(1+j))), n)
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

func shareKey(a, b []uint64) bool {
	for i := range a {
		if a[i] == b[i] { // same band index: keys of different bands differ anyway
			return true
		}
	}
	return false
}

// Settings of the collision test: set sizes, target similarities (tiny
// sets round them, see pairWithJaccard) and banding parameters: 16x8 and
// 26x3 are the defaults at thresholds 0.8 and 0.5 with K=128.
var (
	collisionSizes  = []int{1, 2, 5, 10, 20, 50, 100, 1000, 10000}
	collisionJs     = []float64{0.3, 0.5, 0.7, 0.8, 0.9}
	collisionParams = []Params{{16, 8}, {26, 3}, {9, 14}, {20, 5}}
)

// TestBandCollisionRate checks, for the Dart and Classic sketches (K=128),
// that two sets of n hashes with Jaccard similarity J share a band key at
// the rate 1-(1-J^r)^b, for every set size, J and banding parameters, with
// no exemption. Each cell (sketch, n, J, b x r) has `trials` pairs (fresh
// random sets, a different sketch seed each; the four banding parameters
// share the pairs):
//   - a cell passes if its rate is within 3 binomial standard errors of
//     the expected probability P or, when the normal approximation is poor
//     (trials*P*(1-P) < 10), if the exact binomial two-sided p-value is at
//     least 0.0027 (the same level); pairs whose J rounds to 0 or 1 must
//     collide never or always;
//   - aggregate: for each (sketch, n, J), the vector of the rates of the
//     normally approximated cells is compared with its expectation by the
//     Mahalanobis distance under the exact covariance of the four band
//     indicators for independent values (missBoth); the sum over groups is
//     chi-square with as many degrees of freedom as cells. The signed sum
//     of the rate deviations, over its exact standard deviation, must also
//     be within 3: together they catch a small bias common to many cells.
func TestBandCollisionRate(t *testing.T) {
	const k = 128
	trials := 1000
	if testing.Short() {
		trials = 200
	}
	for _, kind := range []string{"dart", "classic"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			var chi, sumDev, sumVar float64
			df, cells, degenerate, worst, minPV := 0, 0, 0, 0.0, 1.0
			for ci, n := range collisionSizes {
				for cj, jt := range collisionJs {
					r := rand.New(rand.NewPCG(uint64(100+ci), uint64(cj)))
					hits := make([]int, len(collisionParams))
					var exact float64
					var sa, sb minhash.Signature
					var ka, kb []uint64
					for tr := range trials {
						var a, b []uint64
						a, b, exact = pairWithJaccard(r, n, jt)
						sk := newSketcher(t, kind, k, uint64(tr)*104729+uint64(ci*16+cj))
						sa, sb = sk.Sketch(sa, a), sk.Sketch(sb, b)
						for pi, p := range collisionParams {
							ka, kb = Keys(ka[:0], sa, p), Keys(kb[:0], sb, p)
							if shareKey(ka, kb) {
								hits[pi]++
							}
						}
					}
					var normal []int // indices of the normally approximated cells
					for pi, p := range collisionParams {
						cells++
						want := Probability(exact, p)
						rate := float64(hits[pi]) / float64(trials)
						if float64(trials)*want*(1-want) >= 10 {
							normal = append(normal, pi)
							z := (rate - want) / math.Sqrt(want*(1-want)/float64(trials))
							worst = max(worst, math.Abs(z))
							t.Logf("%-7s n=%5d J=%.3f %-9v P=%.4f rate=%.4f z=%+.2f", kind, n, exact, p, want, rate, z)
							if math.Abs(z) > 3 {
								t.Errorf("%s n=%d J=%.3f %v: collision rate %.4f, want %.4f (z=%.2f)", kind, n, exact, p, rate, want, z)
							}
							continue
						}
						pv := binomialTwoSided(trials, want, hits[pi])
						if exact == 0 || exact == 1 {
							degenerate++
						} else {
							minPV = min(minPV, pv)
						}
						t.Logf("%-7s n=%5d J=%.3f %-9v P=%.6f rate=%.4f exact p-value %.3g", kind, n, exact, p, want, rate, pv)
						if pv < 0.0027 {
							t.Errorf("%s n=%d J=%.3f %v: %d collisions in %d trials, P=%.6f (p-value %.3g)", kind, n, exact, p, hits[pi], trials, want, pv)
						}
					}
					if len(normal) == 0 {
						continue
					}
					// Mahalanobis distance of the rates under the exact
					// covariance, and the signed sum.
					m := len(normal)
					cov := make([]float64, m*m)
					dev := make([]float64, m)
					for a, pa := range normal {
						p := collisionParams[pa]
						dev[a] = float64(hits[pa])/float64(trials) - Probability(exact, p)
						for b, pb := range normal {
							q := collisionParams[pb]
							c := (missBoth(exact, p, q) - missProbability(exact, p)*missProbability(exact, q)) / float64(trials)
							cov[a*m+b] = c
							sumVar += c
						}
						sumDev += dev[a]
					}
					chi += mahalanobis(cov, dev)
					df += m
				}
			}
			zChi := chiSquareZ(chi, df)
			zSum := sumDev / math.Sqrt(sumVar)
			t.Logf("%s: %d cells: %d normally approximated (worst |z| %.2f), %d exact binomial (least p-value %.3g), %d with J rounded to 0 or 1; "+
				"Mahalanobis sum %.1f for chi-square(%d) (z=%+.2f); signed sum z=%+.2f",
				kind, cells, df, worst, cells-df-degenerate, minPV, degenerate, chi, df, zChi, zSum)
			if zChi > 3.1 || math.Abs(zSum) > 3 {
				t.Errorf("%s: aggregate deviation: chi-square %.1f with %d df (z=%.2f), signed sum z=%.2f", kind, chi, df, zChi, zSum)
			}
		})
	}
}

// newSketcher returns the named sketch ("dart" or "classic").
func newSketcher(t testing.TB, kind string, k int, seed uint64) minhash.Sketcher {
	var sk minhash.Sketcher
	var err error
	switch kind {
	case "dart":
		sk, err = minhash.NewDart(k, seed)
	case "classic":
		sk, err = minhash.NewClassic(k, seed)
	default:
		err = fmt.Errorf("unknown sketch %q", kind)
	}
	if err != nil {
		t.Fatal(err)
	}
	return sk
}

// missBoth returns the probability that neither a band of p nor a band of
// q has all its values equal, for signatures whose values are equal
// independently with probability s (both use the first values: the bands
// overlap). A dynamic program over the positions tracks whether the
// current band of each still has only equal values.
func missBoth(s float64, p, q Params) float64 {
	// state bit 0: the current band of p is all equal so far; bit 1: of q.
	var prob [4]float64
	prob[3] = 1
	for i := range max(p.K(), q.K()) {
		var next [4]float64
		for st, w := range prob {
			if w == 0 {
				continue
			}
			for _, eq := range []bool{true, false} {
				pw := s
				if !eq {
					pw = 1 - s
				}
				pa, qa := st&1 != 0 && eq, st&2 != 0 && eq
				if i < p.K() && (i+1)%p.Rows == 0 {
					if pa {
						continue // a band of p collides
					}
					pa = true // the next band starts
				}
				if i < q.K() && (i+1)%q.Rows == 0 {
					if qa {
						continue
					}
					qa = true
				}
				ns := 0
				if pa {
					ns |= 1
				}
				if qa {
					ns |= 2
				}
				next[ns] += w * pw
			}
		}
		prob = next
	}
	return prob[0] + prob[1] + prob[2] + prob[3]
}

// TestMissBoth checks missBoth against the closed forms: for p = q it is
// (1-s^r)^b, and for bands on disjoint values it is the product.
func TestMissBoth(t *testing.T) {
	for _, s := range []float64{0.1, 0.5, 0.9} {
		for _, p := range collisionParams {
			if got, want := missBoth(s, p, p), missProbability(s, p); math.Abs(got-want) > 1e-12 {
				t.Errorf("missBoth(%v, %v, %v) = %v, want %v", s, p, p, got, want)
			}
		}
		// One band of 4 rows vs two bands of 2 rows on the same 4 values:
		// miss both = 1 - P(some 2-band all equal), since a 4-band all
		// equal implies both 2-bands are.
		got := missBoth(s, Params{1, 4}, Params{2, 2})
		want := missProbability(s, Params{2, 2})
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("missBoth(%v, 1x4, 2x2) = %v, want %v", s, got, want)
		}
	}
}

// mahalanobis returns dev' cov^-1 dev for a symmetric positive definite
// m x m matrix cov (row-major), by a Cholesky decomposition.
func mahalanobis(cov, dev []float64) float64 {
	m := len(dev)
	l := make([]float64, m*m)
	for i := range m {
		for j := 0; j <= i; j++ {
			sum := cov[i*m+j]
			for k := range j {
				sum -= l[i*m+k] * l[j*m+k]
			}
			if i == j {
				l[i*m+i] = math.Sqrt(sum)
			} else {
				l[i*m+j] = sum / l[j*m+j]
			}
		}
	}
	// Solve l y = dev; the distance is |y|^2.
	y := make([]float64, m)
	d2 := 0.0
	for i := range m {
		sum := dev[i]
		for k := range i {
			sum -= l[i*m+k] * y[k]
		}
		y[i] = sum / l[i*m+i]
		d2 += y[i] * y[i]
	}
	return d2
}

// binomialTwoSided returns the two-sided p-value of h successes in n
// trials of probability p: twice the smaller tail, at most 1.
func binomialTwoSided(n int, p float64, h int) float64 {
	if p <= 0 {
		return b2f(h == 0)
	}
	if p >= 1 {
		return b2f(h == n)
	}
	le, ge := 0.0, 0.0
	lp, lq := math.Log(p), math.Log1p(-p)
	lgn, _ := math.Lgamma(float64(n + 1))
	for x := range n + 1 {
		lgx, _ := math.Lgamma(float64(x + 1))
		lgy, _ := math.Lgamma(float64(n - x + 1))
		pmf := math.Exp(lgn - lgx - lgy + float64(x)*lp + float64(n-x)*lq)
		if x <= h {
			le += pmf
		}
		if x >= h {
			ge += pmf
		}
	}
	return min(1, 2*min(le, ge))
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// chiSquareZ returns the Wilson-Hilferty normal deviate of a chi-square
// statistic x with k degrees of freedom: about N(0, 1) under the null.
func chiSquareZ(x float64, k int) float64 {
	kf := float64(k)
	return (math.Cbrt(x/kf) - (1 - 2/(9*kf))) / math.Sqrt(2/(9*kf))
}
