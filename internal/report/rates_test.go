package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/neardup/neardup/internal/manifest"
)

// TestCountNotes checks that every count of the manifest has its
// description in the report.
func TestCountNotes(t *testing.T) {
	for f := range reflect.TypeFor[manifest.Counts]().Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if countNote(name) == "" {
			t.Errorf("count %s (Counts.%s) has no description in countNote", name, f.Name)
		}
	}
}

// tableRows are the rows of the table under the element of id, each the
// texts of its cells joined with |.
func tableRows(doc *html.Node, id string) []string {
	var rows []string
	for _, sec := range findAll(doc, func(n *html.Node) bool {
		return n.Type == html.ElementNode && slices.ContainsFunc(n.Attr, func(a html.Attribute) bool { return a.Key == "id" && a.Val == id })
	}) {
		for _, tr := range findAll(sec, func(n *html.Node) bool { return n.Type == html.ElementNode && n.Data == "tr" }) {
			var cells []string
			for _, td := range findAll(tr, func(n *html.Node) bool { return n.Type == html.ElementNode && n.Data == "td" }) {
				var b strings.Builder
				walk(td, func(n *html.Node) {
					if n.Type == html.TextNode {
						b.WriteString(n.Data)
					}
				})
				cells = append(cells, b.String())
			}
			if len(cells) > 0 {
				rows = append(rows, strings.Join(cells, "|"))
			}
		}
	}
	return rows
}

// TestBuildRates renders a manifest's rates: the hosts as listed (the
// other hosts' row last), the earlier jobs with their rates of this job's
// documents, the 20 input files with the most duplicates and a row summing
// the rest, and a card of the text removed. A manifest without rates (an
// earlier version's) has no such section.
func TestBuildRates(t *testing.T) {
	r := &manifest.Rates{
		Total:     manifest.Rate{Docs: 1000, Bytes: 4_000_000, Duplicates: 250, BytesRemoved: 1_000_000},
		HostCount: 30,
		Hosts: []manifest.Rate{
			{Name: "a.example", Docs: 100, Bytes: 400_000, Duplicates: 50, BytesRemoved: 200_000},
			{Name: manifest.OtherHosts, Docs: 900, Bytes: 3_600_000, Duplicates: 200, BytesRemoved: 800_000},
		},
		Earlier: []manifest.Rate{
			{Name: manifest.ThisJob, Docs: 1000, Bytes: 4_000_000, Duplicates: 150, BytesRemoved: 600_000},
			{Name: "2026-W46", Docs: 900, Duplicates: 100, BytesRemoved: 400_000},
		},
	}
	for i := range 25 {
		r.Files = append(r.Files, manifest.Rate{Name: fmt.Sprintf("f%02d.jsonl", i), Docs: 40, Bytes: 160_000, Duplicates: int64(i), BytesRemoved: int64(i) * 4000})
	}
	m := map[string]any{"params": map[string]any{"bands": 16, "rows": 8, "threshold": 0.8},
		"counts": map[string]any{"docs": 1000, "duplicates": 250}, "rates": r}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	files, err := Build(data)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(files[HTMLFile]))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tableRows(doc, "rates-hosts"), []string{
		"a.example|100|50|50.0%|200.0 kB|50.0%",
		"(other hosts)|900|200|22.2%|800.0 kB|22.2%",
	}; !slices.Equal(got, want) {
		t.Errorf("hosts\n%q\nwant\n%q", got, want)
	}
	if got, want := tableRows(doc, "rates-earlier"), []string{
		"(this job)|1,000|150|15.0%|600.0 kB",
		"2026-W46|900|100|10.0%|400.0 kB",
	}; !slices.Equal(got, want) {
		t.Errorf("earlier jobs\n%q\nwant\n%q", got, want)
	}
	fileRows := tableRows(doc, "rates-files")
	if len(fileRows) != 21 || !strings.HasPrefix(fileRows[0], "f24.jsonl|40|24|") || fileRows[20] != "(5 more files)|200|10|5.0%|40.0 kB|5.0%" {
		t.Errorf("files %q", fileRows)
	}
	if cards := cardTexts(doc); !slices.Contains(cards, "text removed|1.0 MB|25.0% of the documents' text|") {
		t.Errorf("no card of the text removed in %q", cards)
	}
	if !bytes.Contains(files[HTMLFile], []byte("30 hosts in all")) || bytes.Contains(files[HTMLFile], []byte("tallies one by one")) {
		t.Error("exact host tallies: the note does not give 30 hosts, or speaks of a bound")
	}

	// Past rates.MaxHosts hosts: the count is an estimate and the rows
	// may lack up to the bound.
	r.HostCount, r.HostCountEstimated, r.HostsBound = 123_456, true, 1_234
	m["rates"] = r
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if files, err = Build(data); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"About 123,456 hosts in all", "may lack up to 1,234 of its duplicates"} {
		if !bytes.Contains(files[HTMLFile], []byte(want)) {
			t.Errorf("bounded host tallies: no %q in the page", want)
		}
	}

	files, err = Build([]byte(`{"params": {"bands": 16, "rows": 8, "threshold": 0.8}, "counts": {"docs": 10}}`))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(files[HTMLFile], []byte(`id="rates"`)) {
		t.Error("a manifest without rates has a section of them")
	}
}
