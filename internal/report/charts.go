package report

import (
	"fmt"
	"math"
	"strconv"

	"github.com/neardup/neardup/internal/manifest"
)

// series is one data series of a histogram.
type series struct {
	name   string // data-series attribute and CSS class
	label  string // legend text
	colour string
	values []int64
}

// histogram describes a histogram chart of len(values) bins; several
// series are stacked in each bin, in order from the bottom.
type histogram struct {
	id, title      string
	xTitle, yTitle string
	series         []series
	// ticks are x positions in bin units (0 is the left edge of the first
	// bin, n the right edge of the last).
	ticks []tick
	// binName names bin i in the bars' tooltips.
	binName func(i int) string
	// marker, when set, is a vertical line at a position in bin units.
	marker      *float64
	markerLabel string
	emptyNote   string // shown when there is no count
	// valueLabels writes each non-zero count on its bar (for one series).
	valueLabels bool
}

// svg draws the histogram. Every bin of every series is a rect of class
// "bar" with its count in data-value, a zero count as a rect of height 0,
// so the chart has one bar per number in the data. A bar of a non-zero
// count is at least minBar high, so that a single giant cluster shows.
func (h histogram) svg() []byte {
	const minBar = 2.0
	var d svgDoc
	p := defaultPlot()
	if len(h.series) > 1 {
		p.top += 26 // room for the legend row and the marker's label
	}
	d.open(h.id, chartWidth, chartHeight, h.title)
	n := 0
	for _, s := range h.series {
		n = max(n, len(s.values))
	}
	value := func(s series, i int) int64 {
		if i < len(s.values) {
			return s.values[i]
		}
		return 0
	}
	var most int64
	for i := range n {
		var sum int64
		for _, s := range h.series {
			sum += value(s, i)
		}
		most = max(most, sum)
	}
	top, step := niceScale(float64(most), 1)
	d.yAxis(p, 0, top, scaleTicks(top, step, countLabel), h.yTitle)
	hi := float64(max(n, 1))
	d.xAxis(p, 0, hi, h.ticks, h.xTitle)

	d.printf(`<g class="bars">` + "\n")
	bw := (p.right - p.left) / hi
	gap := math.Min(2, bw/5)
	for i := range n {
		y := p.bottom // top of the bars below
		for _, s := range h.series {
			v := value(s, i)
			bh := p.bottom - p.y(float64(v), 0, top)
			if v > 0 {
				bh = math.Max(bh, minBar)
			}
			d.printf(`<rect class="bar %s" data-series="%s" data-bin="%d" data-value="%d" x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s: %s %s</title></rect>`+"\n",
				s.name, s.name, i, v, num(p.left+float64(i)*bw+gap/2), num(y-bh), num(bw-gap), num(bh), s.colour,
				esc(h.binName(i)), groupDigits(v), esc(s.label))
			y -= bh
			if h.valueLabels && v > 0 {
				h.valueLabel(&d, p.left+(float64(i)+0.5)*bw, y, bh, groupDigits(v))
			}
		}
	}
	d.printf("</g>\n")
	if n == 0 || most == 0 {
		d.text((p.left+p.right)/2, (p.top+p.bottom)/2, "middle", h.emptyNote, fmt.Sprintf(` class="empty-note" fill="%s"`, colourMuted))
	}
	if h.marker != nil {
		x := p.x(*h.marker, 0, hi)
		d.line(x, p.top, x, p.bottom, colourMarker, ` class="threshold" stroke-width="1.5" stroke-dasharray="5 4"`)
		lx := math.Min(math.Max(x, p.left+40), p.right-40)
		d.text(lx, p.top-6, "middle", h.markerLabel, fmt.Sprintf(` class="threshold-label" fill="%s"`+halo, colourMarker))
	}
	if len(h.series) > 1 {
		// One row under the title: swatch and label, side by side.
		d.printf(`<g class="legend">` + "\n")
		x := p.left - 40
		for _, s := range h.series {
			d.printf(`<rect x="%s" y="31" width="14" height="12" fill="%s"/>`+"\n", num(x), s.colour)
			d.text(x+19, 41.5, "start", s.label, ` class="legend-label"`)
			x += 19 + textWidth(s.label, 12) + 18
		}
		d.printf("</g>\n")
	}
	return d.close()
}

// valueLabel writes a count vertically at the top of its bar: inside the
// bar when it fits, else above it.
func (h histogram) valueLabel(d *svgDoc, x, top, height float64, label string) {
	const size = 10.0
	w := textWidth(label, size)
	y, anchor, fill := top-4, "start", colourAxis
	if height > w+8 {
		y, anchor, fill = top+4, "end", "#ffffff"
	}
	d.printf(`<text class="value" x="%s" y="%s" text-anchor="%s" font-size="10" fill="%s" transform="rotate(-90 %s %s)" dy="3.5">%s</text>`+"\n",
		num(x), num(y), anchor, fill, num(x), num(y), esc(label))
}

// similarityChart draws the histograms of the similarity of verified pairs
// and of candidate pairs below the threshold, stacked, over [0, 1].
func similarityChart(verified, rejected []int64, threshold float64) []byte {
	n := max(len(verified), len(rejected))
	edge := func(i int) string { return roundedText(float64(i) / float64(max(n, 1))) }
	var ticks []tick
	for _, t := range tenths() {
		ticks = append(ticks, tick{value: t.value * float64(n), label: t.label})
	}
	h := histogram{
		id: "similarity", title: "Similarity of the candidate pairs checked",
		xTitle: "similarity (bins of " + edge(1) + ")", yTitle: "pairs",
		series: []series{
			{name: "verified", label: "verified (similarity ≥ threshold)", colour: colour(0), values: verified},
			{name: "rejected", label: "rejected (below the threshold)", colour: colour(1), values: rejected},
		},
		ticks: ticks,
		binName: func(i int) string {
			return fmt.Sprintf("similarity %s–%s", edge(i), edge(i+1))
		},
		emptyNote: "no candidate pairs were checked",
	}
	if threshold >= 0 && threshold <= 1 && n > 0 {
		m := threshold * float64(n)
		h.marker, h.markerLabel = &m, "threshold "+strconv.FormatFloat(threshold, 'f', -1, 64)
	}
	return h.svg()
}

// clusterChart draws the histogram of cluster sizes: bin i holds clusters
// of i+2 documents, the last bin that size and larger.
func clusterChart(hist []int64) []byte {
	n := len(hist)
	size := func(i int) string {
		s := strconv.Itoa(i + 2)
		if i == n-1 {
			s += "+"
		}
		return s
	}
	// Label every bin when there is room, else every second, third...
	bw := (chartWidth - marginLeft - marginRight) / float64(max(n, 1))
	every := max(1, int(math.Ceil(26/bw)))
	var ticks []tick
	for i := range n {
		label := ""
		if i%every == 0 || i == n-1 && every == 1 {
			label = size(i)
		}
		ticks = append(ticks, tick{value: float64(i) + 0.5, label: label})
	}
	h := histogram{
		id: "clusters", title: "Cluster sizes",
		xTitle: "documents in the cluster", yTitle: "clusters",
		series:      []series{{name: "clusters", label: "clusters", colour: colour(2), values: hist}},
		valueLabels: true,
		ticks:       ticks,
		binName: func(i int) string {
			if i == n-1 {
				return size(i) + " documents (and larger)"
			}
			return size(i) + " documents"
		},
		emptyNote: "no clusters",
	}
	return h.svg()
}

// stageChart draws the stage timings as horizontal bars, one per stage, in
// the order given. Each bar is a rect of class "bar" with the seconds in
// data-value.
func stageChart(stages []manifest.StageTiming) []byte {
	const (
		rowH     = 30.0
		barH     = 18.0
		nameW    = 84.0
		valueW   = 150.0
		topSpace = 40.0
		botSpace = 52.0
	)
	height := topSpace + rowH*float64(max(len(stages), 1)) + botSpace
	var d svgDoc
	d.open("stages", chartWidth, height, "Stage timings")
	p := plot{left: nameW, right: chartWidth - valueW, top: topSpace, bottom: height - botSpace}
	most := 0.0
	for _, s := range stages {
		most = math.Max(most, s.Seconds)
	}
	top, step := niceScale(most, 0)
	d.xAxis(p, 0, top, scaleTicks(top, step, secondsLabel), "seconds")
	d.line(p.left, p.top, p.left, p.bottom, colourAxis, "")
	d.printf(`<g class="bars">` + "\n")
	for i, s := range stages {
		y := p.top + rowH*float64(i) + (rowH-barH)/2
		w := p.x(math.Max(s.Seconds, 0), 0, top) - p.left
		tasks := plural(int64(s.Tasks), "task", "tasks")
		if s.Failed > 0 {
			tasks += fmt.Sprintf(", %d failed", s.Failed)
		}
		d.text(p.left-8, y+barH/2+4, "end", s.Name, ` class="stage-name"`)
		d.printf(`<rect class="bar stage" data-stage="%s" data-value="%s" x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s: %s s, %s</title></rect>`+"\n",
			esc(s.Name), strconv.FormatFloat(s.Seconds, 'f', -1, 64), num(p.left), num(y), num(w), num(barH), colour(5),
			esc(s.Name), secondsText(s.Seconds), esc(tasks))
		d.text(p.left+w+6, y+barH/2+4, "start", secondsText(s.Seconds)+" s · "+tasks, fmt.Sprintf(` font-size="11" fill="%s"`, colourMuted))
	}
	d.printf("</g>\n")
	if len(stages) == 0 {
		d.text((p.left+p.right)/2, (p.top+p.bottom)/2+4, "middle", "no stage ran", fmt.Sprintf(` class="empty-note" fill="%s"`, colourMuted))
	}
	return d.close()
}
