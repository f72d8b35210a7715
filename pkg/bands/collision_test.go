package bands

import (
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

// TestBandCollisionRate checks that the empirical rate at which two sets
// share a band key is within 3 standard errors, sqrt(p(1-p)/trials), of
// p = 1-(1-J^r)^b, for Classic at every size and for OPH on sets of at
// least 2K shingles. For OPH on smaller sets, densification copies values
// between bins, bins are no longer nearly independent, and the rate is only
// logged.
func TestBandCollisionRate(t *testing.T) {
	const k = 128
	trials := 400
	if testing.Short() {
		trials = 100
	}
	params := []Params{{32, 4}, {20, 5}, {16, 8}}
	sizes := []int{10, 50, 500, 2000}
	js := []float64{0.4, 0.55, 0.7, 0.85}
	for _, kind := range []string{"OPH", "Classic"} {
		for ci, n := range sizes {
			for cj, jt := range js {
				r := rand.New(rand.NewPCG(uint64(100+ci), uint64(cj)))
				hits := make([]int, len(params))
				var exact float64
				var sa, sb minhash.Signature
				var ka, kb []uint64
				for tr := range trials {
					var a, b []uint64
					a, b, exact = pairWithJaccard(r, n, jt)
					seed := uint64(tr)*104729 + uint64(ci*16+cj)
					var sk minhash.Sketcher
					if kind == "OPH" {
						sk, _ = minhash.NewOPH(k, seed)
					} else {
						sk, _ = minhash.NewClassic(k, seed)
					}
					sa, sb = sk.Sketch(sa, a), sk.Sketch(sb, b)
					for pi, p := range params {
						ka, kb = Keys(ka[:0], sa, p), Keys(kb[:0], sb, p)
						if shareKey(ka, kb) {
							hits[pi]++
						}
					}
				}
				for pi, p := range params {
					want := Probability(exact, p)
					rate := float64(hits[pi]) / float64(trials)
					se := math.Sqrt(want * (1 - want) / float64(trials))
					z := (rate - want) / se
					asserted := kind == "Classic" || n >= 2*k
					t.Logf("%-7s n=%4d J=%.3f %-9v P=%.3f rate=%.3f z=%+.2f asserted=%v", kind, n, exact, p, want, rate, z, asserted)
					if asserted && math.Abs(rate-want) > 3*se {
						t.Errorf("%s n=%d J=%.3f %v: collision rate %.3f, want %.3f ± 3*%.3f", kind, n, exact, p, rate, want, se)
					}
				}
			}
		}
	}
}
