package control

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/pkg/records"
)

// publishedWeeks writes the three weekly inputs of TestSeriesPublished:
// documents of 300 words, each a copy of another with 4 words changed
// (Jaccard 0.87 of their 5-word shingles: a pair at the default
// threshold 0.8) or a copy of a copy (8 words: 0.76, no pair), and
// unrelated ones.
//
//	week 1: Z; Y, a copy of Z; Z2 and Y2, identical; fillers
//	week 2: V, a copy of Z (not of Y); fillers
//	week 3: X, a copy of Y only; X2, identical to Z2 and Y2; X3, a copy
//	        of V only; fillers
func publishedWeeks(t *testing.T, dir string) []string {
	t.Helper()
	rng := rand.New(rand.NewPCG(34, 48))
	word := func() string {
		b := make([]byte, 4+rng.IntN(6))
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
		}
		return string(b)
	}
	text := func() []string {
		w := make([]string, 300)
		for i := range w {
			w[i] = word()
		}
		return w
	}
	edit := func(w []string, at ...int) []string {
		w = append([]string(nil), w...)
		for _, i := range at {
			w[i] = word() + "x"
		}
		return w
	}
	z := text()
	y := edit(z, 40, 80, 120, 160)
	x := edit(y, 60, 100, 140, 180)
	v := edit(z, 50, 90, 130, 170)
	x3 := edit(v, 200, 220, 240, 260)
	z2 := text()
	weeks := [][][2]any{
		{{"Z", z}, {"Y", y}, {"Z2", z2}, {"Y2", z2}},
		{{"V", v}},
		{{"X", x}, {"X2", z2}, {"X3", x3}},
	}
	var files []string
	for w, docs := range weeks {
		var b strings.Builder
		for i := range 5 {
			docs = append(docs, [2]any{fmt.Sprintf("filler-%d-%d", w+1, i), text()})
		}
		for _, d := range docs {
			line, _ := json.Marshal(map[string]string{"id": d[0].(string), "url": "https://example.com/" + d[0].(string),
				"text": strings.Join(d[1].([]string), " ")})
			b.Write(append(line, '\n'))
		}
		f := filepath.Join(dir, fmt.Sprintf("week%d.jsonl", w+1))
		if err := os.WriteFile(f, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// TestSeriesPublished runs three weeks, the third against the first two
// (its cluster stage in one task, and in its distributed steps) and,
// again, against their compacted index, and checks that published
// means published: a document an earlier week dropped is never kept, nor
// named as the kept document.
//
//   - Week 1 drops Y (a copy of Z) and Y2 (identical to Z2); week 2
//     drops V (a copy of Z) naming Z of week 1.
//   - Week 3 drops X, a copy of Y only, naming Z, which week 1 kept in
//     Y's place (Y is in X's cluster, not kept); X2 naming Z2; X3, a copy
//     of V only, naming Z of week 1 (as week 2's dropped list records).
//   - clusters.parquet names each earlier document's week in job (null
//     for the week's own), and duplicates.parquet the kept document's
//     url and week; pairs/ marks the pairs against Y, Y2 and V as
//     against unpublished documents (a_published false), the others
//     true, and names each earlier document's own week in a_job, also
//     through the compacted index.
func TestSeriesPublished(t *testing.T) {
	files := publishedWeeks(t, t.TempDir())
	base := t.TempDir()
	run := func(name, input string, against ...string) string {
		t.Helper()
		out := filepath.Join(base, name)
		cfg := testConfig(t, input, out, 2)
		cfg.Against = against
		cfg.Job = name
		if strings.HasSuffix(name, "-distributed") {
			cfg.wholeClusterBytes = -1 // the cluster stage's steps, not one task
		}
		if _, err := Run(t.Context(), cfg); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return out
	}
	week1 := run("week1", files[0])
	week2 := run("week2", files[1], week1)
	compacted := filepath.Join(base, "compacted")
	if _, err := CompactIndexes(t.Context(), CompactConfig{Out: compacted, Indexes: []string{week1, week2}, Job: "weeks-1-2"}); err != nil {
		t.Fatal(err)
	}
	dups := func(out string) map[string]string { // id -> kept id, url, job
		m := map[string]string{}
		for _, d := range readOutput[records.Duplicate](t, out, job.DuplicatesFile) {
			m[d.ID] = fmt.Sprintf("%s %s %s", d.KeptID, d.KeptURL, deref(d.KeptJob))
		}
		return m
	}
	check := func(what string, got map[string]string, want map[string]string) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s:\n got %v\nwant %v", what, got, want)
		}
	}
	url := func(id string) string { return "https://example.com/" + id }
	check("week 1's duplicates", dups(week1), map[string]string{"Y": "Z " + url("Z") + " ", "Y2": "Z2 " + url("Z2") + " "})
	check("week 2's duplicates", dups(week2), map[string]string{"V": "Z " + url("Z") + " week1"})

	for _, tc := range []struct {
		name    string
		against []string
	}{
		{"week3", []string{week1, week2}},
		{"week3-distributed", []string{week1, week2}},
		{"week3-compacted", []string{compacted}},
	} {
		out := run(tc.name, files[2], tc.against...)
		check(tc.name+"'s duplicates", dups(out), map[string]string{
			"X": "Z " + url("Z") + " week1", "X2": "Z2 " + url("Z2") + " week1", "X3": "Z " + url("Z") + " week1"})
		clusters := map[string]string{}
		for _, c := range readOutput[records.ClusterRecord](t, out, job.ClustersFile) {
			clusters[c.ID] = fmt.Sprintf("keep=%v %s %s", c.Keep, c.URL, deref(c.Job))
		}
		check(tc.name+"'s clusters", clusters, map[string]string{
			"Y": "keep=false " + url("Y") + " week1", "X": "keep=false " + url("X") + " ",
			"Z2": "keep=true " + url("Z2") + " week1", "Y2": "keep=false " + url("Y2") + " week1", "X2": "keep=false " + url("X2") + " ",
			"V": "keep=false " + url("V") + " week2", "X3": "keep=false " + url("X3") + " ",
		})
		pairs := map[string]string{}
		for _, p := range readPairs(t, out) {
			pub := "null"
			if p.APublished != nil {
				pub = fmt.Sprint(*p.APublished)
			}
			pairs[p.AID+"-"+p.BID] = deref(p.AJob) + " published=" + pub
		}
		check(tc.name+"'s pairs", pairs, map[string]string{
			"Y-X": "week1 published=false", "Z2-X2": "week1 published=true", "Y2-X2": "week1 published=false", "V-X3": "week2 published=false",
		})
	}
}
