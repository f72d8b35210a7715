package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/neardup/neardup/internal/golden"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/pkg/bands"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden/")

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// checkGolden compares got with testdata/golden/name, or rewrites it
// under -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "golden", name), got, *update)
}

func TestBuild(t *testing.T) {
	wantFiles := []string{ClustersFile, SCurveFile, SimilarityFile, StagesFile, HTMLFile} // sorted
	// The manifests in testdata/: a real one from the sample job
	// (trimmed), and one with warnings, a failed task, a giant cluster and
	// data that needs escaping.
	for _, name := range []string{"sample", "warnings"} {
		t.Run(name, func(t *testing.T) {
			data := readFixture(t, name)
			files, err := Build(data)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for f := range files {
				got = append(got, f)
			}
			slices.Sort(got)
			if !slices.Equal(got, wantFiles) {
				t.Fatalf("files %v, want %v", got, wantFiles)
			}
			again, err := Build(data)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range wantFiles {
				if !bytes.Equal(files[f], again[f]) {
					t.Errorf("%s differs between two builds of the same manifest", f)
				}
				checkGolden(t, name+"/"+f, files[f])
			}
			for _, f := range wantFiles {
				if strings.HasSuffix(f, ".svg") {
					checkSVG(t, f, files[f])
				}
			}

			doc, err := html.Parse(bytes.NewReader(files[HTMLFile]))
			if err != nil {
				t.Fatalf("report.html does not parse: %v", err)
			}
			checkSelfContained(t, doc)
			checkCharts(t, doc, data)
			checkText(t, doc, name)
		})
	}
}

// checkSVG checks that a chart file is well-formed XML whose root is an
// SVG element with an id and a view box.
func checkSVG(t *testing.T, name string, data []byte) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	depth, roots := 0, 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s is not well-formed XML: %v", name, err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
				attrs := map[string]string{}
				for _, a := range e.Attr {
					attrs[a.Name.Local] = a.Value
				}
				if e.Name.Local != "svg" || e.Name.Space != "http://www.w3.org/2000/svg" {
					t.Errorf("%s: root element %v", name, e.Name)
				}
				if attrs["viewBox"] == "" || attrs["id"] == "" {
					t.Errorf("%s: root element without viewBox or id: %v", name, attrs)
				}
			}
			depth++
		case xml.EndElement:
			depth--
		}
	}
	if roots != 1 {
		t.Errorf("%s has %d root elements", name, roots)
	}
}

// checkSelfContained fails on anything the page would fetch: every src,
// href and url( must be empty, a #fragment, a data: URL or a link to the
// report's other page (PairsFile or HTMLFile, beside it), and the page
// must have no script, link, iframe, object or embed element.
func checkSelfContained(t *testing.T, doc *html.Node) {
	t.Helper()
	localRef := func(v string) bool {
		v = strings.Trim(strings.TrimSpace(v), `'"`)
		return v == "" || strings.HasPrefix(v, "#") || strings.HasPrefix(strings.ToLower(v), "data:") ||
			v == HTMLFile || strings.HasPrefix(v, PairsFile+"#")
	}
	checkCSS := func(where, css string) {
		for rest := css; ; {
			i := strings.Index(strings.ToLower(rest), "url(")
			if i < 0 {
				break
			}
			rest = rest[i+4:]
			end := strings.IndexByte(rest, ')')
			if end < 0 {
				end = len(rest)
			}
			if !localRef(rest[:end]) {
				t.Errorf("%s: external url(%s)", where, rest[:end])
			}
		}
		if strings.Contains(strings.ToLower(css), "@import") {
			t.Errorf("%s: @import", where)
		}
	}
	walk(doc, func(n *html.Node) {
		switch {
		case n.Type == html.ElementNode:
			switch n.Data {
			case "script", "link", "iframe", "object", "embed", "img", "image", "use", "base":
				t.Errorf("element <%s> in a self-contained report", n.Data)
			}
			for _, a := range n.Attr {
				switch strings.ToLower(a.Key) {
				case "src", "href", "srcset", "action", "poster", "data", "xlink:href":
					if !localRef(a.Val) {
						t.Errorf("<%s %s=%q>: external reference", n.Data, a.Key, a.Val)
					}
				}
				checkCSS("<"+n.Data+" "+a.Key+">", a.Val)
			}
		case n.Type == html.TextNode && n.Parent != nil && n.Parent.Data == "style":
			checkCSS("<style>", n.Data)
		}
	})
}

// checkCharts checks that each chart is inlined once and that its bars
// hold the manifest's numbers.
func checkCharts(t *testing.T, doc *html.Node, data []byte) {
	t.Helper()
	var m struct {
		Verified []int64 `json:"verified_similarity_hist"`
		Rejected []int64 `json:"rejected_similarity_hist"`
		Sizes    []int64 `json:"cluster_size_hist"`
		Stages   []struct {
			Name    string  `json:"name"`
			Seconds float64 `json:"seconds"`
		} `json:"stages"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	var stageNames []string
	var stageSeconds []int64 // in nanoseconds, to compare exactly
	for _, s := range m.Stages {
		stageNames = append(stageNames, s.Name)
		stageSeconds = append(stageSeconds, int64(math.Round(s.Seconds*1e9)))
	}
	tests := []struct {
		id     string
		series string // data-series of the bars, "" for all
		want   []int64
	}{
		{"similarity", "verified", m.Verified},
		{"similarity", "rejected", m.Rejected},
		{"clusters", "", m.Sizes},
		{"stages", "", stageSeconds},
		{"scurve", "", nil},
	}
	for _, tc := range tests {
		svgs := findAll(doc, func(n *html.Node) bool { return n.Data == "svg" && attr(n, "id") == tc.id })
		if len(svgs) != 1 {
			t.Errorf("%d <svg id=%q> in report.html, want 1", len(svgs), tc.id)
			continue
		}
		bars := findAll(svgs[0], func(n *html.Node) bool {
			return n.Data == "rect" && hasClass(n, "bar") && (tc.series == "" || attr(n, "data-series") == tc.series)
		})
		var got []int64
		for _, b := range bars {
			v := attr(b, "data-value")
			if tc.id == "stages" {
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					t.Errorf("stages: data-value %q: %v", v, err)
				}
				got = append(got, int64(math.Round(f*1e9)))
				continue
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Errorf("%s: data-value %q: %v", tc.id, v, err)
			}
			got = append(got, n)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s %s bars: %v, manifest %v", tc.id, tc.series, got, tc.want)
		}
		if tc.id == "stages" {
			var names []string
			for _, b := range bars {
				names = append(names, attr(b, "data-stage"))
			}
			if !slices.Equal(names, stageNames) {
				t.Errorf("stage bars %v, manifest %v", names, stageNames)
			}
		}
	}
}

// checkText checks that the page shows the manifest's numbers and text,
// escaped.
func checkText(t *testing.T, doc *html.Node, fixture string) {
	t.Helper()
	var b strings.Builder
	walk(doc, func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
			b.WriteByte('\n')
		}
	})
	text := b.String()
	want := map[string][]string{
		"sample": {
			"No warnings.", "No task failed.", "b=16 r=8", "0.947", "0.994", "candidate_pairs_checked",
			"1,151,958", "signature_passed_exact", "doc-0000014", "https://www.disguised-dummy.example.net/essays/sherlock-sihor-desires-14.html",
			"testdata/sample/sample.warc.wet.gz", "809.4 kB", "go1.26.8", "3.7 MB/s", "1.9 MB/s",
			"Rejected records", "invalid UTF-8 in text at byte N", `missing text field "text"`, "3 records were rejected, by the kind of their reason",
		},
		"warnings": {
			"Warnings: check before dropping documents", "near-duplicates may be chained", "1 tasks failed",
			`<script>alert("x")</script>`, `https://example.com/a?b=1&c="2"`, "formats: chunk 2: <panic>",
			"future_count", "4-character grams", "b=21 r=6", "… and 1,199 more",
			"Clusters whose pairs/ lists only the kept document's pairs", "723,703", "724,906",
			"Band buckets too large to compare every pair", "6,100", "2,082", "12,345 of their pairs were not compared",
			"40 groups of documents with identical shingle sets hold 55 exact duplicates",
			"malformed WARC record header", `text field "<b>text</b>" is not a string but number`,
		},
	}
	for _, w := range want[fixture] {
		if !strings.Contains(text, w) {
			t.Errorf("report.html does not show %q", w)
		}
	}
}

func TestBuildErrors(t *testing.T) {
	sample := readFixture(t, "sample")
	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(sample, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	tests := []struct {
		name     string
		manifest []byte
		is       error // the error must wrap it, when not nil
	}{
		{"not JSON", []byte("{"), nil},
		{"an array", []byte("[]"), nil},
		{"no bands", edit(func(m map[string]any) { m["params"].(map[string]any)["bands"] = 0 }), bands.ErrInvalid},
		{"no rows", edit(func(m map[string]any) { delete(m["params"].(map[string]any), "rows") }), bands.ErrInvalid},
		{"counts not an object", edit(func(m map[string]any) { m["counts"] = []int{1} }), nil},
		{"count not a number", edit(func(m map[string]any) { m["counts"].(map[string]any)["docs"] = "many" }), nil},
		{"histograms differ", edit(func(m map[string]any) { m["rejected_similarity_hist"] = []int{1, 2} }), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files, err := Build(tc.manifest)
			if err == nil {
				t.Fatalf("Build succeeded with %d files", len(files))
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v does not wrap %v", err, tc.is)
			}
			if !strings.HasPrefix(err.Error(), "report: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

// buildEdited builds the report of fixture name after edit has changed
// its decoded JSON.
func buildEdited(t *testing.T, name string, edit func(m map[string]any)) map[string][]byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(readFixture(t, name), &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	files, err := Build(data)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestBuildMethods(t *testing.T) {
	tests := []struct {
		method string
		want   []string // texts the page must show
		not    []string // and must not
	}{
		{"minhash", []string{"minhash"}, []string{"This job used SimHash"}},
		{"simhash", []string{"simhash", "largest Hamming distance of a pair", "This job used SimHash"}, nil},
		{"", nil, []string{"This job used SimHash", "<code>method</code>"}},
	}
	for _, tc := range tests {
		t.Run(tc.method, func(t *testing.T) {
			files := buildEdited(t, "sample", func(m map[string]any) {
				params := m["params"].(map[string]any)
				params["method"] = tc.method
				if tc.method == "" {
					delete(params, "method") // manifests written before SimHash
				}
			})
			page := string(files[HTMLFile])
			for _, w := range tc.want {
				if !strings.Contains(page, w) {
					t.Errorf("report.html lacks %q", w)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(page, w) {
					t.Errorf("report.html shows %q", w)
				}
			}
		})
	}
}

func TestBuildSparseManifest(t *testing.T) {
	// A manifest of a job that found nothing: no histograms, stages or
	// clusters. The report still renders, with empty charts.
	m := `{"params": {"bands": 16, "rows": 8, "threshold": 0.8}, "counts": {"docs": 0}, "stages": null}`
	files, err := Build([]byte(m))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if strings.HasSuffix(name, ".svg") {
			checkSVG(t, name, data)
		}
	}
	doc, err := html.Parse(bytes.NewReader(files[HTMLFile]))
	if err != nil {
		t.Fatal(err)
	}
	checkSelfContained(t, doc)
	if n := len(findAll(doc, func(n *html.Node) bool { return hasClass(n, "bar") })); n != 0 {
		t.Errorf("%d bars for a manifest without data", n)
	}
	for _, note := range []string{"no candidate pairs were checked", "no clusters", "no stage ran"} {
		if !bytes.Contains(files[HTMLFile], []byte(note)) {
			t.Errorf("report.html lacks %q", note)
		}
	}
}

// TestBuildSkippedInputs checks that the inputs panel lists the files
// skipped for their unknown kind, with the reason, after the inputs read.
func TestBuildSkippedInputs(t *testing.T) {
	m := `{"params": {"bands": 16, "rows": 8, "threshold": 0.8}, "counts": {"docs": 1},
		"inputs": [{"path": "/data/a.jsonl", "kind": "jsonl", "size": 2048}],
		"skipped_inputs": [{"path": "/data/table.csv", "reason": "unknown kind: content starts with \"id,text\""}]}`
	files, err := Build([]byte(m))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(files[HTMLFile]))
	if err != nil {
		t.Fatal(err)
	}
	rows := findAll(doc, func(n *html.Node) bool { return n.Type == html.ElementNode && n.Data == "tr" && hasClass(n, "skipped") })
	if len(rows) != 1 {
		t.Fatalf("%d skipped rows, want 1", len(rows))
	}
	var text strings.Builder
	walk(rows[0], func(n *html.Node) {
		if n.Type == html.TextNode {
			text.WriteString(n.Data + "|")
		}
	})
	if want := `/data/table.csv|skipped: unknown kind: content starts with "id,text"|not read|`; text.String() != want {
		t.Errorf("skipped row %q, want %q", text.String(), want)
	}
	if !bytes.Contains(files[HTMLFile], []byte("1 file, 2.0 kB (2,048 bytes); 1 file skipped")) {
		t.Errorf("the inputs total does not count the skipped file")
	}
}

// TestSCurvePoints checks the drawn curve of b=20, r=5 against the known
// values of 1-(1-s^5)^20, mapped back through the axes' tick marks.
func TestSCurvePoints(t *testing.T) {
	svg := SCurveSVG([]bands.Params{{Bands: 20, Rows: 5}}, 0.8, "b=20 r=5")
	doc, err := html.Parse(bytes.NewReader(svg))
	if err != nil {
		t.Fatal(err)
	}
	// Pixel positions of the ticks at 0 and 1 on both axes.
	ticks := map[string]float64{}
	walk(doc, func(n *html.Node) {
		switch {
		case hasClass(n, "tick-x") && (attr(n, "data-value") == "0" || attr(n, "data-value") == "1"):
			ticks["x"+attr(n, "data-value")] = parseF(t, attr(n, "x1"))
		case hasClass(n, "tick-y") && (attr(n, "data-value") == "0" || attr(n, "data-value") == "1"):
			ticks["y"+attr(n, "data-value")] = parseF(t, attr(n, "y1"))
		}
	})
	if len(ticks) != 4 {
		t.Fatalf("ticks at 0 and 1: %v", ticks)
	}
	toS := func(x float64) float64 { return (x - ticks["x0"]) / (ticks["x1"] - ticks["x0"]) }
	toPixelY := func(p float64) float64 { return ticks["y0"] + p*(ticks["y1"]-ticks["y0"]) }

	paths := findAll(doc, func(n *html.Node) bool { return n.Data == "path" && hasClass(n, "curve") })
	if len(paths) != 1 {
		t.Fatalf("%d curves, want 1", len(paths))
	}
	points := map[string]float64{} // s rounded to 3 decimals -> y pixel
	for _, cmd := range strings.FieldsFunc(attr(paths[0], "d"), func(r rune) bool { return r == 'M' || r == 'L' }) {
		f := strings.Fields(cmd)
		if len(f) != 2 {
			t.Fatalf("path command %q", cmd)
		}
		points[strconv.FormatFloat(toS(parseF(t, f[0])), 'f', 3, 64)] = parseF(t, f[1])
	}
	tests := []struct {
		s, p float64
	}{
		{0.2, .006}, {0.3, .047}, {0.4, .186}, {0.5, .47}, {0.6, .802}, {0.7, .975}, {0.8, .9996},
	}
	for _, tc := range tests {
		y, ok := points[strconv.FormatFloat(tc.s, 'f', 3, 64)]
		if !ok {
			t.Errorf("the path has no vertex at s=%v", tc.s)
			continue
		}
		if d := math.Abs(y - toPixelY(tc.p)); d > 1 {
			t.Errorf("s=%v: y=%v, P=%v is at %v: %.2f pixels off", tc.s, y, tc.p, toPixelY(tc.p), d)
		}
		if d := math.Abs(y - toPixelY(bands.Probability(tc.s, bands.Params{Bands: 20, Rows: 5}))); d > 0.01 {
			t.Errorf("s=%v: y=%v is %.3f pixels from Probability", tc.s, y, d)
		}
	}
}

func TestSCurveSVG(t *testing.T) {
	tests := []struct {
		name      string
		curves    []bands.Params
		threshold float64
		title     string
		curveN    int      // paths drawn
		labels    []string // texts that must appear
		line      bool     // whether the threshold line is drawn
	}{
		{"one", []bands.Params{{Bands: 16, Rows: 8}}, 0.8, "S-curve", 1, []string{"b=16 r=8", "P(t) = 0.947", "threshold 0.8", "0.0", "0.5", "1.0"}, true},
		{"several", []bands.Params{{Bands: 26, Rows: 3}, {Bands: 21, Rows: 6}, {Bands: 9, Rows: 14}}, 0.5, "three", 3, []string{"b=26 r=3", "b=21 r=6", "b=9 r=14", "threshold 0.5"}, true},
		{"escaped title", []bands.Params{{Bands: 20, Rows: 5}}, 0.7, `<a href="x">&`, 1, []string{`<a href="x">&`}, true},
		{"no threshold", []bands.Params{{Bands: 20, Rows: 5}}, math.NaN(), "", 1, []string{"b=20 r=5"}, false},
		{"threshold above 1", []bands.Params{{Bands: 20, Rows: 5}}, 1.5, "", 1, nil, false},
		{"invalid banding", []bands.Params{{Bands: 0, Rows: 5}}, 0.8, "", 0, []string{"b=0 r=5", "(invalid)"}, true},
		{"no curve", nil, 0.8, "", 0, []string{"threshold 0.8"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svg := SCurveSVG(tc.curves, tc.threshold, tc.title)
			if !bytes.Equal(svg, SCurveSVG(tc.curves, tc.threshold, tc.title)) {
				t.Error("two calls give different bytes")
			}
			checkSVG(t, tc.name, svg)
			doc, err := html.Parse(bytes.NewReader(svg))
			if err != nil {
				t.Fatal(err)
			}
			checkSelfContained(t, doc)
			if n := len(findAll(doc, func(n *html.Node) bool { return n.Data == "path" && hasClass(n, "curve") })); n != tc.curveN {
				t.Errorf("%d curves, want %d", n, tc.curveN)
			}
			if n := len(findAll(doc, func(n *html.Node) bool { return n.Data == "line" && hasClass(n, "threshold") })); (n == 1) != tc.line || n > 1 {
				t.Errorf("%d threshold lines, want one: %v", n, tc.line)
			}
			var texts []string
			walk(doc, func(n *html.Node) {
				if n.Type == html.TextNode {
					texts = append(texts, n.Data)
				}
			})
			for _, l := range tc.labels {
				if !slices.Contains(texts, l) {
					t.Errorf("no text %q in %q", l, texts)
				}
			}
			for i := range 11 {
				v := strconv.FormatFloat(float64(i)/10, 'g', -1, 64)
				for _, axis := range []string{"tick-x", "tick-y"} {
					if len(findAll(doc, func(n *html.Node) bool { return hasClass(n, axis) && attr(n, "data-value") == v })) != 1 {
						t.Errorf("no %s at %s", axis, v)
					}
				}
			}
		})
	}
}

func TestFormatting(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{groupDigits(0), "0"},
		{groupDigits(999), "999"},
		{groupDigits(1000), "1,000"},
		{groupDigits(1151958), "1,151,958"},
		{groupDigits(-1234567), "-1,234,567"},
		{probLabel(0.9470487961682149), "0.947"},
		{probLabel(0.99963), "0.9996"},
		{probLabel(0.0004), "0.0004"},
		{probLabel(1), "1.000"},
		{probLabel(0), "0.000"},
		{bytesText(325), "325 B"},
		{bytesText(1981367), "2.0 MB"},
		{bytesText(12345678901), "12.3 GB"},
		{rate(3007253, 0.583972037), "5.1 MB/s"},
		{rate(1, 0), "– MB/s"},
		{secondsText(0.28782202), "0.288"},
		{secondsText(125.25), "125.2"},
		{plural(1, "task", "tasks"), "1 task"},
		{plural(1204, "task", "tasks"), "1,204 tasks"},
		{roundedText(3 * 0.05), "0.15"},
		{roundedText(1.0 / 3), "0.3333"},
		{roundedText(1), "1"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestRejectRows checks the report's list of rejects by reason and what
// it says of it, also for a manifest written before rejects were counted
// by reason.
func TestRejectRows(t *testing.T) {
	tests := []struct {
		name     string
		reasons  []manifest.ReasonCount
		rejected int64
		rows     []row
		note     string
	}{
		{"none", nil, 0, nil, "No record was rejected"},
		{"by reason", []manifest.ReasonCount{{Reason: "invalid JSON", Count: 1200}, {Reason: "unreadable", Count: 1}}, 1201,
			[]row{{Name: "invalid JSON", Value: "1,200"}, {Name: "unreadable", Value: "1"}}, "1,201 records were rejected, by the kind of their reason"},
		{"one", []manifest.ReasonCount{{Reason: "unreadable", Count: 1}}, 1, []row{{Name: "unreadable", Value: "1"}}, "1 record was rejected"},
		{"older manifest", nil, 3, nil, "3 records were rejected: this manifest does not count them by reason"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows, note := rejectRows(tc.reasons, tc.rejected)
			if !slices.Equal(rows, tc.rows) || !strings.Contains(note, tc.note) {
				t.Errorf("rows %v, note %q; want %v, %q", rows, note, tc.rows, tc.note)
			}
		})
	}
}

// TestRoundedTooltips checks that no tooltip or label of a report shows a
// number with the noise digits of floating point (0.15000000000000002).
func TestRoundedTooltips(t *testing.T) {
	long := regexp.MustCompile(`[0-9]\.[0-9]{5,}`)
	for _, name := range []string{"sample", "warnings"} {
		files, err := Build(readFixture(t, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range slices.Sorted(maps.Keys(files)) {
			doc, err := html.Parse(bytes.NewReader(files[f]))
			if err != nil {
				t.Fatal(err)
			}
			walk(doc, func(n *html.Node) {
				if n.Type == html.TextNode && n.Parent != nil && (n.Parent.Data == "title" || n.Parent.Data == "text") {
					if m := long.FindString(n.Data); m != "" {
						t.Errorf("%s %s: <%s> %q shows %s", name, f, n.Parent.Data, n.Data, m)
					}
				}
			})
		}
	}
}

func TestNiceScale(t *testing.T) {
	tests := []struct {
		max, minStep float64
		top, step    float64
	}{
		{0, 1, 1, 1},
		{3, 1, 3, 1},
		{31, 1, 40, 10},
		{339, 1, 400, 100},
		{5000, 1, 5000, 1000},
		{9000, 1, 10000, 2000},
		{0.288, 0, 0.3, 0.1},
		{12.5, 0, 15, 5},
	}
	for _, tc := range tests {
		top, step := niceScale(tc.max, tc.minStep)
		if math.Abs(top-tc.top) > 1e-9 || math.Abs(step-tc.step) > 1e-9 {
			t.Errorf("niceScale(%v, %v) = %v, %v; want %v, %v", tc.max, tc.minStep, top, step, tc.top, tc.step)
		}
	}
}

func walk(n *html.Node, f func(*html.Node)) {
	f(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func findAll(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	walk(n, func(n *html.Node) {
		if n.Type == html.ElementNode && match(n) {
			out = append(out, n)
		}
	})
	return out
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, class string) bool {
	return slices.Contains(strings.Fields(attr(n, "class")), class)
}

func parseF(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestBuildAgainst checks that a job matched against earlier jobs counts
// its new-vs-old and new-vs-new pairs apart, and names the earlier jobs,
// whether its manifest has them beside params (this version) or in params
// (versions before); a job that was not shows neither card.
func TestBuildAgainst(t *testing.T) {
	const weeks = `[{"job": "week-1", "out": "/data/w1", "docs": 1200}, {"job": "week-2", "out": "/data/w2", "docs": 800}]`
	cards := []string{"pairs with earlier jobs|70|new-vs-old, against 2,000 documents of week-1, week-2|", "pairs among this job's|30|new-vs-new|"}
	for _, tt := range []struct {
		name, inParams, beside string
		want                   []string
	}{
		{"against", `null`, weeks, cards},
		{"against, in params", weeks, `null`, cards},
		{"alone", `null`, `null`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := `{"params": {"bands": 16, "rows": 8, "threshold": 0.8, "against": ` + tt.inParams + `}, "against": ` + tt.beside +
				`, "counts": {"docs": 10, "pairs": 100, "pairs_against": 70}}`
			files, err := Build([]byte(m))
			if err != nil {
				t.Fatal(err)
			}
			doc, err := html.Parse(bytes.NewReader(files[HTMLFile]))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range cardTexts(doc) {
				if strings.HasPrefix(s, "pairs with") || strings.HasPrefix(s, "pairs among") {
					got = append(got, s)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("cards %q, want %q", got, tt.want)
			}
		})
	}
}

// cardTexts are the texts of the page's cards, each its text nodes
// followed by |.
func cardTexts(doc *html.Node) []string {
	var cards []string
	for _, c := range findAll(doc, func(n *html.Node) bool { return n.Type == html.ElementNode && n.Data == "div" && hasClass(n, "card") }) {
		var text strings.Builder
		walk(c, func(n *html.Node) {
			if n.Type == html.TextNode {
				text.WriteString(n.Data + "|")
			}
		})
		cards = append(cards, text.String())
	}
	return cards
}

// TestBuildParagraphs checks the section of the paragraph pass: shown
// with the manifest's counts and most repeated units (their samples
// escaped), with the earlier jobs counted and not of a series' member,
// and absent from the report of a job without the pass.
func TestBuildParagraphs(t *testing.T) {
	files := buildEdited(t, "sample", func(m map[string]any) {
		m["paragraphs"] = map[string]any{
			"unit": "line", "units": 1200, "unit_bytes": 50000, "distinct": 700, "repeated": 42, "occurrences": 300,
			"repeated_bytes": 9000, "extra_bytes": 8000, "repeated_share": 0.125, "extra_share": 0.1, "bounded": 1, "rows_not_listed": 17,
			"top": []any{
				map[string]any{"hash": -5, "docs": 120, "occurrences": 121, "first_doc": 4294967296, "offset": 0, "length": 20, "sample": "Home | About <b>"},
				map[string]any{"hash": 7, "docs": 30, "occurrences": 30, "first_doc": 3, "offset": 9, "length": 5, "sample": "© 2026"},
			},
		}
	})
	page := string(files[HTMLFile])
	for _, want := range []string{
		`id="paragraphs"`, "1,200 lines (700 distinct)", "42 of them", "300 occurrences", "12.5% of the text", "10.0% of the text",
		"1 unit held by more than --max-bucket", "17 occurrences are not listed",
		"Home | About &lt;b&gt;", "© 2026", "4294967296", ">121<",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if strings.Contains(page, "<b>") && strings.Contains(page, "About <b>") {
		t.Error("a sample is not escaped")
	}
	// A series' member: the earlier jobs counted, and not.
	files = buildEdited(t, "sample", func(m map[string]any) {
		m["paragraphs"] = map[string]any{"unit": "line", "units": 10, "distinct": 8, "repeated": 2,
			"top":     []any{map[string]any{"hash": 1, "docs": 3, "occurrences": 1, "first_doc": 8589934592, "sample": "Menu", "first_job": "w1"}},
			"earlier": map[string]any{"counted": []any{"w1", "w2"}, "not_counted": []any{map[string]any{"job": "w0", "reason": "its index has no unit table"}}, "held": 5}}
	})
	page = string(files[HTMLFile])
	for _, want := range []string{
		"include the documents of the earlier jobs w1, w2", "5 of this job&#39;s distinct units were held by an earlier job",
		"The units of earlier job w0 are not counted: its index has no unit table.", "8589934592 (first held in w1)",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	plain := string(buildEdited(t, "sample", func(map[string]any) {})[HTMLFile])
	if strings.Contains(plain, `id="paragraphs"`) {
		t.Error("the report of a job without --paragraphs has the section")
	}
}
