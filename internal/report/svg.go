package report

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"strconv"
)

// Chart geometry, in view-box units (pixels at scale 1).
const (
	chartWidth  = 560.0
	chartHeight = 340.0
	marginLeft  = 64.0
	marginRight = 18.0
	marginTop   = 40.0
	marginBot   = 52.0
)

// colour returns the i-th colour of the Okabe-Ito palette, which stays
// distinguishable with colour-blindness (cycling after seven).
func colour(i int) string {
	p := [...]string{"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000"}
	return p[i%len(p)]
}

const (
	colourAxis   = "#333333"
	colourGrid   = "#e4e4e4"
	colourMuted  = "#666666"
	colourMarker = "#b3261e"
)

// halo are the attributes of a white outline that keeps a label
// readable over lines.
const halo = ` stroke="#ffffff" stroke-width="3" stroke-linejoin="round" paint-order="stroke"`

// svgDoc builds one SVG document. Every number goes through num, so the
// output depends only on the input.
type svgDoc struct {
	b bytes.Buffer
}

// num formats a coordinate with two decimals.
func num(x float64) string {
	s := strconv.FormatFloat(x, 'f', 2, 64)
	if s == "-0.00" {
		return "0.00"
	}
	return s
}

// esc escapes text for XML character data and attribute values.
func esc(s string) string { return html.EscapeString(s) }

func (d *svgDoc) printf(format string, args ...any) { fmt.Fprintf(&d.b, format, args...) }

// open starts the document: root element with id and view box, and the
// chart's accessible title.
func (d *svgDoc) open(id string, w, h float64, title string) {
	d.printf(`<svg xmlns="http://www.w3.org/2000/svg" id="%s" class="chart" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="%s" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12" fill="%s">`+"\n",
		esc(id), num(w), num(h), num(w), num(h), esc(title), colourAxis)
	d.printf("<title>%s</title>\n", esc(title))
	d.printf(`<rect x="0" y="0" width="%s" height="%s" fill="#ffffff"/>`+"\n", num(w), num(h))
	d.printf(`<text class="title" x="%s" y="22" font-size="14" font-weight="bold">%s</text>`+"\n", num(marginLeft-40), esc(title))
}

func (d *svgDoc) close() []byte {
	d.printf("</svg>\n")
	return d.b.Bytes()
}

// line draws a line segment; extra holds further attributes.
func (d *svgDoc) line(x1, y1, x2, y2 float64, stroke string, extra string) {
	d.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"%s/>`+"\n", num(x1), num(y1), num(x2), num(y2), stroke, extra)
}

// text draws a label; anchor is start, middle or end; extra holds further
// attributes.
func (d *svgDoc) text(x, y float64, anchor, s, extra string) {
	d.printf(`<text x="%s" y="%s" text-anchor="%s"%s>%s</text>`+"\n", num(x), num(y), anchor, extra, esc(s))
}

// plot is the rectangle of a chart's data area.
type plot struct {
	left, right, top, bottom float64
}

func defaultPlot() plot {
	return plot{left: marginLeft, right: chartWidth - marginRight, top: marginTop, bottom: chartHeight - marginBot}
}

// x maps v in [lo, hi] to the plot's horizontal extent.
func (p plot) x(v, lo, hi float64) float64 { return p.left + (v-lo)/(hi-lo)*(p.right-p.left) }

// y maps v in [lo, hi] to the plot's vertical extent (lo at the bottom).
func (p plot) y(v, lo, hi float64) float64 { return p.bottom - (v-lo)/(hi-lo)*(p.bottom-p.top) }

// tick is an axis tick: its value in data units and its label.
type tick struct {
	value float64
	label string
}

// xAxis draws the horizontal axis with vertical grid lines at the ticks
// (positions in data units of [lo, hi]) and the axis title.
func (d *svgDoc) xAxis(p plot, lo, hi float64, ticks []tick, title string) {
	d.printf(`<g class="axis x-axis">` + "\n")
	for _, t := range ticks {
		x := p.x(t.value, lo, hi)
		d.line(x, p.top, x, p.bottom, colourGrid, "")
		d.line(x, p.bottom, x, p.bottom+5, colourAxis, fmt.Sprintf(` class="tick-x" data-value="%s"`, strconv.FormatFloat(t.value, 'g', -1, 64)))
		if t.label != "" {
			d.text(x, p.bottom+18, "middle", t.label, "")
		}
	}
	d.line(p.left, p.bottom, p.right, p.bottom, colourAxis, "")
	d.text((p.left+p.right)/2, p.bottom+40, "middle", title, ` class="axis-title"`)
	d.printf("</g>\n")
}

// yAxis draws the vertical axis with horizontal grid lines at the ticks
// and the axis title, rotated.
func (d *svgDoc) yAxis(p plot, lo, hi float64, ticks []tick, title string) {
	d.printf(`<g class="axis y-axis">` + "\n")
	for _, t := range ticks {
		y := p.y(t.value, lo, hi)
		d.line(p.left, y, p.right, y, colourGrid, "")
		d.line(p.left-5, y, p.left, y, colourAxis, fmt.Sprintf(` class="tick-y" data-value="%s"`, strconv.FormatFloat(t.value, 'g', -1, 64)))
		d.text(p.left-8, y+4, "end", t.label, "")
	}
	d.line(p.left, p.top, p.left, p.bottom, colourAxis, "")
	cy := (p.top + p.bottom) / 2
	d.printf(`<text class="axis-title" x="16" y="%s" text-anchor="middle" transform="rotate(-90 16 %s)">%s</text>`+"\n", num(cy), num(cy), esc(title))
	d.printf("</g>\n")
}

// tenths returns the ticks 0, 0.1, ..., 1.0.
func tenths() []tick {
	ts := make([]tick, 11)
	for i := range ts {
		v := float64(i) / 10
		ts[i] = tick{value: v, label: strconv.FormatFloat(v, 'f', 1, 64)}
	}
	return ts
}

// niceScale returns an axis maximum and step for values up to max: the
// step is 1, 2 or 5 times a power of ten giving at most about five
// intervals, at least minStep; the maximum is a multiple of the step.
func niceScale(max, minStep float64) (top, step float64) {
	if !(max > 0) {
		return math.Max(minStep, 1), math.Max(minStep, 1)
	}
	raw := max / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step = 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	step = math.Max(step, minStep)
	top = math.Ceil(max/step-1e-9) * step
	return top, step
}

// scaleTicks returns the ticks 0, step, ..., top. Their values are rounded
// to the step's decimals, and labelled by format.
func scaleTicks(top, step float64, format func(float64) string) []tick {
	dec := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	var ts []tick
	for i := 0; ; i++ {
		v, _ := strconv.ParseFloat(strconv.FormatFloat(float64(i)*step, 'f', dec, 64), 64)
		if v > top+step/1e6 {
			break
		}
		ts = append(ts, tick{value: v, label: format(v)})
	}
	return ts
}

// countLabel formats a count axis label with thousands separators.
func countLabel(v float64) string { return groupDigits(int64(math.Round(v))) }

// secondsLabel formats a seconds axis label with as few decimals as needed.
func secondsLabel(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// legendEntry is one line of a legend: a swatch and its labels.
type legendEntry struct {
	colour string
	label  string
	note   string // smaller second label, may be empty
	line   bool   // a line swatch instead of a square
}

// legend draws a boxed legend with its top-left corner at x, y.
func (d *svgDoc) legend(x, y float64, entries []legendEntry) {
	const rowH = 20.0
	w := 0.0
	for _, e := range entries {
		w = math.Max(w, textWidth(e.label, 12)+textWidth(e.note, 11)+8)
	}
	w += 44
	h := rowH*float64(len(entries)) + 8
	d.printf(`<g class="legend">` + "\n")
	d.printf(`<rect x="%s" y="%s" width="%s" height="%s" fill="#ffffff" fill-opacity="0.9" stroke="#cccccc"/>`+"\n", num(x), num(y), num(w), num(h))
	for i, e := range entries {
		cy := y + 4 + rowH*float64(i) + rowH/2
		if e.line {
			d.line(x+8, cy, x+32, cy, e.colour, ` stroke-width="2.5"`)
		} else {
			d.printf(`<rect x="%s" y="%s" width="14" height="12" fill="%s"/>`+"\n", num(x+13), num(cy-6), e.colour)
		}
		d.text(x+38, cy+4, "start", e.label, ` class="legend-label"`)
		if e.note != "" {
			d.text(x+38+textWidth(e.label, 12)+8, cy+4, "start", e.note, fmt.Sprintf(` font-size="11" fill="%s"`, colourMuted))
		}
	}
	d.printf("</g>\n")
}

// textWidth estimates the width of s in a sans-serif font of the given
// size (about 0.57 em per character), enough to size boxes.
func textWidth(s string, size float64) float64 {
	return float64(len([]rune(s))) * size * 0.57
}
