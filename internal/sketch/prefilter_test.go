package sketch

import (
	"math"
	"testing"

	"github.com/neardup/neardup/pkg/shingle"
)

// binomCDF is P(X < c) for X ~ Binomial(k, t), by direct summation of
// exact binomial coefficients (an independent reference).
func binomCDF(c, k int, t float64) float64 {
	var sum float64
	coef := 1.0 // C(k, i)
	for i := 0; i < c; i++ {
		sum += coef * math.Pow(t, float64(i)) * math.Pow(1-t, float64(k-i))
		coef = coef * float64(k-i) / float64(i+1)
	}
	return sum
}

func TestPrefilterMatches(t *testing.T) {
	if c := prefilterMatches(1, 128, prefilterRisk); c != 128 {
		t.Errorf("t=1: reject below %d matches, want 128 (only identical signatures)", c)
	}
	tests := []struct {
		t float64
		k int
	}{{0.8, 128}, {0.5, 128}, {0.9, 128}, {0.8, 64}, {0.3, 256}, {0.95, 16}}
	for _, tt := range tests {
		c := prefilterMatches(tt.t, tt.k, prefilterRisk)
		// c is the largest count whose lower tail stays within the risk.
		if p := binomCDF(c, tt.k, tt.t); p > prefilterRisk {
			t.Errorf("t=%v k=%d: c=%d rejects a pair at the threshold with probability %g > %g", tt.t, tt.k, c, p, prefilterRisk)
		}
		if p := binomCDF(c+1, tt.k, tt.t); p <= prefilterRisk {
			t.Errorf("t=%v k=%d: c=%d is not the largest: c+1 rejects with probability %g only", tt.t, tt.k, c, p)
		}
		mean := tt.t * float64(tt.k)
		sd := math.Sqrt(float64(tt.k) * tt.t * (1 - tt.t))
		t.Logf("t=%v k=%d: reject below %d matches (estimate < %.3f; mean %.1f, %.1f SE below)", tt.t, tt.k, c, float64(c)/float64(tt.k), mean, (mean-float64(c))/sd)
	}
}

// TestSizesAllow checks the size filter against shingle.Jaccard: every
// pair of sets it rejects has a similarity below the threshold, and it
// rejects exactly the size ratios below the threshold.
func TestSizesAllow(t *testing.T) {
	tests := []struct {
		na, nb int
		t      float64
		want   bool
	}{
		{0, 0, 0.8, true},
		{0, 5, 0.8, false},
		{0, 5, 0, true},
		{4, 5, 0.8, true},  // 0.8 exactly: may be at the threshold
		{3, 4, 0.8, false}, // 0.75
		{5, 4, 0.8, true},
		{4, 3, 0.8, false},
		{50, 100, 0.5, true},
		{49, 100, 0.5, false},
		{1, 1, 1, true},
		{99, 100, 1, false},
	}
	for _, tt := range tests {
		if got := sizesAllow(tt.na, tt.nb, tt.t); got != tt.want {
			t.Errorf("sizesAllow(%d, %d, %v) = %v, want %v", tt.na, tt.nb, tt.t, got, tt.want)
		}
	}
	// The largest similarity two sets of sizes na <= nb can have is that of
	// a ⊆ b: no rejected pair of sizes reaches the threshold.
	for _, th := range []float64{0.3, 0.5, 0.7, 0.8, 0.9, 0.95} {
		for nb := 1; nb <= 400; nb++ {
			for na := 0; na <= nb; na++ {
				a, b := make([]uint64, na), make([]uint64, nb)
				for i := range b {
					b[i] = uint64(i)
				}
				copy(a, b)
				if j := shingle.Jaccard(a, b); !sizesAllow(na, nb, th) && j >= th {
					t.Fatalf("threshold %v: sets of %d and %d rejected, but a subset reaches %v", th, na, nb, j)
				}
			}
		}
	}
}
