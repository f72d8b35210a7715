package bands

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Areas returns the false-positive area FP = integral over [0,t] of
// Probability(s, p) ds and the false-negative area FN = integral over
// [t,1] of 1-Probability(s, p) ds, by adaptive Simpson integration
// (absolute error below 1e-10).
func Areas(t float64, p Params) (fp, fn float64) {
	fp = integrate(func(s float64) float64 { return Probability(s, p) }, 0, t)
	fn = integrate(func(s float64) float64 { return missProbability(s, p) }, t, 1)
	return fp, fn
}

// Optimal returns the b, r with b*r <= k minimising
// fpWeight*FP + fnWeight*FN (see [Areas]) for the similarity threshold t,
// the method of the datasketch library. Ties go to the smaller b, then
// the smaller r. It returns an error wrapping ErrInvalid unless
// 0 < threshold < 1, k >= 1, and the weights are finite, non-negative and
// not both zero.
func Optimal(threshold float64, k int, fpWeight, fnWeight float64) (Params, error) {
	switch {
	case !(threshold > 0 && threshold < 1):
		return Params{}, fmt.Errorf("bands: threshold %v not in (0, 1): %w", threshold, ErrInvalid)
	case k < 1:
		return Params{}, fmt.Errorf("bands: k = %d: %w", k, ErrInvalid)
	case !(fpWeight >= 0 && fnWeight >= 0) || math.IsInf(fpWeight, 0) || math.IsInf(fnWeight, 0) || fpWeight+fnWeight == 0:
		return Params{}, fmt.Errorf("bands: weights fp %v fn %v: %w", fpWeight, fnWeight, ErrInvalid)
	}
	// Every (b, r), b then r ascending. A pair's cost has a lower bound
	// of 16 evaluations of the S-curve (lowerCost); only the pairs whose
	// bound comes within costMargin of the least cost integrated so far
	// are integrated, least bound first: at K = 128 and threshold 0.8,
	// 32 of 645 (BenchmarkOptimal: about 1 ms, where integrating them
	// all took 14 ms of CPU, 7 on two cores, before a job could start).
	// A pair passed over costs more than the pair chosen by more than any
	// integration error, so the choice is the one integrating every pair
	// would make (TestOptimalBounded).
	var pairs []Params
	for b := 1; b <= k; b++ {
		for r := 1; b*r <= k; r++ {
			pairs = append(pairs, Params{b, r})
		}
	}
	cost := func(p Params) float64 {
		fp, fn := Areas(threshold, p)
		return fpWeight*fp + fnWeight*fn
	}
	bounds := make([]float64, len(pairs))
	order := make([]int, len(pairs))
	for i, p := range pairs {
		bounds[i], order[i] = lowerCost(threshold, p, fpWeight, fnWeight), i
	}
	slices.SortFunc(order, func(x, y int) int { return cmp.Or(cmp.Compare(bounds[x], bounds[y]), cmp.Compare(x, y)) })
	margin := costMargin * (fpWeight + fnWeight)
	costs := make([]float64, len(pairs)) // +Inf: passed over
	for i := range costs {
		costs[i] = math.Inf(1)
	}
	least := math.Inf(1)
	for _, i := range order {
		if bounds[i] > least+margin {
			break
		}
		costs[i] = cost(pairs[i])
		least = min(least, costs[i])
	}
	return firstLeast(pairs, costs), nil
}

// costMargin, times the sum of the weights, is how far above the least
// cost integrated a pair's lower bound must be for Optimal to pass it
// over: far above the integration's error (below 1e-10 an area, see
// Areas).
const costMargin = 1e-6

// lowerCost is a lower bound of fpWeight*FP + fnWeight*FN for p at
// threshold t: Probability rises with s, so the area under it over [0, t]
// is at least that of the steps at the left ends of 8 equal parts, and
// the area under 1-Probability over [t, 1] at least that of the steps at
// their right ends.
func lowerCost(t float64, p Params, fpWeight, fnWeight float64) float64 {
	const steps = 8
	var fp, fn float64
	h, g := t/steps, (1-t)/steps
	for i := range steps {
		fp += Probability(float64(i)*h, p)
		fn += missProbability(min(t+float64(i+1)*g, 1), p)
	}
	return fpWeight*fp*h + fnWeight*fn*g
}

// firstLeast returns the pair of least cost, the first in pairs' order of
// those that tie.
func firstLeast(pairs []Params, costs []float64) Params {
	best := Params{}
	bestErr := math.Inf(1)
	for i, e := range costs {
		if e < bestErr {
			best, bestErr = pairs[i], e
		}
	}
	return best
}

// integrate is adaptive Simpson quadrature of f over [a, b].
func integrate(f func(float64) float64, a, b float64) float64 {
	if b <= a {
		return 0
	}
	// Start from 16 panels so that steep S-curves are not missed.
	const panels = 16
	h := (b - a) / panels
	total := 0.0
	for i := range panels {
		x0, x1 := a+float64(i)*h, a+float64(i+1)*h
		m := (x0 + x1) / 2
		f0, fm, f1 := f(x0), f(m), f(x1)
		total += simpson(f, x0, x1, f0, fm, f1, (x1-x0)/6*(f0+4*fm+f1), 1e-11, 40)
	}
	return total
}

func simpson(f func(float64) float64, a, b, fa, fm, fb, whole, eps float64, depth int) float64 {
	m := (a + b) / 2
	lm, rm := (a+m)/2, (m+b)/2
	flm, frm := f(lm), f(rm)
	left := (m - a) / 6 * (fa + 4*flm + fm)
	right := (b - m) / 6 * (fm + 4*frm + fb)
	delta := left + right - whole
	if depth <= 0 || math.Abs(delta) <= 15*eps {
		return left + right + delta/15
	}
	return simpson(f, a, m, fa, flm, fm, left, eps/2, depth-1) +
		simpson(f, m, b, fm, frm, fb, right, eps/2, depth-1)
}
