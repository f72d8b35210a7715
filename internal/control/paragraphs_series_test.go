package control

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/corpus"
	"github.com/neardup/neardup/internal/dataroot"
	"github.com/neardup/neardup/internal/index"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/kept"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/reference"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
	"github.com/neardup/neardup/pkg/shingle"
)

// sitesWeeks writes a corpus of site pages as weeks JSONL files, a
// contiguous range of pages each, every one in a directory of its own
// under dir: a site's pages, and so its header, menu and footer lines,
// are in every week.
func sitesWeeks(t *testing.T, dir string, cfg corpus.SitesConfig, weeks int) (*corpus.Sites, []string) {
	t.Helper()
	src, w, err := corpus.WriteSites(cfg, corpus.WriteOptions{Dir: dir, Format: corpus.FormatJSONL, Files: weeks})
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for i, f := range w.Files {
		d := filepath.Join(dir, fmt.Sprintf("week%d", i+1))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(f, filepath.Join(d, filepath.Base(f))); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	return src, dirs
}

// seriesRef is the reference of a series' units: every page of its
// weeks so far cut by reference.Units, each unit's pages counted in
// memory.
type seriesRef struct {
	unit  string
	o     shingle.Options
	pages map[string]int64           // ordinal by page id, of every week
	jobs  map[string]string          // week by page id
	docs  map[string]map[string]bool // page ids by normalised unit
	first map[string]string          // the first page holding a unit
}

func newSeriesRef(unit string, o shingle.Options) *seriesRef {
	return &seriesRef{unit: unit, o: o, pages: map[string]int64{}, jobs: map[string]string{},
		docs: map[string]map[string]bool{}, first: map[string]string{}}
}

// add counts the units of the pages of a week's job, its output out,
// with their ordinals read from its docs/.
func (r *seriesRef) add(t *testing.T, src *corpus.Sites, name, out string) {
	t.Helper()
	for _, d := range readDataset[records.DocRecord](t, out, "docs") {
		r.pages[d.ID], r.jobs[d.ID] = d.Doc, name
		for _, u := range reference.Units(src.Text(pageOf(t, d.ID)), r.unit, r.o) {
			if r.docs[u.Norm] == nil {
				r.docs[u.Norm] = map[string]bool{}
			}
			r.docs[u.Norm][d.ID] = true
			if f, ok := r.first[u.Norm]; !ok || r.pages[d.ID] < r.pages[f] {
				r.first[u.Norm] = d.ID
			}
		}
	}
}

// pageOf is the position of the page of an id (corpus.ID).
func pageOf(t *testing.T, id string) int {
	t.Helper()
	var i int
	if _, err := fmt.Sscanf(id, "doc-%d", &i); err != nil || corpus.ID(i) != id {
		t.Fatalf("id %q is not a page's", id)
	}
	return i
}

// check compares the output out of the series' latest job, name, with
// the reference of every week so far: each row of paragraphs/ (an
// occurrence in a page of the job of a unit two pages of the weeks hold,
// with their count, the first of them and its week), the index's unit
// table (every unit of the weeks, its count and first page) and the
// manifest's counts.
func (r *seriesRef) check(t *testing.T, src *corpus.Sites, name, out string, earlier []string) {
	t.Helper()
	type key struct {
		doc   int64
		index int32
	}
	want := map[key]records.Paragraph{}
	own := map[string]bool{} // the job's distinct units
	var repeated, held int64
	for id, ord := range r.pages {
		if r.jobs[id] != name {
			continue
		}
		for _, u := range reference.Units(src.Text(pageOf(t, id)), r.unit, r.o) {
			n := int64(len(r.docs[u.Norm]))
			if !own[u.Norm] {
				own[u.Norm] = true
				if n >= 2 {
					repeated++
				}
				if r.jobs[r.first[u.Norm]] != name {
					held++
				}
			}
			if n < 2 {
				continue
			}
			first := r.first[u.Norm]
			want[key{ord, int32(u.Index)}] = records.Paragraph{UnitHash: int64(xxhash.Sum64String(u.Norm)), Doc: ord, UnitIndex: int32(u.Index), ID: id,
				ByteOffset: int64(u.Offset), ByteLength: int32(u.Length), Holders: n, FirstDoc: r.pages[first], FirstJob: r.jobs[first]}
		}
	}
	rows := readDataset[records.Paragraph](t, out, job.ParagraphsDir)
	if len(rows) != len(want) {
		t.Errorf("%s: paragraphs/ has %d rows, the reference %d", name, len(rows), len(want))
	}
	bad := 0
	for _, row := range rows {
		if w := want[key{row.Doc, row.UnitIndex}]; row != w && bad < 10 {
			bad++
			t.Errorf("%s: paragraphs/ row\n got %+v\nwant %+v", name, row, w)
		}
	}

	ix := readIndex(t, out)
	if ix.Units == nil {
		t.Fatalf("%s: the index has no unit table", name)
	}
	var jobs []string
	for _, a := range ix.Units.Jobs {
		jobs = append(jobs, a.Job)
	}
	if w := append(slices.Clone(earlier), name); !slices.Equal(jobs, w) {
		t.Errorf("%s: the unit table counts jobs %v, want %v", name, jobs, w)
	}
	table := map[int64]records.Unit{}
	for _, u := range unitTable(t, out) {
		table[u.UnitHash] = u
	}
	if int64(len(table)) != ix.Units.Units || len(table) != len(r.docs) {
		t.Errorf("%s: the unit table has %d units (index.json: %d), the reference %d", name, len(table), ix.Units.Units, len(r.docs))
	}
	bad = 0
	for norm, docs := range r.docs {
		h := int64(xxhash.Sum64String(norm))
		u, ok := table[h]
		if (!ok || u.Holders != int64(len(docs)) || u.FirstDoc != r.pages[r.first[norm]]) && bad < 10 {
			bad++
			t.Errorf("%s: unit %q: the table's row %+v (found %v), want %d pages, the first %d", name, norm, u, ok, len(docs), r.pages[r.first[norm]])
		}
	}

	m := readManifest(t, out).Paragraphs
	if m == nil || m.Repeated != repeated || m.Distinct != int64(len(own)) || m.IndexUnits != int64(len(r.docs)) {
		t.Fatalf("%s: manifest %+v: want %d distinct, %d repeated, %d in the index", name, m, len(own), repeated, len(r.docs))
	}
	if len(earlier) > 0 {
		if e := m.Earlier; e == nil || !slices.Equal(e.Counted, earlier) || len(e.NotCounted) != 0 || e.Held != held {
			t.Errorf("%s: manifest's earlier units %+v: want %v counted, none not counted, %d held", name, e, earlier, held)
		}
	}
}

// readManifest reads the manifest of the output out.
func readManifest(t *testing.T, out string) *manifest.Manifest {
	t.Helper()
	d, err := storage.NewDir(out)
	if err == nil {
		var m *manifest.Manifest
		if m, err = manifest.Read(context.Background(), d); err == nil {
			return m
		}
	}
	t.Fatal(err)
	return nil
}

// TestParagraphSeries runs the paragraph pass over a series of three
// weeks of site pages (each week against the ones before it, as
// `coordinator series` runs them) and checks each week's paragraphs/,
// unit table and manifest against a reference computed over every page of
// the weeks so far: a unit's holders are the pages of all weeks, its
// first page and first_job the earliest week's, and a unit held by one
// page this week and one a week before is listed. The third week run
// against the first two weeks' compacted index writes the same rows and
// table. Week 2's kept corpus stripped of the units held by 3 pages or
// more (keep-first) is the reference's: a unit an earlier week held first
// is stripped from every page of week 2. Week 2 run again writes
// paragraphs/ and its unit table byte for byte. A week matched against
// an index without a unit table counts its own pages alone, and its
// manifest says so.
func TestParagraphSeries(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfgCorpus := corpus.SitesConfig{N: 900, Seed: 11, Sites: 6, Mirrored: 5, MirrorEvery: 3}
	src, weeks := sitesWeeks(t, filepath.Join(dir, "in"), cfgCorpus, 3)
	base := filepath.Join(dir, "out")
	run := func(name, in string, paragraphs bool, against ...string) string {
		t.Helper()
		out := filepath.Join(base, name)
		cfg := testConfig(t, in, out, 2)
		cfg.Job, cfg.Against = name, against
		cfg.Params.Paragraphs = paragraphs
		if _, err := Run(ctx, cfg); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return out
	}
	p := job.DefaultParams()
	ref := newSeriesRef("line", p.ShingleOptions())

	week1 := run("week1", weeks[0], true)
	ref.add(t, src, "week1", week1)
	ref.check(t, src, "week1", week1, nil)
	week2 := run("week2", weeks[1], true, week1)
	ref.add(t, src, "week2", week2)
	ref.check(t, src, "week2", week2, []string{"week1"})
	stripWeek2 := refStripped(t, src, ref, week2, 3)

	compacted := filepath.Join(base, "weeks-1-2")
	if _, err := CompactIndexes(ctx, CompactConfig{Out: compacted, Indexes: []string{week1, week2}, Job: "weeks-1-2"}); err != nil {
		t.Fatal(err)
	}
	// Week 2's table counts weeks 1 and 2: the compacted index's is the
	// same rows.
	if a, b := unitTable(t, week2), unitTable(t, compacted); !slices.Equal(a, b) || len(a) == 0 {
		t.Errorf("the compacted index's unit table has %d rows, week 2's %d, or other rows", len(b), len(a))
	}
	week3 := run("week3", weeks[2], true, week1, week2)
	ref.add(t, src, "week3", week3)
	ref.check(t, src, "week3", week3, []string{"week1", "week2"})
	viaCompacted := run("week3-compacted", weeks[2], true, compacted)
	a, b := readDataset[records.Paragraph](t, week3, job.ParagraphsDir), readDataset[records.Paragraph](t, viaCompacted, job.ParagraphsDir)
	for i := range b {
		if b[i].FirstJob == "week3-compacted" { // the job's own name
			b[i].FirstJob = "week3"
		}
	}
	if !slices.Equal(a, b) {
		t.Errorf("week 3 against the compacted index: %d rows of paragraphs/, against weeks 1 and 2 %d, or other rows", len(b), len(a))
	}
	if m := readManifest(t, viaCompacted).Paragraphs; m.Earlier == nil || !slices.Equal(m.Earlier.Counted, []string{"week1", "week2"}) || len(m.Earlier.NotCounted) != 0 {
		t.Errorf("week 3 against the compacted index: earlier units %+v", m.Earlier)
	}
	t.Run("strip", func(t *testing.T) {
		got := keptTexts(t, week2, weeks[1], 3)
		if len(got) != len(stripWeek2) {
			t.Errorf("week 2's kept corpus has %d pages, the reference %d", len(got), len(stripWeek2))
		}
		for id, want := range stripWeek2 {
			if got[id] != want {
				t.Errorf("%s stripped:\n got %q\nwant %q", id, got[id], want)
			}
		}
	})

	t.Run("rerun", func(t *testing.T) {
		// Week 2 again, into another output, with one worker: the same
		// job name, so the same first_job and unit table.
		rerun := filepath.Join(base, "rerun")
		cfg := testConfig(t, weeks[1], rerun, 1)
		cfg.Job, cfg.Against = "week2", []string{week1}
		cfg.Params.Paragraphs = true
		if _, err := Run(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{job.ParagraphsDir, job.UnitTableDir} {
			a, _ := filepath.Glob(filepath.Join(week2, d, "*.parquet"))
			b, _ := filepath.Glob(filepath.Join(rerun, d, "*.parquet"))
			if len(a) == 0 || len(a) != len(b) {
				t.Fatalf("%s: %d files, the rerun %d", d, len(a), len(b))
			}
			for i := range a {
				x, _ := os.ReadFile(a[i])
				y, _ := os.ReadFile(b[i])
				if filepath.Base(a[i]) != filepath.Base(b[i]) || !bytes.Equal(x, y) {
					t.Errorf("%s differs from the rerun's %s", a[i], b[i])
				}
			}
		}
	})

	t.Run("no-unit-table", func(t *testing.T) {
		plain := run("plain1", weeks[0], false)
		out := run("week2-plain", weeks[1], true, plain)
		alone := newSeriesRef("line", p.ShingleOptions())
		alone.add(t, src, "week2-plain", out)
		m := readManifest(t, out)
		if e := m.Paragraphs.Earlier; e == nil || len(e.Counted) != 0 || len(e.NotCounted) != 1 || e.NotCounted[0].Job != "plain1" ||
			!strings.Contains(e.NotCounted[0].Reason, "no unit table") {
			t.Fatalf("the manifest's earlier units %+v: want plain1 not counted, its index having no unit table", e)
		}
		if !slices.ContainsFunc(m.Warnings, func(w string) bool { return strings.Contains(w, "did not count the units of earlier job plain1") }) {
			t.Errorf("no warning of the units not counted: %q", m.Warnings)
		}
		// Its counts are of its own pages alone; its table counts itself.
		alone.check(t, src, "week2-plain", out, nil)
	})
}

// refStripped is the reference's kept corpus of a week's job (out): the
// text of each page it kept without the units held by minCount pages or
// more of the weeks so far, but in the first page holding each. It fails
// the test when no page loses a unit that an earlier week held first.
func refStripped(t *testing.T, src *corpus.Sites, r *seriesRef, out string, minCount int) map[string]string {
	t.Helper()
	dropped := map[string]bool{}
	for _, d := range readOutput[records.Duplicate](t, out, job.DuplicatesFile) {
		dropped[d.ID] = true
	}
	texts := map[string]string{}
	earlierFirst := 0
	for _, d := range readDataset[records.DocRecord](t, out, "docs") {
		if dropped[d.ID] {
			continue
		}
		texts[d.ID] = reference.Strip(src.Text(pageOf(t, d.ID)), "line", r.o, func(u reference.Unit) bool {
			first := r.first[u.Norm]
			strip := len(r.docs[u.Norm]) >= minCount && first != d.ID
			if strip && r.jobs[first] != r.jobs[d.ID] {
				earlierFirst++
			}
			return strip
		})
	}
	if earlierFirst == 0 {
		t.Fatal("no page loses a unit an earlier week held first: the test strips nothing of what it is for")
	}
	return texts
}

// keptTexts writes the kept corpus of the job out, its input in, stripped
// of the units held by minCount documents or more (coordinator write-kept
// --strip-paragraphs min-count=N), and returns each page's text by id.
func keptTexts(t *testing.T, out, in string, minCount int) map[string]string {
	t.Helper()
	roots, err := dataroot.Resolve([]string{in})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "kept")
	_, err = kept.Write(context.Background(), kept.Options{Job: out, Dir: dir, Format: kept.FormatParquet, Roots: []kept.Roots{roots},
		Strip: &job.Strip{MinCount: minCount, KeepFirst: true}})
	if err != nil {
		t.Fatal(err)
	}
	type doc struct {
		ID   string `parquet:"id"`
		Text string `parquet:"text"`
	}
	texts := map[string]string{}
	files, _ := filepath.Glob(filepath.Join(dir, "*.parquet"))
	for _, f := range files {
		rows, err := parquet.ReadFile[doc](f)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range rows {
			texts[d.ID] = d.Text
		}
	}
	return texts
}

// readIndex reads the index of the output out.
func readIndex(t *testing.T, out string) *index.Index {
	t.Helper()
	var ix index.Index
	data, err := os.ReadFile(filepath.Join(out, job.IndexFile))
	if err == nil {
		err = json.Unmarshal(data, &ix)
	}
	if err != nil {
		t.Fatal(err)
	}
	return &ix
}

// unitTable reads the rows of the unit table of the index at out.
func unitTable(t *testing.T, out string) []records.Unit {
	t.Helper()
	ix := readIndex(t, out)
	if ix.Units == nil {
		t.Fatalf("%s: the index has no unit table", out)
	}
	var rows []records.Unit
	for _, f := range ix.Units.Files {
		rows = append(rows, readOutput[records.Unit](t, out, f.File.Name)...)
	}
	return rows
}
