package stages

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/internal/corpus"
	"github.com/neardup/neardup/internal/dataroot"
	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/index"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/kept"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/rates"
	refmodel "github.com/neardup/neardup/internal/reference"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
	"github.com/neardup/neardup/pkg/shingle"
)

// sitesPages is the pages of the corpus of sites of TestParagraphPass
// and TestParagraphStrip: -sites-pages 100000 checks them on the corpus
// of the figures (about two minutes a subtest).
var sitesPages = flag.Int("sites-pages", 600, "pages of the corpus of sites of TestParagraphPass and TestParagraphStrip")

// paraJob is a job of the paragraph pass run in this process.
type paraJob struct {
	st   *storage.Dir
	man  *manifest.Manifest
	rows []records.Paragraph
	ids  map[string]int64 // ordinal by document id
	// rates are the job end's rates (rates.Tally), with the paragraph
	// pass's repeated bytes by document.
	rates *manifest.Rates
	// table is the unit table the pass wrote for the index (nil: none).
	table *index.UnitTable
}

// sitesCorpus writes a corpus of site pages as JSONL files under dir.
func sitesCorpus(t *testing.T, dir string, cfg corpus.SitesConfig) (*corpus.Sites, []string) {
	t.Helper()
	src, w, err := corpus.WriteSites(cfg, corpus.WriteOptions{Dir: dir, Format: corpus.FormatJSONL, Files: 3})
	if err != nil {
		t.Fatal(err)
	}
	return src, w.Files
}

// runParagraphs runs a whole job with --paragraphs over files in this
// process, its output in out.
func runParagraphs(t *testing.T, files []string, out string, p job.Params, keepWork bool) *paraJob {
	t.Helper()
	return runParagraphsKept(t, files, out, p, keepWork, nil, nil)
}

// runParagraphsKept is runParagraphs of a job that writes the kept
// corpus ko (--write-kept), nil for none, its stages run by wrap's
// executor around the local one (nil: the local one).
func runParagraphsKept(t *testing.T, files []string, out string, p job.Params, keepWork bool, ko *job.KeptOutput, wrap func(stage.Executor) stage.Executor) *paraJob {
	t.Helper()
	ctx := context.Background()
	st, err := storage.NewDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Resolve(); err != nil {
		t.Fatal(err)
	}
	spec := &job.Spec{Job: "sites", Epoch: "test", Out: st.Root(), Params: p, Kept: ko}
	var keptDir *storage.Dir
	if ko != nil {
		if keptDir, err = kept.Claim(ctx, ko.Dir, kept.Marker{Job: st.Root(), Epoch: spec.Epoch}, false); err != nil {
			t.Fatal(err)
		}
	}
	inputs, _, err := job.ExpandInputs(ctx, files, job.InputOptions{})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := job.MakePlan(ctx, inputs, p.ChunkBytes)
	if err != nil {
		t.Fatal(err)
	}
	if err := storage.WriteJSON(ctx, st, job.PlanFile, &plan, true); err != nil {
		t.Fatal(err)
	}
	j := &stage.Job{Spec: spec, Plan: &plan, Out: st, FS: st, Manifest: &manifest.Manifest{}, Log: slog.New(slog.DiscardHandler), KeepWork: keepWork}
	env := &stage.Env{Spec: spec, FS: st, Cache: &stage.Files{St: st}, Inputs: anyPath{}}
	if keptDir != nil {
		j.Kept, env.Kept = keptDir, keptDir
	}
	var ex stage.Executor = Local{Env: env}
	if wrap != nil {
		ex = wrap(ex)
	}
	if err := stage.Drive(ctx, j, Of(spec), ex); err != nil {
		t.Fatal(err)
	}
	r := &paraJob{st: st, man: j.Manifest, ids: map[string]int64{}, table: j.UnitTable}
	names, err := st.List(ctx, job.ParagraphsDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		r.rows = append(r.rows, readAll[records.Paragraph](t, st, fileinfo.Info{Name: name})...)
	}
	var chunks []rates.Chunk
	for _, m := range j.Mapped.Own {
		chunks = append(chunks, rates.Chunk{Index: m.Chunk, Facts: m.RatesFile})
		for _, d := range readAll[records.DocRecord](t, st, m.DocFile) {
			r.ids[d.ID] = d.Doc
		}
	}
	if p.Paragraphs {
		if r.rates, err = rates.Tally(ctx, st, chunks, nil, j.UnitDocFiles); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// refOccurrence is an occurrence of a unit, as the reference finds it.
type refOccurrence struct {
	id             string
	index          int
	offset, length int
}

// refUnits cuts text into units the simple way (refmodel.Units): their
// occurrences and normalised texts.
func refUnits(text, unit string, o shingle.Options) (occ []refOccurrence, norms []string) {
	for _, u := range refmodel.Units(text, unit, o) {
		occ = append(occ, refOccurrence{index: u.Index, offset: u.Offset, length: u.Length})
		norms = append(norms, u.Norm)
	}
	return occ, norms
}

// refUnit is a unit the reference found in two documents or more.
type refUnit struct {
	norm string
	docs map[string]bool
	occ  []refOccurrence
}

// refReference finds, by one pass over every page held in memory, the
// units held by two documents or more.
func refReference(src *corpus.Sites, unit string, o shingle.Options) map[string]*refUnit {
	all := map[string]*refUnit{}
	for i := range src.Len() {
		d := src.Doc(i)
		occ, norms := refUnits(d.Text, unit, o)
		for k, n := range norms {
			u := all[n]
			if u == nil {
				u = &refUnit{norm: n, docs: map[string]bool{}}
				all[n] = u
			}
			occ[k].id = d.ID
			u.docs[d.ID] = true
			u.occ = append(u.occ, occ[k])
		}
	}
	for n, u := range all {
		if len(u.docs) < 2 {
			delete(all, n)
		}
	}
	return all
}

// TestParagraphPass runs the paragraph pass over a corpus of site pages
// and checks paragraphs/ against a reference pass in memory: every unit
// held by two pages or more, with every occurrence (its page, index,
// offset and length), its count of pages and its first page; the site
// lines planted in every page of a site, each with the site's page count;
// the manifest's counts; and, with a small --max-bucket, the rows listed
// of the units held by more pages.
func TestParagraphPass(t *testing.T) {
	dir := t.TempDir()
	cfg := corpus.SitesConfig{N: *sitesPages, Seed: 3, Sites: max(7, *sitesPages/100), Mirrored: 5, MirrorEvery: 3}
	src, files := sitesCorpus(t, filepath.Join(dir, "in"), cfg)
	for _, unit := range []string{"line", "paragraph"} {
		for _, maxBucket := range []int{job.DefaultMaxBucket, 30} {
			t.Run(fmt.Sprintf("%s/max-bucket=%d", unit, maxBucket), func(t *testing.T) {
				p := job.DefaultParams()
				p.Paragraphs, p.ParagraphUnit, p.Partitions, p.ChunkBytes, p.MaxBucket = true, unit, 5, 64<<10, maxBucket
				p.DigitsToZero = true
				r := runParagraphs(t, files, filepath.Join(dir, fmt.Sprintf("out-%s-%d", unit, maxBucket)), p, false)
				ref := refReference(src, unit, p.ShingleOptions())
				checkParagraphs(t, r, ref, maxBucket)
				checkRepeatedByHost(t, r, ref, src)
				checkPlanted(t, r, src, cfg, unit)
			})
		}
	}
}

// checkRepeatedByHost compares the bytes in repeated units of the job's
// rates, overall and by host (every site's, the hosts fitting the
// tally), with the reference's: every occurrence of a unit held by two
// pages or more, those --max-bucket leaves out of paragraphs/ too.
func checkRepeatedByHost(t *testing.T, r *paraJob, ref map[string]*refUnit, src *corpus.Sites) {
	t.Helper()
	host := map[string]string{} // by document id
	for i := range src.Len() {
		host[corpus.ID(i)] = rates.Host(src.URL(i))
	}
	want, total := map[string]int64{}, int64(0)
	for _, u := range ref {
		for _, o := range u.occ {
			want[host[o.id]] += int64(o.length)
			total += int64(o.length)
		}
	}
	if !r.rates.Repeated || r.rates.Total.RepeatedBytes != total || total == 0 {
		t.Errorf("rates: repeated %v, %d repeated bytes in all; the reference %d", r.rates.Repeated, r.rates.Total.RepeatedBytes, total)
	}
	for _, h := range r.rates.Hosts {
		if h.Name != manifest.OtherHosts && h.RepeatedBytes != want[h.Name] {
			t.Errorf("host %s: %d repeated bytes, the reference %d", h.Name, h.RepeatedBytes, want[h.Name])
		}
	}
}

// checkParagraphs compares a job's paragraphs/ and manifest with the
// reference's units.
func checkParagraphs(t *testing.T, r *paraJob, ref map[string]*refUnit, maxBucket int) {
	t.Helper()
	type key struct {
		id    string
		index int
	}
	got := map[key]records.Paragraph{}
	for _, row := range r.rows {
		k := key{row.ID, int(row.UnitIndex)}
		if _, dup := got[k]; dup {
			t.Fatalf("unit %d of %s listed twice", k.index, k.id)
		}
		if r.ids[row.ID] != row.Doc {
			t.Fatalf("row %+v: document %s has ordinal %d", row, row.ID, r.ids[row.ID])
		}
		got[k] = row
	}
	var occurrences, bounded, notListed, listed, bytes, extra int64
	for _, u := range ref {
		occurrences += int64(len(u.occ))
		firstID := ""
		for id := range u.docs {
			if firstID == "" || r.ids[id] < r.ids[firstID] {
				firstID = id
			}
		}
		if len(u.docs) > maxBucket {
			bounded++
		}
		// The occurrences of the first max-bucket documents are listed.
		order := slices.SortedFunc(func(yield func(string) bool) {
			for id := range u.docs {
				if !yield(id) {
					return
				}
			}
		}, func(a, b string) int { return cmp.Compare(r.ids[a], r.ids[b]) })
		rank := map[string]int{}
		for i, id := range order {
			rank[id] = i
		}
		for _, o := range u.occ {
			bytes += int64(o.length)
			if o.id != firstID {
				extra += int64(o.length)
			}
			row, ok := got[key{o.id, o.index}]
			if rank[o.id] >= maxBucket {
				notListed++
				if ok {
					t.Errorf("unit %q: occurrence in %s listed, beyond --max-bucket %d documents", u.norm, o.id, maxBucket)
				}
				continue
			}
			listed++
			want := records.Paragraph{UnitHash: int64(xxhash.Sum64String(u.norm)), Doc: r.ids[o.id], UnitIndex: int32(o.index), ID: o.id,
				ByteOffset: int64(o.offset), ByteLength: int32(o.length), Holders: int64(len(u.docs)), FirstDoc: r.ids[firstID], FirstJob: "sites"}
			if !ok {
				t.Errorf("unit %q (%d documents): occurrence %d of %s not listed", u.norm, len(u.docs), o.index, o.id)
			} else if row != want {
				t.Errorf("unit %q:\n got %+v\nwant %+v", u.norm, row, want)
			}
		}
	}
	if int64(len(r.rows)) != listed {
		t.Errorf("paragraphs/ has %d rows, the reference %d", len(r.rows), listed)
	}
	m := r.man.Paragraphs
	if m == nil {
		t.Fatal("the manifest has no paragraphs")
	}
	if m.Repeated != int64(len(ref)) || m.Occurrences != occurrences || m.RepeatedBytes != bytes || m.ExtraBytes != extra ||
		m.Bounded != bounded || m.RowsNotListed != notListed {
		t.Errorf("manifest: repeated %d, occurrences %d, bytes %d, extra %d, bounded %d, not listed %d; the reference: %d, %d, %d, %d, %d, %d",
			m.Repeated, m.Occurrences, m.RepeatedBytes, m.ExtraBytes, m.Bounded, m.RowsNotListed, len(ref), occurrences, bytes, extra, bounded, notListed)
	}
	if len(m.Top) != min(20, len(ref)) {
		t.Fatalf("manifest: %d top units of %d repeated", len(m.Top), len(ref))
	}
	for i, u := range m.Top {
		if i > 0 && u.Docs > m.Top[i-1].Docs {
			t.Errorf("top unit %d holds more documents (%d) than the one before it (%d)", i, u.Docs, m.Top[i-1].Docs)
		}
		if u.Sample == "" {
			t.Errorf("top unit %d (%d documents) has no sample", i, u.Docs)
		}
	}
}

// checkPlanted checks that every site's header, menu and footer lines
// (the lines of its header block and its footer, as paragraphs) are
// listed with the number of the site's pages.
func checkPlanted(t *testing.T, r *paraJob, src *corpus.Sites, cfg corpus.SitesConfig, unit string) {
	t.Helper()
	holders := map[string]int64{} // by the text of a unit's occurrence in a site's first page
	for _, row := range r.rows {
		page := src.Text(pageOf(t, row.ID))
		holders[page[row.ByteOffset:row.ByteOffset+int64(row.ByteLength)]] = row.Holders
	}
	for site := range cfg.Sites {
		pages := int64((cfg.N - site + cfg.Sites - 1) / cfg.Sites)
		text := src.Text(site)
		blocks := strings.Split(strings.TrimSuffix(text, "\n"), "\n\n")
		planted := append(strings.Split(blocks[0], "\n"), blocks[len(blocks)-1])
		if unit == "paragraph" {
			planted = []string{blocks[0], blocks[len(blocks)-1]}
		}
		for _, u := range planted {
			if n := holders[u]; n != pages {
				t.Errorf("site %d: unit %q listed in %d pages, want %d", site, u, n, pages)
			}
		}
	}
}

// pageOf is the position of the page of an id (corpus.ID).
func pageOf(t *testing.T, id string) int {
	t.Helper()
	i, err := strconv.Atoi(strings.TrimPrefix(id, "doc-"))
	if err != nil || corpus.ID(i) != id {
		t.Fatalf("id %q is not page %d's", id, i)
	}
	return i
}

// smallSites writes a corpus of n site pages of 4 sites under dir/in,
// and returns its files and the parameters of a paragraph pass over them
// in several chunks and tasks.
func smallSites(t *testing.T, dir string, n int) ([]string, job.Params) {
	t.Helper()
	_, files := sitesCorpus(t, filepath.Join(dir, "in"), corpus.SitesConfig{N: n, Seed: 5, Sites: 4, Mirrored: 3, MirrorEvery: 2})
	p := job.DefaultParams()
	p.Paragraphs, p.Partitions, p.ChunkBytes = true, 3, 32<<10
	return files, p
}

// TestParagraphPassRerun checks that the paragraph pass writes the same
// bytes whatever runs it: a job run twice, and a task run again over its
// own output (a worker that died after writing), give identical
// paragraphs/ files.
func TestParagraphPassRerun(t *testing.T) {
	dir := t.TempDir()
	files, p := smallSites(t, dir, 300)
	a := runParagraphs(t, files, filepath.Join(dir, "a"), p, true)
	b := runParagraphs(t, files, filepath.Join(dir, "b"), p, false)
	ctx := context.Background()
	names, err := a.st.List(ctx, job.ParagraphsDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 2 {
		t.Fatalf("paragraphs/ has %d files, want one per task (2 or more)", len(names))
	}
	read := func(st storage.Opener, name string) []byte {
		data, err := storage.ReadFile(ctx, st, name)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	before := map[string][]byte{}
	for _, name := range names {
		before[name] = read(a.st, name)
		if !bytes.Equal(before[name], read(b.st, name)) {
			t.Errorf("%s differs between two runs of the job", name)
		}
	}
	// Every task run again, over the unit runs it read (the work area
	// kept), as a worker would after another died writing.
	spec := &job.Spec{Job: "sites", Epoch: "test", Out: a.st.Root(), Params: p}
	if err := spec.Params.Resolve(); err != nil {
		t.Fatal(err)
	}
	ex := Local{Env: &stage.Env{Spec: spec, FS: a.st, Cache: &stage.Files{St: a.st}}}
	if _, err := ex.Execute(ctx, mustLookup(t, "paragraphs"), stage.Seq(len(names))); err != nil {
		t.Fatalf("the tasks run again: %v", err)
	}
	for _, name := range names {
		if !bytes.Equal(before[name], read(a.st, name)) {
			t.Errorf("%s changed when its task ran again", name)
		}
	}
	if a.man.Paragraphs.Repeated == 0 {
		t.Error("the corpus has no repeated unit")
	}
}

// TestParagraphResultsOfEarlierVersion runs the paragraph pass with its
// tasks' results in the shape of a worker before unit tables (no table,
// no shape), as a coordinator resuming a job an earlier version began
// finds them: the job describes no unit table for its index and warns,
// where the same job with this version's results describes one of every
// task's file.
func TestParagraphResultsOfEarlierVersion(t *testing.T) {
	dir := t.TempDir()
	files, p := smallSites(t, dir, 200)
	now := runParagraphs(t, files, filepath.Join(dir, "now"), p, false)
	if now.table == nil || len(now.table.Files) < 2 || now.table.Units != now.man.Paragraphs.Distinct || now.man.Paragraphs.IndexUnits != now.table.Units {
		t.Fatalf("this version's results: table %+v, manifest %+v: want a file a task, the job's distinct units", now.table, now.man.Paragraphs)
	}
	old := runParagraphsKept(t, files, filepath.Join(dir, "old"), p, false, nil, func(ex stage.Executor) stage.Executor { return oldParagraphs{ex} })
	if old.table != nil || old.man.Paragraphs.IndexUnits != 0 {
		t.Errorf("results of an earlier version: table %+v, %d index units: want none", old.table, old.man.Paragraphs.IndexUnits)
	}
	if old.rates.Repeated || !now.rates.Repeated {
		t.Errorf("repeated bytes by host: counted %v from an earlier version's results, %v from this one's; want false, true", old.rates.Repeated, now.rates.Repeated)
	}
	if !slices.ContainsFunc(old.man.Warnings, func(w string) bool { return strings.Contains(w, "run by an earlier version") }) {
		t.Errorf("no warning of the earlier version's results: %q", old.man.Warnings)
	}
}

// oldParagraphs is an executor whose paragraphs tasks' results are in
// the shape of a worker before unit tables: without table nor shape.
type oldParagraphs struct{ ex stage.Executor }

func (o oldParagraphs) Clear(ctx context.Context, s stage.Stage) error { return o.ex.Clear(ctx, s) }

func (o oldParagraphs) Execute(ctx context.Context, s stage.Stage, indices []int) (*stage.Outcome, error) {
	out, err := o.ex.Execute(ctx, s, indices)
	if err != nil || s.Name != "paragraphs" {
		return out, err
	}
	results := stage.ResultMap{}
	for _, i := range out.Done {
		data, err := out.Results.Result(ctx, i)
		if err != nil {
			return nil, err
		}
		var r map[string]any
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, err
		}
		for _, k := range []string{"table", "table_units", "earlier_held", "shape", "doc_bytes"} {
			delete(r, k)
		}
		if results[i], err = json.Marshal(r); err != nil {
			return nil, err
		}
	}
	out.Results = results
	return out, nil
}

// mustLookup is the stage of a name.
func mustLookup(t *testing.T, name string) stage.Stage {
	t.Helper()
	s, ok := Lookup(name)
	if !ok {
		t.Fatalf("no stage %s", name)
	}
	return s
}

// TestParagraphStrip checks the corpus stripped of repeated units
// (coordinator write-kept --strip-paragraphs) against a reference: every
// kept page's text without the units held by at least min-count pages
// (but in the first page holding each, with keep-first), a page left
// shorter than --min-kept-chars dropped and listed with its reason, the
// job's duplicates dropped.
func TestParagraphStrip(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	src, files := sitesCorpus(t, in, corpus.SitesConfig{N: *sitesPages, Seed: 7, Sites: max(5, *sitesPages/100), Mirrored: 4, MirrorEvery: 3})
	p := job.DefaultParams()
	p.Paragraphs, p.Partitions, p.ChunkBytes = true, 3, 64<<10
	out := filepath.Join(dir, "job")
	r := runParagraphs(t, files, out, p, false)
	finishJob(t, r, files, p)
	dups := map[int64]bool{}
	for _, d := range readAll[records.Duplicate](t, r.st, fileinfo.Info{Name: job.DuplicatesFile}) {
		dups[d.Doc] = true
	}
	roots, err := dataroot.Resolve([]string{in})
	if err != nil {
		t.Fatal(err)
	}
	for _, keepFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("keep-first=%v", keepFirst), func(t *testing.T) {
			strip := &job.Strip{MinCount: 3, KeepFirst: keepFirst, MinKeptChars: 300}
			keptDir := filepath.Join(dir, fmt.Sprintf("kept-%v", keepFirst))
			sum, err := kept.Write(ctx, kept.Options{Job: out, Dir: keptDir, Format: kept.FormatJSONL, Roots: []kept.Roots{roots}, Strip: strip})
			if err != nil {
				t.Fatal(err)
			}
			got := readKeptJSONL(t, keptDir)
			short := map[string]string{}
			names, _ := filepath.Glob(filepath.Join(keptDir, kept.ShortDir, "*.parquet"))
			kd, err := storage.NewDir(keptDir)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range names {
				rel, _ := filepath.Rel(keptDir, name)
				for _, s := range readAll[kept.ShortDoc](t, kd, fileinfo.Info{Name: rel}) {
					short[s.ID] = s.Reason
				}
			}
			ref := refReference(src, "line", p.ShingleOptions())
			var wantKept, wantShort int
			for i := range src.Len() {
				d := src.Doc(i)
				if dups[r.ids[d.ID]] {
					if _, ok := got[d.ID]; ok {
						t.Errorf("duplicate %s kept", d.ID)
					}
					continue
				}
				want := refStrip(d, ref, r.ids, strip)
				if n := utf8.RuneCountInString(strings.TrimSpace(want)); n < strip.MinKeptChars {
					wantShort++
					if _, ok := got[d.ID]; ok || !strings.Contains(short[d.ID], "--min-kept-chars 300") {
						t.Errorf("%s: %d characters left: kept %v, listed short %q", d.ID, n, ok, short[d.ID])
					}
					continue
				}
				wantKept++
				if got[d.ID] != want {
					t.Errorf("%s stripped:\n got %q\nwant %q", d.ID, got[d.ID], want)
				}
			}
			if len(got) != wantKept || len(short) != wantShort || sum.Kept != int64(wantKept) || sum.Short != int64(wantShort) {
				t.Errorf("kept %d (summary %d), short %d (summary %d); the reference: %d, %d", len(got), sum.Kept, len(short), sum.Short, wantKept, wantShort)
			}
			if wantShort == 0 || sum.Stripped == 0 {
				t.Errorf("the test strips nothing or drops no page: %d short, %d units stripped", wantShort, sum.Stripped)
			}
			// The job's write-kept stage (--write-kept) writes the same
			// files, byte for byte.
			stageDir := filepath.Join(dir, fmt.Sprintf("job-kept-%v", keepFirst))
			runParagraphsKept(t, files, filepath.Join(dir, fmt.Sprintf("job2-%v", keepFirst)), p, false,
				&job.KeptOutput{Dir: stageDir, Format: kept.FormatJSONL, Strip: strip}, nil)
			for _, pattern := range []string{"*.jsonl.gz", kept.ShortDir + "/*.parquet"} {
				a, _ := filepath.Glob(filepath.Join(keptDir, pattern))
				b, _ := filepath.Glob(filepath.Join(stageDir, pattern))
				if len(a) != len(b) {
					t.Fatalf("%s: write-kept wrote %d files, the job's stage %d", pattern, len(a), len(b))
				}
				for i := range a {
					x, _ := os.ReadFile(a[i])
					y, _ := os.ReadFile(b[i])
					if filepath.Base(a[i]) != filepath.Base(b[i]) || !bytes.Equal(x, y) {
						t.Errorf("%s: the job's stage wrote %s otherwise", filepath.Base(a[i]), filepath.Base(b[i]))
					}
				}
			}
		})
	}
}

// refStrip is a page's text without its units held by at least
// s.MinCount pages (but in the first of them, with s.KeepFirst), each with
// the line break after it.
func refStrip(d corpus.Doc, ref map[string]*refUnit, ids map[string]int64, s *job.Strip) string {
	return refmodel.Strip(d.Text, "line", shingle.Options{}, func(u refmodel.Unit) bool {
		r := ref[u.Norm]
		if r == nil || len(r.docs) < s.MinCount {
			return false
		}
		first := ""
		for id := range r.docs {
			if first == "" || ids[id] < ids[first] {
				first = id
			}
		}
		return !s.KeepFirst || first != d.ID
	})
}

// finishJob writes what the coordinator writes at a job's end that
// write-kept reads: the manifest and _SUCCESS.
func finishJob(t *testing.T, r *paraJob, files []string, p job.Params) {
	t.Helper()
	ctx := context.Background()
	if err := p.Resolve(); err != nil {
		t.Fatal(err)
	}
	inputs, _, err := job.ExpandInputs(ctx, files, job.InputOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.man.Status, r.man.Params, r.man.Inputs = manifest.StatusComplete, p, inputs
	if err := manifest.Write(ctx, r.st, r.man); err != nil {
		t.Fatal(err)
	}
	if err := storage.WriteFile(ctx, r.st, job.SuccessFile, nil); err != nil {
		t.Fatal(err)
	}
}

// readKeptJSONL reads a corpus of .jsonl.gz files: each document's text
// by id. A corpus of no document has no file.
func readKeptJSONL(t *testing.T, dir string) map[string]string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{}
	for _, name := range names {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(zr)
		for dec.More() {
			var d corpus.Doc
			if err := dec.Decode(&d); err != nil {
				t.Fatal(err)
			}
			docs[d.ID] = d.Text
		}
		f.Close()
	}
	return docs
}
