package report

import (
	"fmt"
	"strconv"

	"github.com/neardup/neardup/pkg/bands"
)

// curveSteps is the number of segments of each S-curve path: s advances by
// 1/200, so the path has a vertex at every multiple of 0.005.
const curveSteps = 200

// SCurveSVG draws the LSH S-curves P(candidate) = 1-(1-s^r)^b over the
// similarity s in [0, 1], one line per banding in curves, each labelled
// like "b=16 r=8" in a legend with its probability at the threshold. A
// dashed vertical line marks the threshold (skipped unless it lies in
// [0, 1]). Both axes have ticks at 0, 0.1, ..., 1.0. The result is a
// standalone SVG document (its root element has id "scurve" and a view
// box) that can also be inlined in HTML; it references nothing outside
// itself, and equal arguments give equal bytes.
func SCurveSVG(curves []bands.Params, threshold float64, title string) []byte {
	var d svgDoc
	p := defaultPlot()
	d.open("scurve", chartWidth, chartHeight, title)
	d.xAxis(p, 0, 1, tenths(), "Jaccard similarity s")
	d.yAxis(p, 0, 1, tenths(), "P(candidate pair)")
	hasT := threshold >= 0 && threshold <= 1

	if hasT {
		x := p.x(threshold, 0, 1)
		d.line(x, p.top, x, p.bottom, colourMarker, ` class="threshold" stroke-width="1.5" stroke-dasharray="5 4"`)
		// Below the curve's right part, which is near 1 past the
		// threshold.
		anchor, dx := "start", 5.0
		if threshold > 0.8 {
			anchor, dx = "end", -5
		}
		d.text(x+dx, p.bottom-8, anchor, "threshold "+strconv.FormatFloat(threshold, 'f', -1, 64), fmt.Sprintf(` class="threshold-label" fill="%s"`+halo, colourMarker))
	}

	var entries []legendEntry
	for i, c := range curves {
		col := colour(i)
		label := fmt.Sprintf("b=%d r=%d", c.Bands, c.Rows)
		if c.Validate() != nil {
			entries = append(entries, legendEntry{colour: col, label: label, note: "(invalid)", line: true})
			continue
		}
		d.printf(`<path class="curve" data-bands="%d" data-rows="%d" fill="none" stroke="%s" stroke-width="2.5" stroke-linejoin="round" d="`, c.Bands, c.Rows, col)
		for j := 0; j <= curveSteps; j++ {
			s := float64(j) / curveSteps
			cmd := " L"
			if j == 0 {
				cmd = "M"
			}
			d.printf("%s%s %s", cmd, num(p.x(s, 0, 1)), num(p.y(bands.Probability(s, c), 0, 1)))
		}
		d.printf(`"><title>%s</title></path>`+"\n", esc(label))
		note := ""
		if hasT {
			pt := bands.Probability(threshold, c)
			note = "P(t) = " + probLabel(pt)
			d.printf(`<circle class="at-threshold" cx="%s" cy="%s" r="4" fill="%s" stroke="#ffffff" stroke-width="1.5"><title>%s: P(%s) = %s</title></circle>`+"\n",
				num(p.x(threshold, 0, 1)), num(p.y(pt, 0, 1)), col, esc(label), strconv.FormatFloat(threshold, 'f', -1, 64), probLabel(pt))
		}
		entries = append(entries, legendEntry{colour: col, label: label, note: note, line: true})
	}
	if len(entries) > 0 {
		// The top-left corner is empty unless a curve rises early; then
		// the bottom-right one is.
		x, y := p.left+10, p.top+22
		for _, c := range curves {
			if c.Validate() == nil && bands.Probability(0.45, c) > 0.5 {
				x, y = p.right-250, p.bottom-10-20*float64(len(entries))-8
				break
			}
		}
		d.legend(x, y, entries)
	}
	return d.close()
}

// probLabel formats a probability with three decimals, or with as many as
// it takes (up to seven) to tell it from 1 (0.9996) or 0 (0.0004).
func probLabel(v float64) string {
	s := ""
	for prec := 3; prec <= 7; prec++ {
		s = strconv.FormatFloat(v, 'f', prec, 64)
		r, _ := strconv.ParseFloat(s, 64)
		if (r != 1 || v == 1) && (r != 0 || v == 0) {
			break
		}
	}
	return s
}
