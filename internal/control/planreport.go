package control

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/pkg/bands"
	"github.com/neardup/neardup/pkg/simhash"
)

// WritePlanReport prints the banding plan of resolved params: b and r, the
// S-curve's approximate threshold and steepest point, and the probability
// that a pair of each similarity becomes a candidate. For SimHash it
// prints the plan of [writeSimHashPlan] instead.
func WritePlanReport(w io.Writer, p job.Params) error {
	if p.Method == job.MethodSimHash {
		return writeSimHashPlan(w, p)
	}
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

// writeSimHashPlan prints the SimHash plan of resolved params: the
// distance k and its blocks, and under the random-hyperplane model for
// sets of equal size (package simhash) the bit-flip probability, the
// expected distance and the probabilities that a pair becomes a candidate
// (shares a block) and is found (is within distance k), at the threshold,
// at threshold+0.05 and for similarities 0.5 to 1, and the warning the job
// would give when the threshold lies where under half of the pairs are
// found.
func writeSimHashPlan(w io.Writer, p job.Params) error {
	b, err := simhash.NewBlocks(p.Hamming)
	if err != nil {
		return fmt.Errorf("simhash plan: %w", err)
	}
	widths := make([]string, b.N())
	for i := range widths {
		widths[i] = strconv.Itoa(b.Width(i))
	}
	t, k := p.Threshold, p.Hamming
	t5 := min(t+0.05, 1)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "method\tsimhash (64-bit fingerprints)\n")
	fmt.Fprintf(tw, "threshold\t%.3g\n", t)
	fmt.Fprintf(tw, "Hamming distance (k)\t%d\n", k)
	fmt.Fprintf(tw, "blocks (k+1)\t%d\n", b.N())
	fmt.Fprintf(tw, "block widths (bits)\t%s\n", strings.Join(widths, " "))
	fmt.Fprintf(tw, "bit-flip probability q at threshold\t%.4f\n", simhash.FlipProbability(t))
	fmt.Fprintf(tw, "expected distance 64q at threshold\t%.2f\n", simhash.ExpectedDistance(t))
	for _, s := range []struct {
		name string
		j    float64
	}{{"threshold", t}, {"threshold+0.05", t5}} {
		fmt.Fprintf(tw, "P(candidate) at %s\t%.4f\n", s.name, simhash.CandidateProbability(s.j, b))
		f := simhash.FoundProbability(s.j, k)
		fmt.Fprintf(tw, "P(found) at %s\t%.4f  (missed: %.4f)\n", s.name, f, 1-f)
	}
	fmt.Fprintf(tw, "P(candidate) of unrelated documents\t%.2g\n", simhash.CandidateProbability(0, b))
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "similarity\tq\tE[distance]\tP(candidate)\tP(found)")
	for i := 10; i <= 20; i++ {
		j := float64(i) / 20
		fmt.Fprintf(tw, "%.2f\t%.4f\t%.2f\t%.4f\t%.4f\n", j, simhash.FlipProbability(j), simhash.ExpectedDistance(j),
			simhash.CandidateProbability(j, b), simhash.FoundProbability(j, k))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Model: two sets of equal size at Jaccard J; cos(theta) = 2J/(1+J); each bit differs with")
	fmt.Fprintln(w, "probability q = theta/pi, so the distance is Binomial(64, q). A pair is a candidate when")
	fmt.Fprintln(w, "some block has no differing bit, and is found when its distance is at most k.")
	if msg := simhashRecallWarning(p); msg != "" {
		fmt.Fprintln(w)
		_, err = fmt.Fprintln(w, "warning:", msg)
	}
	return err
}
