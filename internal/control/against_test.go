package control

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/corpus"
	"github.com/neardup/neardup/internal/dataroot"
	"github.com/neardup/neardup/internal/index"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/reference"
	"github.com/neardup/neardup/internal/report"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/bands"
	"github.com/neardup/neardup/pkg/records"
	"github.com/parquet-go/parquet-go"
)

// TestAgainst runs a job on the first half of a generated corpus (with the
// accuracy length mix: many short documents), a second job on the other
// half with --against the first, and one job over the whole corpus, and
// checks the second job against brute-force exact Jaccard:
//
//   - it lists exactly the pairs the whole job lists of the second half's
//     documents (with each other and with the first half's), each with its
//     exact similarity, and no pair below the threshold or inside the first
//     half;
//   - the true pairs at J >= threshold + 0.05 it misses are within the
//     S-curve's tolerance (each is found with probability 1-(1-J^r)^b,
//     0.994 at 0.85 by default);
//   - a pair with an earlier document names that job and output, and the
//     earlier document's id and url;
//   - no document of the first half is in duplicates.parquet;
//   - gather on gives the same bytes, and --keep longest keeps the
//     longest earlier document of a cluster that the first job kept,
//     never dropping one, nor keeping one the first job dropped;
//   - the two runs keep what the whole job keeps, except documents of the
//     first half that only the second half's documents joined into one
//     cluster (earlier documents are never dropped): each such document is
//     shown to be in a cluster of the second run with the document the
//     whole job kept instead.
func TestAgainst(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 1200
	}
	pool, err := corpus.BundledPool()
	if err != nil {
		t.Fatal(err)
	}
	g, err := corpus.New(pool, corpus.AccuracyConfig(n, 11))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	w, err := corpus.Write(g, corpus.WriteOptions{Dir: dir, Format: corpus.Format("jsonl"), Files: 2})
	if err != nil {
		t.Fatal(err)
	}
	half := n / 2 // corpus.Write splits the documents in order

	ctx := context.Background()
	base := t.TempDir()
	run := func(name string, inputs []string, against ...string) (string, *Manifest) {
		out := filepath.Join(base, name)
		cfg := testConfig(t, "", out, 2)
		cfg.Inputs, cfg.Against = inputs, against
		cfg.Params.ChunkBytes = 128 << 10
		cfg.Params.Partitions = 0 // the second job takes the first's
		man, err := Run(ctx, cfg)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return out, man
	}
	out1, man1 := run("first", w.Files[:1])
	out2, man2 := run("second", w.Files[1:], out1)
	outAll, _ := run("whole", w.Files)
	if man1.Chunks < 2 || man2.FirstChunk != man1.Chunks || man2.Params.Partitions != man1.Params.Partitions {
		t.Fatalf("first job %d chunks, %d partitions; second job starts at chunk %d with %d partitions",
			man1.Chunks, man1.Params.Partitions, man2.FirstChunk, man2.Params.Partitions)
	}

	// Brute force over the whole corpus: every pair's exact Jaccard.
	p := man2.Params
	o := p.ShingleOptions()
	sets := make([][]uint64, n)
	byID := map[string]int{}
	for i := range n {
		sets[i] = reference.Set(g.Text(i), o)
		byID[g.Doc(i).ID] = i
	}
	type truePair struct {
		a, b int
		j    float64
	}
	var truth []truePair
	jaccard := map[[2]int]float64{}
	for a := range n {
		for b := a + 1; b < n; b++ {
			la, lb := len(sets[a]), len(sets[b])
			if float64(min(la, lb)) < p.Threshold*float64(max(la, lb)) {
				continue // J <= min/max < threshold
			}
			if j := reference.Jaccard(sets[a], sets[b]); j >= p.Threshold {
				truth = append(truth, truePair{a, b, j})
				jaccard[[2]int{a, b}] = j
			}
		}
	}
	idx := func(id string) int {
		i, ok := byID[id]
		if !ok {
			t.Fatalf("unknown id %q", id)
		}
		return i
	}
	listed := map[[2]int]bool{} // the second job's pairs
	var cross, own int
	for _, pr := range readPairs(t, out2) {
		a, b := idx(pr.AID), idx(pr.BID)
		if a >= half && b >= half {
			own++
		} else if a < half && b >= half {
			cross++
		} else {
			t.Fatalf("pair %s %s: not a pair of the second job's documents", pr.AID, pr.BID)
		}
		if j := jaccard[[2]int{a, b}]; pr.Similarity != j || j < p.Threshold {
			t.Fatalf("pair %s %s: similarity %v, exact %v", pr.AID, pr.BID, pr.Similarity, j)
		}
		earlier := a < half
		if earlier != (pr.AJob != nil) || earlier != (pr.AOut != nil) {
			t.Fatalf("pair %s %s: a_job %v a_out %v", pr.AID, pr.BID, pr.AJob, pr.AOut)
		}
		if earlier && (*pr.AJob != man1.Job || *pr.AOut != out1) {
			t.Fatalf("pair %s %s: a_job %s a_out %s, want %s %s", pr.AID, pr.BID, *pr.AJob, *pr.AOut, man1.Job, out1)
		}
		if pr.AURL != g.URL(a) || pr.BURL != g.URL(b) {
			t.Fatalf("pair %s %s: urls %q %q, want %q %q", pr.AID, pr.BID, pr.AURL, pr.BURL, g.URL(a), g.URL(b))
		}
		listed[[2]int{a, b}] = true
	}
	if man2.Counts.PairsAgainst != int64(cross) || man2.Counts.Pairs != int64(cross+own) {
		t.Fatalf("manifest counts %d pairs, %d against earlier jobs; pairs/ holds %d and %d", man2.Counts.Pairs, man2.Counts.PairsAgainst, cross+own, cross)
	}
	// What the whole job lists of the second half's documents, the second
	// job lists, the same: matching against an index loses nothing.
	for _, pr := range readPairs(t, outAll) {
		a, b := idx(pr.AID), idx(pr.BID)
		if b >= half && !listed[[2]int{a, b}] {
			t.Errorf("pair %s %s (J %.4f) listed by the whole job, not by the second", pr.AID, pr.BID, pr.Similarity)
		}
		if b >= half {
			delete(listed, [2]int{a, b})
		}
	}
	for ab := range listed {
		t.Errorf("pair %s %s listed by the second job, not by the whole job", g.Doc(ab[0]).ID, g.Doc(ab[1]).ID)
	}
	// Against the truth: each pair at J >= threshold + 0.05 is a candidate
	// with probability 1-(1-J^r)^b (0.994 at 0.85 by default), the same
	// in the whole job; the misses stay within 4 standard deviations of
	// their expected number.
	var wantCross, near, missed int
	var expect, variance float64
	found := map[[2]int]bool{}
	for _, pr := range readPairs(t, out2) {
		found[[2]int{idx(pr.AID), idx(pr.BID)}] = true
	}
	for _, tp := range truth {
		if tp.b < half {
			continue
		}
		if tp.a < half {
			wantCross++
		}
		if tp.j < p.Threshold+0.05 {
			continue
		}
		near++
		q := 1 - bands.Probability(tp.j, p.BandParams())
		expect += q
		variance += q * (1 - q)
		if !found[[2]int{tp.a, tp.b}] {
			missed++
		}
	}
	t.Logf("second job: %d pairs with the first job's documents (truth %d at J >= %.2f), %d among its own; at J >= %.2f: %d true pairs, %d missed (expected %.1f)",
		cross, wantCross, p.Threshold, own, p.Threshold+0.05, near, missed, expect)
	if float64(missed) > expect+4*math.Sqrt(variance)+1 {
		t.Errorf("%d pairs at J >= %.2f missed, expected %.1f ± %.1f", missed, p.Threshold+0.05, expect, math.Sqrt(variance))
	}
	if wantCross < 50 {
		t.Fatalf("only %d true pairs across the halves: the corpus does not test --against", wantCross)
	}

	// No earlier document is dropped.
	dups2 := readOutput[records.Duplicate](t, out2, job.DuplicatesFile)
	for _, d := range dups2 {
		if idx(d.ID) < half || man2.Earlier(d.Doc) {
			t.Fatalf("earlier document %s (%d) in the second job's duplicates", d.ID, d.Doc)
		}
	}

	// Kept: the two runs against the whole job.
	kept := func(out string, ids map[string]bool) {
		dropped := map[string]bool{}
		for _, d := range readOutput[records.Duplicate](t, out, job.DuplicatesFile) {
			dropped[d.ID] = true
		}
		for _, d := range readDataset[records.DocRecord](t, out, job.DocsDir) {
			if !dropped[d.ID] {
				ids[d.ID] = true
			}
		}
	}
	union, whole := map[string]bool{}, map[string]bool{}
	kept(out1, union)
	kept(out2, union)
	kept(outAll, whole)
	keptFor := map[string]string{}
	for _, d := range readOutput[records.Duplicate](t, outAll, job.DuplicatesFile) {
		keptFor[d.ID] = d.KeptID
	}
	clusterOf := map[string]int64{}
	for _, c := range readOutput[records.ClusterRecord](t, out2, job.ClustersFile) {
		clusterOf[c.ID] = c.Cluster
	}
	bridged := 0
	for id := range union {
		if whole[id] {
			continue
		}
		c, ok := clusterOf[id]
		if idx(id) >= half || !ok || clusterOf[keptFor[id]] != c {
			t.Errorf("%s is kept by the two runs but not by the whole job (which keeps %s), and no cluster of the second run joins them", id, keptFor[id])
		}
		bridged++
	}
	for id := range whole {
		if !union[id] {
			t.Errorf("%s is kept by the whole job but by neither run", id)
		}
	}
	t.Logf("kept: whole job %d, the two runs %d (%d earlier documents joined only through the second half's)", len(whole), len(union), bridged)

	// The report's example pairs read the earlier documents' texts from
	// the earlier job's inputs too.
	earlierExamples := 0
	for _, e := range man2.ExamplePairs {
		if man2.Earlier(e.A) {
			earlierExamples++
		}
	}
	page, err := os.ReadFile(filepath.Join(out2, report.PairsFile))
	if err != nil || earlierExamples == 0 || bytes.Contains(page, []byte("could not be read again")) {
		t.Fatalf("report-pairs.html: %d example pairs with an earlier document; %v; unreadable texts: %v",
			earlierExamples, err, bytes.Contains(page, []byte("could not be read again")))
	}

	// Through the gather stage (which reads the earlier signature files
	// too), the same bytes.
	gathered := filepath.Join(base, "gathered")
	cfg := testConfig(t, "", gathered, 2)
	cfg.Inputs, cfg.Against = w.Files[1:], []string{out1}
	cfg.Params.ChunkBytes, cfg.Params.Partitions, cfg.Params.Gather = 128<<10, 0, "on"
	if m, err := Run(ctx, cfg); err != nil || m.Counts.Gathered == 0 {
		t.Fatalf("gather on: %v", err)
	}
	sameFiles(t, out2, gathered, "pairs/*.parquet", "clusters.parquet", "duplicates.parquet", "exact.parquet")

	// With --keep longest, still no earlier document is dropped, the
	// earlier documents of a cluster are kept as the first job kept them,
	// and a cluster with earlier documents the first job kept keeps the
	// longest of those.
	longest := filepath.Join(base, "longest")
	cfg = testConfig(t, "", longest, 2)
	cfg.Inputs, cfg.Against = w.Files[1:], []string{out1}
	cfg.Params.ChunkBytes, cfg.Params.Partitions, cfg.Params.Keep = 128<<10, 0, "longest"
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	tokens := map[int64]int32{}
	for _, out := range []string{out1, longest} {
		for _, d := range readDataset[records.DocRecord](t, out, job.DocsDir) {
			tokens[d.Doc] = d.Tokens
		}
	}
	droppedBefore := map[int64]bool{}
	for _, d := range readOutput[records.Duplicate](t, out1, job.DuplicatesFile) {
		droppedBefore[d.Doc] = true
	}
	members := map[int64][]int64{}
	for _, c := range readOutput[records.ClusterRecord](t, longest, job.ClustersFile) {
		members[c.Cluster] = append(members[c.Cluster], c.Doc)
		if man2.Earlier(c.Doc) && c.Keep == droppedBefore[c.Doc] {
			t.Fatalf("--keep longest: earlier document %s kept %v, dropped by the first job %v", c.ID, c.Keep, droppedBefore[c.Doc])
		}
	}
	for _, d := range readOutput[records.Duplicate](t, longest, job.DuplicatesFile) {
		if man2.Earlier(d.Doc) {
			t.Fatalf("--keep longest: earlier document %s dropped", d.ID)
		}
		if droppedBefore[d.KeptDoc] {
			t.Fatalf("--keep longest: %s dropped for %d, which the first job dropped", d.ID, d.KeptDoc)
		}
		for _, m := range members[d.Cluster] {
			if man2.Earlier(m) && !droppedBefore[m] && (!man2.Earlier(d.KeptDoc) || tokens[m] > tokens[d.KeptDoc]) {
				t.Fatalf("--keep longest: %s dropped for %d (%d tokens), but its cluster holds earlier document %d (%d tokens)",
					d.ID, d.KeptDoc, tokens[d.KeptDoc], m, tokens[m])
			}
		}
	}

	// The index of the second job holds its own chunks only.
	st, err := storage.Open(ctx, out2)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ix, err := index.Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if ix.FirstChunk != man1.Chunks || ix.Docs != int64(n-half) || len(ix.Against) != 1 {
		t.Fatalf("second index: first chunk %d, %d docs, against %v", ix.FirstChunk, ix.Docs, ix.Against)
	}

	// Against the first job's index rewritten in the bands/ layout of
	// version 2 (a file per chunk and partition; its files of the new
	// layout removed), the same bytes.
	st1, err := storage.NewDir(out1)
	if err != nil {
		t.Fatal(err)
	}
	ix1, err := index.Load(ctx, st1)
	if err != nil {
		t.Fatal(err)
	}
	if err := index.WriteVersion2Bands(ctx, st1, ix1); err != nil {
		t.Fatal(err)
	}
	againstOld, _ := run("second-against-version-2", w.Files[1:], out1)
	sameFiles(t, out2, againstOld, "pairs/*.parquet", "clusters.parquet", "duplicates.parquet", "exact.parquet", "candidates/*.parquet")
}

// TestAgainstRefused checks that a job is refused, naming the parameter,
// when its signatures would not be comparable with the earlier index's,
// and when the earlier output has no index.
func TestAgainstRefused(t *testing.T) {
	in, _ := genCorpus(t, 200, 3, 1)
	ctx := context.Background()
	out1 := filepath.Join(t.TempDir(), "first")
	if _, err := Run(ctx, testConfig(t, in, out1, 1)); err != nil {
		t.Fatal(err)
	}
	noIndex := filepath.Join(t.TempDir(), "noindex")
	cfg := testConfig(t, in, noIndex, 1)
	cfg.Params.Index = false
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	estimate := filepath.Join(t.TempDir(), "estimate")
	cfg = testConfig(t, in, estimate, 1)
	cfg.Params.Verify = "estimate"
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	// An index made before the tokenizer was a parameter: layout version
	// 1, params without a tokenizer, made by the words-only rule.
	old := filepath.Join(t.TempDir(), "old")
	cfg = testConfig(t, in, old, 1)
	cfg.Params.Tokenizer = "words-only"
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	ixPath := filepath.Join(old, job.IndexFile)
	data, err := os.ReadFile(ixPath)
	if err != nil {
		t.Fatal(err)
	}
	stripped := regexp.MustCompile(`\s*"tokenizer": "words-only",`).ReplaceAll(data, nil)
	stripped = bytes.Replace(stripped, []byte(fmt.Sprintf(`"version": %d,`, index.Version)), []byte(`"version": 1,`), 1)
	if bytes.Equal(stripped, data) || !bytes.Contains(stripped, []byte(`"version": 1,`)) {
		t.Fatalf("%s names no tokenizer to remove", ixPath)
	}
	if err := os.WriteFile(ixPath, stripped, 0o644); err != nil {
		t.Fatal(err)
	}
	// An index made by a build of another document model: its texts
	// would be sketched differently here.
	otherModel := filepath.Join(t.TempDir(), "model")
	if err := os.CopyFS(otherModel, os.DirFS(out1)); err != nil {
		t.Fatal(err)
	}
	ixPath = filepath.Join(otherModel, job.IndexFile)
	if data, err = os.ReadFile(ixPath); err != nil {
		t.Fatal(err)
	}
	changed := regexp.MustCompile(`"model": "[0-9a-f]+"`).ReplaceAll(data, []byte(`"model": "00000000deadbeef"`))
	if bytes.Equal(changed, data) {
		t.Fatalf("%s records no model", ixPath)
	}
	if err := os.WriteFile(ixPath, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(noIndex, job.IndexDir)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("--index=false left %s: %v", job.IndexDir, err)
	}
	for _, tt := range []struct {
		name    string
		change  func(c *Config)
		against string
		want    string
	}{
		{"perms", func(c *Config) { c.Params.K = 64 }, out1, "--perms 128 (this job: 64)"},
		{"seed", func(c *Config) { c.Params.Seed = 9 }, out1, "--seed 1 (this job: 9)"},
		{"words", func(c *Config) { c.Params.Words = 3 }, out1, "--words 5 (this job: 3)"},
		{"sketch", func(c *Config) { c.Params.Sketch = "classic" }, out1, "--sketch dart (this job: classic)"},
		{"method", func(c *Config) { c.Params.Method = "simhash" }, out1, "--method minhash (this job: simhash)"},
		{"bands", func(c *Config) { c.Params.Bands, c.Params.Rows = 32, 4 }, out1, "--bands 16 (this job: 32), --rows 8 (this job: 4)"},
		{"partitions", func(c *Config) { c.Params.Partitions = 3 }, out1, "--partitions 8 (this job: 3)"},
		{"tokenizer", func(c *Config) { c.Params.Tokenizer = "words-only" }, out1, "--tokenizer scripts (this job: words-only)"},
		{"old index", func(c *Config) {}, old, "--tokenizer words-only (this job: scripts) (its text was cut into tokens by the words-only rule"},
		{"no index", func(c *Config) {}, noIndex, "index/index.json is missing"},
		{"model", func(c *Config) {}, otherModel, "another document model"},
		{"verify", func(c *Config) {}, estimate, "--verify estimate (this job: exact"},
		{"twice", func(c *Config) { c.Against = append(c.Against, out1) }, out1, "are the same job"},
		{"itself", func(c *Config) { c.Against = []string{c.Out} }, out1, "is the job's own --out"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "second")
			cfg := testConfig(t, in, out, 1)
			cfg.Against = []string{tt.against}
			tt.change(&cfg)
			_, err := Run(ctx, cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one saying %q", err, tt.want)
			}
			if entries, _ := filepath.Glob(filepath.Join(out, "*")); len(entries) > 0 {
				t.Fatalf("a refused job wrote %v", entries)
			}
		})
	}
}

// readOutput reads the rows of one output file.
func readOutput[T any](t testing.TB, out, name string) []T {
	t.Helper()
	rows, err := parquet.ReadFile[T](filepath.Join(out, name))
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestMountEarlier checks a worker's view of the earlier outputs: one
// under its data roots is read through its mount (and nothing is written
// there), one outside them is refused, naming it.
func TestMountEarlier(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	root, outside := filepath.Join(base, "data"), filepath.Join(base, "private")
	for _, d := range []string{filepath.Join(root, "out"), filepath.Join(root, "w1"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "w1", "x"), []byte("earlier"), 0o644); err != nil {
		t.Fatal(err)
	}
	roots, err := dataroot.Resolve([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	st, err := storage.Open(ctx, filepath.Join(root, "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, tt := range []struct {
		name string
		out  string
		want string // error, "" for none
	}{
		{"under a root", filepath.Join(root, "w1"), ""},
		{"outside the roots", outside, outside},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fsys, dirs, err := mountEarlier(ctx, st, []job.Against{{Job: "w1", Out: tt.out}}, roots)
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("error %v, want one naming %s", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer dirs[0].Close()
			data, err := storage.ReadFile(ctx, fsys, job.Mount(0)+"/x")
			if err != nil || string(data) != "earlier" {
				t.Fatalf("read through the mount: %q, %v", data, err)
			}
			if err := storage.WriteFile(ctx, fsys, job.Mount(0)+"/y", nil); err == nil || !strings.Contains(err.Error(), "read-only") {
				t.Fatalf("writing through the mount: %v, want a read-only error", err)
			}
			if _, err := os.Stat(filepath.Join(root, "w1", "y")); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("a write through the view reached the earlier output: %v", err)
			}
		})
	}
}
