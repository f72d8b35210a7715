package stage

import (
	"math"
	"testing"
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
