package control

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/corpus"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/pkg/records"
)

// TestKeepRules runs jobs under the keep rules that rank by a record's
// value and checks that every cluster keeps the document the rule
// prefers, by the values written into the inputs: the highest quality
// (field:quality:desc, a JSONL field with ties and documents without
// one), the lowest (field:quality:asc), the latest WARC-Date of WET
// records (newest); ties and documents without a value go to input
// order, and each duplicate names its cluster's kept document.
func TestKeepRules(t *testing.T) {
	pool, err := corpus.BundledPool()
	if err != nil {
		t.Fatal(err)
	}
	g, err := corpus.New(pool, corpus.DefaultConfig(1500, 7))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// JSONL with a quality field: tenths from a hash of the id (ties
	// are common), none for every seventh document.
	quality := map[string]*float64{} // by url
	var b strings.Builder
	for i := range g.Len() {
		d := g.Doc(i)
		row := map[string]any{"id": d.ID, "url": d.URL, "text": d.Text}
		if i%7 != 3 {
			q := float64(len(d.ID)*31+i*17%97) / 10
			quality[d.URL] = &q
			row["quality"] = q
		}
		line, _ := json.Marshal(row)
		b.Write(append(line, '\n'))
	}
	jsonl := filepath.Join(dir, "docs.jsonl")
	if err := os.WriteFile(jsonl, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	wet, err := corpus.Write(g, corpus.WriteOptions{Dir: filepath.Join(dir, "wet"), Format: corpus.FormatWET, Files: 2})
	if err != nil {
		t.Fatal(err)
	}
	date := map[string]*float64{}
	for i := range g.Len() {
		s := float64(g.Date(i).Unix())
		date[g.Doc(i).URL] = &s
	}

	for _, tc := range []struct {
		keep    job.Keep
		inputs  []string
		value   map[string]*float64 // by url
		desc    bool
		warning string // of the documents without a value
	}{
		{"field:quality:desc", []string{jsonl}, quality, true, `--keep field:quality:desc: 214 of 1500 documents have no value to rank by, and rank after every document that has one (the first: ` + jsonl + ` at offset `},
		{"field:quality:asc", []string{jsonl}, quality, false, `(line 4): "quality" has no value (missing or null))`},
		{"newest", wet.Files, date, true, ""},
	} {
		t.Run(strings.ReplaceAll(string(tc.keep), ":", "-"), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			cfg := testConfig(t, "", out, 2)
			cfg.Inputs, cfg.Params.Keep = tc.inputs, tc.keep
			man, err := Run(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			warned := strings.Join(man.Warnings, "\n")
			if tc.warning == "" && strings.Contains(warned, "no value to rank by") || !strings.Contains(warned, tc.warning) {
				t.Errorf("warnings:\n%s\nwant one with %q", warned, tc.warning)
			}
			// The document each cluster must keep: the best value, the
			// smallest ordinal of those that tie, or of all if none has
			// one.
			better := func(x, y records.ClusterRecord) bool {
				vx, vy := tc.value[x.URL], tc.value[y.URL]
				switch {
				case vx == nil || vy == nil:
					return vx != nil && vy == nil || vx == nil && vy == nil && x.Doc < y.Doc
				case *vx != *vy:
					return (*vx > *vy) == tc.desc
				}
				return x.Doc < y.Doc
			}
			want := map[int64]records.ClusterRecord{}
			kept := map[int64]int64{}
			clusters := readOutput[records.ClusterRecord](t, out, job.ClustersFile)
			for _, c := range clusters {
				if w, ok := want[c.Cluster]; !ok || better(c, w) {
					want[c.Cluster] = c
				}
				if c.Keep {
					if k, ok := kept[c.Cluster]; ok {
						t.Fatalf("cluster %d keeps %d and %d", c.Cluster, k, c.Doc)
					}
					kept[c.Cluster] = c.Doc
				}
			}
			ranked := 0
			for c, w := range want {
				if kept[c] != w.Doc {
					t.Errorf("cluster %d keeps %d, want %d (%s)", c, kept[c], w.Doc, show(tc.value[w.URL]))
				}
				if kept[c] != c {
					ranked++ // not the first document (a cluster's id is its smallest ordinal)
				}
			}
			t.Logf("%d clusters, %d keeping another than their first document", len(want), ranked)
			if len(want) < 50 || ranked < len(want)/4 {
				t.Fatalf("%d clusters, %d of them keeping another than their first document: the corpus tests little", len(want), ranked)
			}
			for _, d := range readOutput[records.Duplicate](t, out, job.DuplicatesFile) {
				if d.KeptDoc != kept[d.Cluster] || d.KeptURL != want[d.Cluster].URL {
					t.Errorf("duplicate %s names %d (%s), its cluster keeps %d", d.ID, d.KeptDoc, d.KeptURL, kept[d.Cluster])
				}
			}
		})
	}
}

func show(v *float64) string {
	if v == nil {
		return "no value"
	}
	return fmt.Sprint(*v)
}
