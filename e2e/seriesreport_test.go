package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"golang.org/x/net/html"

	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/report"
)

// The screenshot of a three-week series' report that the documentation
// shows, and the members' manifests it was made from (kept, so that the
// picture can be checked without a run).
const (
	seriesPNG          = "../docs/report-series.png"
	seriesPNGManifests = "testdata/report-series"
)

// seriesHosts are the hosts the series test's documents are moved to,
// the first ones more often (a crawl's few large sites and many small).
var seriesHosts = []string{
	"news.example.com", "blog.example.org", "shop.example.net", "wiki.example.org", "forum.example.com",
	"docs.example.net", "mirror-a.example", "mirror-b.example", "archive.example.org", "recipes.example.com",
	"travel.example.net", "sports.example.com", "music.example.org", "films.example.net", "garden.example.com",
	"cars.example.org", "books.example.net", "games.example.com", "health.example.org", "science.example.net",
	"local.example.com", "jobs.example.org", "photo.example.net", "kids.example.com", "pets.example.org",
}

// hostOf picks a host for a document by a hash of its id: host i about
// twice as often as host i+4.
func hostOf(id string) string {
	h := fnv.New64a()
	h.Write([]byte(id))
	x := float64(h.Sum64()%1_000_000) / 1_000_000
	i := int(float64(len(seriesHosts)) * x * x) // skewed to the first hosts
	return seriesHosts[min(i, len(seriesHosts)-1)]
}

// rehost rewrites the url member of every line of a JSONL file to a page
// of hostOf(its id).
func rehost(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var d map[string]any
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		id, _ := d["id"].(string)
		d["url"] = "https://" + hostOf(id) + "/" + id + ".html"
		line, _ := json.Marshal(d)
		out.Write(append(line, '\n'))
	}
	f.Close()
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// rateDoc and rateDup are what TestSeriesReport reads of docs/ and
// duplicates.parquet to count the rates again.
type rateDoc struct {
	Doc   int64  `parquet:"doc"`
	URL   string `parquet:"url"`
	File  string `parquet:"file"`
	Bytes int64  `parquet:"bytes"`
}

type rateDup struct {
	Doc     int64   `parquet:"doc"`
	KeptJob *string `parquet:"kept_job,optional"`
}

// TestSeriesReport runs a three-week series (a generated corpus cut into
// three weekly inputs, its documents moved to 25 hosts), then `coordinator
// series report`. Each week's manifest counts its duplicates and the text
// they remove by host, input file and the week of the kept document as
// its docs/ and duplicates.parquet say (counted again here), and the
// series report gives, for each week, its duplicates split into those
// dropped for its own documents and for an earlier week's, in the table
// and in the trend chart's bars. With -update it keeps the weeks'
// manifests (testdata/report-series/) and shoots docs/report-series.png.
func TestSeriesReport(t *testing.T) {
	dir := t.TempDir()
	corp := filepath.Join(dir, "corpus")
	run(t, "gencorpus", "-n", "3000", "-seed", "46", "-files", "3", "-q", "-out", corp)
	inputs, _ := filepath.Glob(filepath.Join(corp, "part-*.jsonl"))
	if len(inputs) != 3 {
		t.Fatalf("gencorpus wrote %q, want 3 files", inputs)
	}
	weeks := []string{"2026-W46", "2026-W47", "2026-W48"}
	ser := filepath.Join(dir, "crawl-dedup")
	for w, in := range inputs {
		rehost(t, in)
		run(t, "coordinator", "--series", ser, "--name", weeks[w], "--quiet", "--workers", "2", in)
	}
	mans := make([]*manifest.Manifest, len(weeks))
	for w, name := range weeks {
		out := filepath.Join(ser, name)
		data, err := os.ReadFile(filepath.Join(out, "manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		if mans[w], err = manifest.Decode(data); err != nil {
			t.Fatal(err)
		}
		checkRates(t, name, out, mans[w])
	}
	if e := mans[2].Rates.Earlier; len(e) != 3 || e[1].Name != weeks[0] || e[2].Name != weeks[1] || e[1].Duplicates+e[2].Duplicates == 0 {
		t.Errorf("%s: duplicates by earlier week %+v: want rows of %s and %s, some duplicates dropped for them", weeks[2], e, weeks[0], weeks[1])
	}

	printed := run(t, "coordinator", "series", "report", ser)
	page := filepath.Join(ser, "_report", report.SeriesHTMLFile)
	if strings.TrimSpace(printed) != page {
		t.Errorf("series report printed %q, want %s", printed, page)
	}
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	for _, tr := range elements(doc, func(n *html.Node) bool { return n.Data == "tr" && inSection(n, "members") }) {
		var cells []string
		for _, td := range elements(tr, func(n *html.Node) bool { return n.Data == "td" }) {
			cells = append(cells, textContent(td))
		}
		if cells != nil {
			rows = append(rows, cells)
		}
	}
	bars := map[string]string{}
	for _, b := range elements(doc, func(n *html.Node) bool { return n.Data == "rect" && strings.HasPrefix(attrOf(n, "class"), "bar ") }) {
		bars[attrOf(b, "data-series")+" "+attrOf(b, "data-bin")] = attrOf(b, "data-value")
	}
	if len(rows) != len(weeks) {
		t.Fatalf("the members table has %d rows, want %d: %q", len(rows), len(weeks), rows)
	}
	for w, m := range mans {
		var own, earlier int64
		for _, e := range m.Rates.Earlier {
			if e.Name == manifest.ThisJob {
				own += e.Duplicates
			} else {
				earlier += e.Duplicates
			}
		}
		if own+earlier != m.Counts.Duplicates || (w == 0) != (earlier == 0) {
			t.Errorf("%s: %d duplicates for its own documents, %d for an earlier week's, %d in all", weeks[w], own, earlier, m.Counts.Duplicates)
		}
		want := []string{weeks[w], "complete", groupNum(m.Counts.Docs), groupNum(m.Counts.Duplicates)}
		if got := rows[w][:4]; !slices.Equal(got, want) || rows[w][5] != groupNum(own) || rows[w][6] != groupNum(earlier) {
			t.Errorf("row %q, want %q with %d own and %d earlier", rows[w], want, own, earlier)
		}
		if bars["own "+strconv.Itoa(w)] != strconv.FormatInt(own, 10) || bars["earlier "+strconv.Itoa(w)] != strconv.FormatInt(earlier, 10) {
			t.Errorf("%s: bars %q %q, want %d %d", weeks[w], bars["own "+strconv.Itoa(w)], bars["earlier "+strconv.Itoa(w)], own, earlier)
		}
	}

	// Each week's duplicates by the week of the kept document: its own on
	// the diagonal, an earlier week's left of it, none right of it.
	var kept [][]string
	for _, tr := range elements(doc, func(n *html.Node) bool { return n.Data == "tr" && inSection(n, "kept-by-member") }) {
		var cells []string
		for _, td := range elements(tr, func(n *html.Node) bool { return n.Data == "td" }) {
			cells = append(cells, textContent(td))
		}
		if cells != nil {
			kept = append(kept, cells)
		}
	}
	if len(kept) != len(weeks) {
		t.Fatalf("the table of duplicates by the kept document's member has %d rows, want %d: %q", len(kept), len(weeks), kept)
	}
	for w, m := range mans {
		want := []string{weeks[w]}
		for c := range weeks {
			name := weeks[c]
			if c == w {
				name = manifest.ThisJob
			}
			cell := "–"
			for _, e := range m.Rates.Earlier {
				if e.Name == name {
					cell = groupNum(e.Duplicates)
				}
			}
			if c <= w && cell == "–" {
				t.Errorf("%s: no row of rates.earlier for %s", weeks[w], name)
			}
			want = append(want, cell)
		}
		if !slices.Equal(kept[w], want) {
			t.Errorf("duplicates of %s by the kept document's member %q, want %q", weeks[w], kept[w], want)
		}
	}

	if *update {
		for w, name := range weeks {
			data, err := os.ReadFile(filepath.Join(ser, name, "manifest.json"))
			if err != nil {
				t.Fatal(err)
			}
			data = bytes.ReplaceAll(data, []byte(dir+string(filepath.Separator)), nil)
			path := filepath.Join(seriesPNGManifests, fmt.Sprintf("%d-%s.json", w, name))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		files := keptSeriesReport(t)
		shoot(t, files, report.SeriesHTMLFile, seriesPNG, reportFilesSum(files))
	}
}

// checkRates counts a week's rates again from its docs/ and
// duplicates.parquet and compares them with its manifest's.
func checkRates(t *testing.T, name, out string, m *manifest.Manifest) {
	t.Helper()
	r := m.Rates
	if r == nil {
		t.Fatalf("%s: the manifest has no rates", name)
	}
	dupOf := map[int64]string{}
	for _, d := range readSeriesRows[rateDup](t, out, "duplicates.parquet") {
		dupOf[d.Doc] = manifest.ThisJob
		if d.KeptJob != nil {
			dupOf[d.Doc] = *d.KeptJob
		}
	}
	hosts, files, earlier := map[string]manifest.Rate{}, map[string]manifest.Rate{}, map[string]int64{}
	var total manifest.Rate
	paths, _ := filepath.Glob(filepath.Join(out, "docs", "*.parquet"))
	for _, p := range paths {
		docs, err := parquet.ReadFile[rateDoc](p)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			host := strings.SplitN(strings.TrimPrefix(d.URL, "https://"), "/", 2)[0]
			kept, isDup := dupOf[d.Doc]
			for _, tally := range []func(func(manifest.Rate) manifest.Rate){
				func(f func(manifest.Rate) manifest.Rate) { hosts[host] = f(hosts[host]) },
				func(f func(manifest.Rate) manifest.Rate) { files[d.File] = f(files[d.File]) },
				func(f func(manifest.Rate) manifest.Rate) { total = f(total) },
			} {
				tally(func(x manifest.Rate) manifest.Rate {
					x.Docs++
					x.Bytes += d.Bytes
					if isDup {
						x.Duplicates++
						x.BytesRemoved += d.Bytes
					}
					return x
				})
			}
			if isDup {
				earlier[kept]++
			}
		}
	}
	total.Name = ""
	if r.Total != total {
		t.Errorf("%s: rates total %+v, docs/ and duplicates.parquet say %+v", name, r.Total, total)
	}
	if r.HostCount != int64(len(hosts)) || len(r.Hosts) != min(len(hosts), manifest.TopHosts+1) {
		t.Errorf("%s: %d hosts in %d rows; docs/ has %d hosts", name, r.HostCount, len(r.Hosts), len(hosts))
	}
	var sum manifest.Rate
	for i, h := range r.Hosts {
		sum.Docs += h.Docs
		sum.Duplicates += h.Duplicates
		sum.BytesRemoved += h.BytesRemoved
		if h.Name == manifest.OtherHosts {
			if i != len(r.Hosts)-1 {
				t.Errorf("%s: the other hosts' row is not last", name)
			}
			continue
		}
		want := hosts[h.Name]
		want.Name = h.Name
		if h != want {
			t.Errorf("%s: host %+v, docs/ and duplicates.parquet say %+v", name, h, want)
		}
	}
	if sum.Docs != total.Docs || sum.Duplicates != total.Duplicates || sum.BytesRemoved != total.BytesRemoved {
		t.Errorf("%s: the host rows sum to %+v, the total is %+v", name, sum, total)
	}
	for _, f := range r.Files {
		want := files[f.Name]
		want.Name = f.Name
		if f != want {
			t.Errorf("%s: file %+v, want %+v", name, f, want)
		}
	}
	if len(r.Files) != len(files) {
		t.Errorf("%s: %d files, docs/ names %d", name, len(r.Files), len(files))
	}
	for _, e := range r.Earlier {
		if e.Duplicates != earlier[e.Name] {
			t.Errorf("%s: %d duplicates for %s's documents, duplicates.parquet has %d", name, e.Duplicates, e.Name, earlier[e.Name])
		}
		delete(earlier, e.Name)
	}
	for job, n := range earlier {
		t.Errorf("%s: %d duplicates kept for %s's documents are in no row of rates.earlier", name, n, job)
	}
}

// keptSeriesReport builds the series report from the kept manifests.
func keptSeriesReport(t *testing.T) map[string][]byte {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(seriesPNGManifests, "*.json"))
	if len(paths) == 0 {
		t.Fatalf("no manifests in %s: run `go test -run TestSeriesReport -update`", seriesPNGManifests)
	}
	var members []report.SeriesMember
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m, err := manifest.Decode(data)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		_, name, _ := strings.Cut(strings.TrimSuffix(filepath.Base(p), ".json"), "-")
		members = append(members, report.SeriesMember{Name: name, State: "complete", Manifest: m})
	}
	files, err := report.BuildSeries("crawl-dedup", members)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestSeriesReportPNG keeps docs/report-series.png the picture of what
// the series report renders today from the kept manifests (see
// TestReportPNG); `go test -run TestSeriesReport -update` runs the series
// again and shoots it.
func TestSeriesReportPNG(t *testing.T) {
	checkShot(t, seriesPNG, reportFilesSum(keptSeriesReport(t)), seriesPNGManifests, "TestSeriesReport")
}

// inSection tells whether n is inside the element of id.
func inSection(n *html.Node, id string) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if attrOf(p, "id") == id {
			return true
		}
	}
	return false
}

// groupNum formats n as the report does, with commas.
func groupNum(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// textContent is the text of n and its descendants.
func textContent(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}
