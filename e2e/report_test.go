package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/neardup/neardup/internal/report"
)

// chromiumPath is where Debian's chromium package installs the browser.
const chromiumPath = "/usr/bin/chromium"

// TestReportInChromium opens the sample job's report.html in headless
// Chromium: a screenshot must show a page with the charts drawn, and the
// rendered DOM must hold the four charts with one bar per number of the
// manifest.
func TestReportInChromium(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		skipOrFail(t, chromiumPath+" not found: the report is not checked in a browser (scripts/install-test-tools.sh installs the Debian package chromium when run as root, as in CI)")
	}
	_, out := sampleJob(t)
	data, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(out, report.HTMLFile)
	if _, err := os.Stat(page); err != nil {
		t.Fatalf("the job wrote no report: %v", err)
	}
	pageURL := (&url.URL{Scheme: "file", Path: page}).String()

	// The rendered DOM: every chart, with its bars.
	dom, err := html.Parse(bytes.NewReader(chromium(t, "--dump-dom", pageURL)))
	if err != nil {
		t.Fatalf("the dumped DOM does not parse: %v", err)
	}
	var m struct {
		Verified []int64           `json:"verified_similarity_hist"`
		Rejected []int64           `json:"rejected_similarity_hist"`
		Sizes    []int64           `json:"cluster_size_hist"`
		Stages   []json.RawMessage `json:"stages"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	charts := []struct {
		id   string
		bars int
	}{
		{"scurve", 0},
		{"similarity", len(m.Verified) + len(m.Rejected)},
		{"clusters", len(m.Sizes)},
		{"stages", len(m.Stages)},
	}
	fills := map[string]string{} // chart id -> fill of its first bar
	for _, c := range charts {
		svgs := elements(dom, func(n *html.Node) bool { return n.Data == "svg" && attrOf(n, "id") == c.id })
		if len(svgs) != 1 {
			t.Errorf("the rendered page has %d <svg id=%q>, want 1", len(svgs), c.id)
			continue
		}
		if len(elements(svgs[0], func(n *html.Node) bool { return n != svgs[0] })) < 10 {
			t.Errorf("<svg id=%q> is (nearly) empty", c.id)
		}
		bars := elements(svgs[0], func(n *html.Node) bool {
			return n.Data == "rect" && slices.Contains(strings.Fields(attrOf(n, "class")), "bar")
		})
		if len(bars) != c.bars {
			t.Errorf("<svg id=%q> has %d bars, want %d", c.id, len(bars), c.bars)
		}
		if len(bars) > 0 {
			fills[c.id] = attrOf(bars[0], "fill")
		}
	}
	if curves := elements(dom, func(n *html.Node) bool { return n.Data == "path" && attrOf(n, "class") == "curve" }); len(curves) != 1 || len(attrOf(curves[0], "d")) < 100 {
		t.Errorf("the S-curve is not drawn: %d paths", len(curves))
	}

	// The example pairs: each link of report.html opens a section of
	// report-pairs.html that shows both texts with shared words marked.
	pairsDOM, err := html.Parse(bytes.NewReader(chromium(t, "--dump-dom", (&url.URL{Scheme: "file", Path: filepath.Join(out, report.PairsFile)}).String())))
	if err != nil {
		t.Fatalf("the dumped DOM of %s does not parse: %v", report.PairsFile, err)
	}
	links := elements(dom, func(n *html.Node) bool {
		return n.Data == "a" && strings.HasPrefix(attrOf(n, "href"), report.PairsFile+"#")
	})
	if len(links) == 0 {
		t.Error("report.html links to no example pair")
	}
	for _, a := range links {
		id := strings.TrimPrefix(attrOf(a, "href"), report.PairsFile+"#")
		sections := elements(pairsDOM, func(n *html.Node) bool { return n.Data == "section" && attrOf(n, "id") == id })
		if len(sections) != 1 {
			t.Errorf("%s has %d sections %q, want 1", report.PairsFile, len(sections), id)
			continue
		}
		if texts := elements(sections[0], func(n *html.Node) bool { return attrOf(n, "class") == "text" }); len(texts) != 2 {
			t.Errorf("%s#%s shows %d texts, want 2", report.PairsFile, id, len(texts))
		}
		if marks := elements(sections[0], func(n *html.Node) bool { return n.Data == "mark" }); len(marks) < 10 {
			t.Errorf("%s#%s marks %d words", report.PairsFile, id, len(marks))
		}
	}

	// The screenshot: a real page, with the bars painted in their colours.
	img := screenshot(t, pageURL, 1200, 6000)
	if b := img.Bounds(); b.Dx() != 1200 || b.Dy() != 6000 {
		t.Errorf("screenshot of %v, want 1200x6000", b)
	}
	colours := map[color.RGBA]int{}
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			colours[rgba(img, x, y)]++
		}
	}
	if len(colours) < 50 {
		t.Errorf("the screenshot has %d colours: nothing rendered?", len(colours))
	}
	for id, fill := range fills {
		want, ok := parseHex(fill)
		if !ok {
			t.Errorf("%s: bar fill %q is not #rrggbb", id, fill)
			continue
		}
		n := 0
		for c, k := range colours {
			if near(c, want) {
				n += k
			}
		}
		if n < 100 {
			t.Errorf("%s: %d pixels of the bars' colour %s in the screenshot", id, n, fill)
		}
		t.Logf("%s: %d pixels of the bars' colour %s", id, n, fill)
	}
}

// screenshot shoots the page in headless Chromium in a window of w x h
// pixels.
func screenshot(t *testing.T, pageURL string, w, h int) image.Image {
	t.Helper()
	shot := filepath.Join(t.TempDir(), "shot.png")
	chromium(t, "--screenshot="+shot, fmt.Sprintf("--window-size=%d,%d", w, h), pageURL)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	return img
}

// chromium runs headless Chromium on the arguments, with no network
// services and a fresh profile, and returns its standard output.
func chromium(t *testing.T, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	flags := []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(),
	}
	cmd := exec.CommandContext(ctx, chromiumPath, append(flags, args...)...)
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return stdout.Bytes()
}

func elements(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	if n.Type == html.ElementNode && match(n) {
		out = append(out, n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		out = append(out, elements(c, match)...)
	}
	return out
}

func attrOf(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func rgba(img image.Image, x, y int) color.RGBA {
	r, g, b, a := img.At(x, y).RGBA()
	return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), uint8(a >> 8)}
}

// parseHex parses a colour written #rrggbb.
func parseHex(s string) (color.RGBA, bool) {
	c := color.RGBA{A: 255}
	if len(s) != 7 {
		return c, false
	}
	_, err := fmt.Sscanf(s, "#%02x%02x%02x", &c.R, &c.G, &c.B)
	return c, err == nil
}

// near reports whether two colours differ by at most 3 in each channel
// (colour management may shift them slightly).
func near(a, b color.RGBA) bool {
	d := func(x, y uint8) bool { return max(x, y)-min(x, y) <= 3 }
	return d(a.R, b.R) && d(a.G, b.G) && d(a.B, b.B)
}
