package pipeline

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/neardup/neardup/pkg/bands"
)

// WritePlanReport prints the banding plan of resolved params: b and r, the
// S-curve's approximate threshold and steepest point, and the probability
// that a pair of each similarity becomes a candidate.
func WritePlanReport(w io.Writer, p Params) error {
	bp := p.BandParams()
	t := p.Threshold
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "threshold\t%.3g\n", t)
	fmt.Fprintf(tw, "signature values (K)\t%d\n", p.K)
	fmt.Fprintf(tw, "bands (b)\t%d\n", bp.Bands)
	fmt.Fprintf(tw, "rows per band (r)\t%d\n", bp.Rows)
	fmt.Fprintf(tw, "weights (fp, fn)\t%.3g, %.3g\n", p.FPWeight, p.FNWeight)
	fmt.Fprintf(tw, "approximate threshold (1/b)^(1/r)\t%.4f\n", bands.ApproxThreshold(bp))
	fmt.Fprintf(tw, "steepest point ((r-1)/(br-1))^(1/r)\t%.4f\n", bands.Steepest(bp))
	fmt.Fprintf(tw, "P(candidate) at threshold\t%.4f  (missed: %.4f)\n", bands.Probability(t, bp), 1-bands.Probability(t, bp))
	t5 := min(t+0.05, 1)
	fmt.Fprintf(tw, "P(candidate) at threshold+0.05\t%.4f  (missed: %.4f)\n", bands.Probability(t5, bp), 1-bands.Probability(t5, bp))
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "similarity\tP(candidate)")
	for i := 1; i <= 10; i++ {
		s := float64(i) / 10
		fmt.Fprintf(tw, "%.1f\t%.4f\n", s, bands.Probability(s, bp))
	}
	return tw.Flush()
}
