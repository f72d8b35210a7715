package stages

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/corpus"
	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// stripPairs is what a job found of the pages planted in a corpus of
// sites: the copies (same body, another site's template) paired with
// the page they copy, the pairs of two thin pages (one site's template
// around a few words of their own), and every pair.
type stripPairs struct {
	copies, copiesFound     int
	thinPairs, thinPossible int
	pairs                   [][2]int
}

// TestShingleAfterStrip runs a job over a corpus of sites whose pages
// include copies of another site's page's body and thin pages of one
// template, with and without --shingle-after-strip, over 1 and 3
// partitions. With it, every copy is paired with the page it copies, no
// two thin pages are paired, and no other pair is listed; pairs/ is the
// same bytes whatever the partitions. Without it, as measured here (a
// template of 24 lines, bodies of 2 to 20 sentences): no copy is paired
// with its page, and most pairs of thin pages of a site are listed.
func TestShingleAfterStrip(t *testing.T) {
	dir := t.TempDir()
	cfg := corpus.SitesConfig{N: max(600, *sitesPages), Seed: 11, Sites: max(6, *sitesPages/100), PairedLines: true, Mirrored: 5, MirrorEvery: 4, CopyEvery: 8, ThinEvery: 5, ThinWords: 3, MenuLines: 20}
	src, files := sitesCorpus(t, filepath.Join(dir, "in"), cfg)
	cases := []struct {
		name       string
		minCount   int
		partitions int
		// stripped: every copy paired with its page, no pair of thin
		// pages, and no other pair; else (the whole text) fewer than half
		// the copies paired and more than half the thin pairs.
		stripped bool
	}{
		{"whole text", 0, 1, false},
		{"stripped, 1 partition", 20, 1, true},
		{"stripped, 3 partitions", 20, 3, true},
	}
	listed := map[int][]byte{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := job.DefaultParams()
			p.ShingleAfterStrip, p.Partitions, p.ChunkBytes, p.Index = c.minCount, c.partitions, 32<<10, c.minCount == 0
			out := filepath.Join(dir, fmt.Sprintf("out-%d-%d", c.minCount, c.partitions))
			r := runParagraphs(t, files, out, p, false)
			got := plantedPairs(t, r, src)
			if ss := r.man.StripSet; (ss != nil) != (c.minCount != 0) || ss != nil && (ss.LeftOut == 0 || ss.LeftOut >= ss.Distinct || ss.MinCount != c.minCount) {
				t.Errorf("manifest's shingle_after_strip: %+v", ss)
			}
			t.Logf("%d copies, %d paired with their page; %d of %d pairs of thin pages; %d pairs in all", got.copies, got.copiesFound, got.thinPairs, got.thinPossible, len(got.pairs))
			if got.copies < 20 {
				t.Fatalf("the corpus has %d copies, want 20 or more", got.copies)
			}
			if c.stripped {
				if got.copiesFound != got.copies || got.thinPairs != 0 || len(got.pairs) != got.copies {
					t.Errorf("%d of %d copies paired with their page, %d pairs of thin pages, %d pairs in all: want every copy, no thin pair and no other pair",
						got.copiesFound, got.copies, got.thinPairs, len(got.pairs))
				}
			} else if 2*got.copiesFound >= got.copies || 2*got.thinPairs <= got.thinPossible {
				t.Errorf("without --shingle-after-strip, %d of %d copies and %d of %d thin pairs paired: the template was to keep most copies apart and pair most thin pages",
					got.copiesFound, got.copies, got.thinPairs, got.thinPossible)
			}
			if c.minCount != 0 {
				b := pairsBytes(t, r.st)
				if prev, ok := listed[c.minCount]; ok && string(prev) != string(b) {
					t.Error("pairs/ differs between 1 and 3 partitions")
				}
				listed[c.minCount] = b
			}
		})
	}
}

// plantedPairs reads the pairs of a finished job and counts the planted
// ones of src.
func plantedPairs(t *testing.T, r *paraJob, src *corpus.Sites) stripPairs {
	t.Helper()
	var got stripPairs
	thin := map[string]int{} // by site
	for i := range src.Len() {
		switch src.Kind(i) {
		case corpus.KindSiteCopy:
			got.copies++
		case corpus.KindSiteThin:
			site := src.Truth(i).Cluster
			got.thinPossible += thin[site]
			thin[site]++
		}
	}
	names, err := r.st.List(context.Background(), job.PairsDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		for _, p := range readAll[records.Pair](t, r.st, fileinfo.Info{Name: name}) {
			a, b := pageOf(t, p.AID), pageOf(t, p.BID)
			a, b = min(a, b), max(a, b)
			got.pairs = append(got.pairs, [2]int{a, b})
			switch {
			case src.Kind(b) == corpus.KindSiteCopy && a == b-1:
				got.copiesFound++
			case src.Kind(a) == corpus.KindSiteThin && src.Kind(b) == corpus.KindSiteThin:
				got.thinPairs++
			}
		}
	}
	slices.SortFunc(got.pairs, func(x, y [2]int) int { return x[0]*1_000_000 + x[1] - y[0]*1_000_000 - y[1] })
	return got
}

// pairsBytes is the bytes of pairs/, its files in name order.
func pairsBytes(t *testing.T, st *storage.Dir) []byte {
	t.Helper()
	ctx := context.Background()
	names, err := st.List(ctx, job.PairsDir)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	var all []byte
	for _, name := range names {
		b, err := storage.ReadFile(ctx, st, name)
		if err != nil {
			t.Fatal(err)
		}
		all = append(append(all, name...), b...)
	}
	return all
}

// TestShingleAfterStripRerun runs the tasks of strip-units and
// strip-count again over a finished job's work area, as workers would
// after others died writing: every file of _work/strip/ is the same
// bytes, and a job run again writes the same pairs/.
func TestShingleAfterStripRerun(t *testing.T) {
	dir := t.TempDir()
	_, files := sitesCorpus(t, filepath.Join(dir, "in"), corpus.SitesConfig{N: 300, Seed: 5, Sites: 4, Mirrored: 3, MirrorEvery: 2, CopyEvery: 6})
	p := job.DefaultParams()
	p.ShingleAfterStrip, p.Index, p.Partitions, p.ChunkBytes = 10, false, 3, 32<<10
	a := runParagraphs(t, files, filepath.Join(dir, "a"), p, true)
	b := runParagraphs(t, files, filepath.Join(dir, "b"), p, false)
	if string(pairsBytes(t, a.st)) != string(pairsBytes(t, b.st)) {
		t.Error("pairs/ differs between two runs of the job")
	}
	ctx := context.Background()
	names, err := a.st.List(ctx, job.StripDir)
	if err != nil {
		t.Fatal(err)
	}
	before := map[string]string{}
	var hashFiles, chunks int
	for _, name := range names {
		data, err := storage.ReadFile(ctx, a.st, name)
		if err != nil {
			t.Fatal(err)
		}
		before[name] = string(data)
		switch filepath.Ext(name) {
		case ".hashes":
			hashFiles++
		case ".units":
			chunks++
		}
	}
	if hashFiles < 2 || chunks < 2 {
		t.Fatalf("_work/strip/ holds %d hash files and %d unit run files, want 2 or more of each: %v", hashFiles, chunks, names)
	}
	spec := &job.Spec{Job: "sites", Epoch: "test", Out: a.st.Root(), Params: p}
	if err := spec.Params.Resolve(); err != nil {
		t.Fatal(err)
	}
	ex := Local{Env: &stage.Env{Spec: spec, FS: a.st, Cache: &stage.Files{St: a.st}, Inputs: anyPath{}}}
	plan, err := ex.Env.Cache.Plan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var chunkTasks []int
	for _, c := range plan.Chunks {
		chunkTasks = append(chunkTasks, c.Index)
	}
	if _, err := ex.Execute(ctx, mustLookup(t, "strip-units"), chunkTasks); err != nil {
		t.Fatalf("the strip-units tasks run again: %v", err)
	}
	if _, err := ex.Execute(ctx, mustLookup(t, "strip-count"), stage.Seq(hashFiles)); err != nil {
		t.Fatalf("the strip-count tasks run again: %v", err)
	}
	for name, data := range before {
		got, err := storage.ReadFile(ctx, a.st, name)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != data {
			t.Errorf("%s changed when its task ran again", name)
		}
	}
}
