package query

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/control"
	"github.com/neardup/neardup/internal/corpus"
	"github.com/neardup/neardup/internal/index"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/queue"
	"github.com/neardup/neardup/internal/reference"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/bands"
)

// fixture is a finished job over a generated corpus, with the texts of
// its documents by id.
type fixture struct {
	out   string
	p     job.Params
	ids   []string
	texts map[string]string
}

// runJob runs a job (embedded NATS, 2 in-process workers) over the first
// n documents of a generated corpus of seed and returns its output.
func runJob(t testing.TB, n int, seed uint64, set func(*job.Params)) fixture {
	t.Helper()
	g, w, err := corpus.WriteDefault(t.TempDir(), n, seed, 2)
	if err != nil {
		t.Fatal(err)
	}
	p := job.DefaultParams()
	p.ChunkBytes = 256 << 10 // several chunks
	p.Partitions = 8
	set(&p)
	qc := queue.DefaultConfig()
	qc.AckWait = 5 * time.Second
	out := filepath.Join(t.TempDir(), "out")
	man, err := control.Run(context.Background(), control.Config{Out: out, Inputs: w.Files, Params: p, Workers: 2, Queue: qc})
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{out: out, p: man.Params, texts: map[string]string{}}
	for i := range g.Len() {
		d := g.Doc(i)
		f.ids = append(f.ids, d.ID)
		f.texts[d.ID] = d.Text
	}
	return f
}

// nearCopy replaces about rate of the words of text with made-up ones.
func nearCopy(r *rand.Rand, text string, rate float64) string {
	words := strings.Fields(text)
	edits := int(math.Round(rate * float64(len(words))))
	for range edits {
		words[r.IntN(len(words))] = fmt.Sprintf("qzx%dv", r.IntN(1_000_000))
	}
	return strings.Join(words, " ")
}

// truePair is a queried document and an indexed one at exact similarity
// j >= the threshold.
type truePair struct {
	q  int
	id string
	j  float64
}

// TestQuery builds an index over a generated corpus, queries near-copies
// of 300 of its documents (edited at rates from 0 to 3% of their words,
// so their similarity to their source spans the threshold) and 20
// unrelated texts, and checks the results against brute-force exact
// Jaccard over every indexed document:
//
//   - every returned match is at or above the threshold and carries the
//     exact similarity of the two texts (reference.Jaccard with the
//     index's shingle options);
//   - every true pair at J >= threshold + 0.05 is returned (in
//     particular each near-copy's source);
//   - true pairs in [threshold, threshold + 0.05) are missed no more than
//     the S-curve allows: each is found with probability
//     bands.Probability(J), so the misses stay within 4 standard
//     deviations of their expected count;
//   - the results are the same whatever the batch size (1, 7, all) and
//     with band tables cached or not.
func TestQuery(t *testing.T) {
	f := runJob(t, 1500, 3, func(*job.Params) {})
	p := f.p
	ctx := context.Background()

	r := rand.New(rand.NewPCG(3, 7))
	var docs []Doc
	for i := range 300 {
		src := f.ids[r.IntN(len(f.ids))]
		docs = append(docs, Doc{ID: fmt.Sprintf("near-%d-of-%s", i, src), Text: []byte(nearCopy(r, f.texts[src], 0.03*r.Float64()))})
	}
	for i := range 20 {
		var words []string
		for range 200 {
			words = append(words, fmt.Sprintf("w%d", r.IntN(5000)))
		}
		docs = append(docs, Doc{ID: fmt.Sprintf("unrelated-%d", i), Text: []byte(strings.Join(words, " "))})
	}

	// Brute force: every (query, indexed document) pair at J >= threshold.
	o := p.ShingleOptions()
	sets := map[string][]uint64{}
	for _, id := range f.ids {
		sets[id] = reference.Set(f.texts[id], o)
	}
	exact := func(q int, id string) float64 {
		return reference.Jaccard(reference.Set(string(docs[q].Text), o), sets[id])
	}
	var truth []truePair
	for q, d := range docs {
		qs := reference.Set(string(d.Text), o)
		for _, id := range f.ids {
			if j := reference.Jaccard(qs, sets[id]); j >= p.Threshold {
				truth = append(truth, truePair{q: q, id: id, j: j})
			}
		}
	}

	s, err := Open(ctx, []string{f.out}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	query := func(s *Searcher, batch int) []Result {
		var all []Result
		for start := 0; start < len(docs); start += batch {
			res, _, err := s.Query(ctx, docs[start:min(start+batch, len(docs))])
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, res...)
		}
		return all
	}
	res := query(s, len(docs))

	found := map[[2]string]float64{}
	for q, rr := range res {
		if rr.ID != docs[q].ID {
			t.Fatalf("result %d is of %q, want %q", q, rr.ID, docs[q].ID)
		}
		for i, m := range rr.Matches {
			if m.Similarity < p.Threshold {
				t.Errorf("%s: match %s at %.4f, below the threshold %.2f", rr.ID, m.ID, m.Similarity, p.Threshold)
			}
			if want := exact(q, m.ID); math.Abs(m.Similarity-want) > 1e-12 || m.Method != "exact" {
				t.Errorf("%s: match %s at %v (%s), exact similarity %v", rr.ID, m.ID, m.Similarity, m.Method, want)
			}
			if m.Index != f.out || m.Job == "" || m.URL == "" {
				t.Errorf("%s: match %+v: want index %s, its job and the document's url", rr.ID, m, f.out)
			}
			if i > 0 && m.Similarity > rr.Matches[i-1].Similarity {
				t.Errorf("%s: matches not sorted by similarity: %v", rr.ID, rr.Matches)
			}
			found[[2]string{rr.ID, m.ID}] = m.Similarity
		}
	}
	var near, sources, missed int
	var expect, variance float64
	for _, tp := range truth {
		_, ok := found[[2]string{docs[tp.q].ID, tp.id}]
		if strings.HasSuffix(docs[tp.q].ID, "-of-"+tp.id) {
			sources++
		}
		if tp.j >= p.Threshold+0.05 {
			near++
			if !ok {
				t.Errorf("%s: %s at J = %.4f not found", docs[tp.q].ID, tp.id, tp.j)
			}
			continue
		}
		q := 1 - bands.Probability(tp.j, p.BandParams())
		expect += q
		variance += q * (1 - q)
		if !ok {
			missed++
		}
	}
	t.Logf("%d true pairs at J >= %.2f (%d of them sources), %d at J >= %.2f; %d matches returned; below %.2f: %d missed, expected %.1f",
		len(truth), p.Threshold, sources, near, p.Threshold+0.05, len(found), p.Threshold+0.05, missed, expect)
	if float64(missed) > expect+4*math.Sqrt(variance)+1 {
		t.Errorf("%d pairs in [%.2f, %.2f) missed, expected %.1f ± %.1f", missed, p.Threshold, p.Threshold+0.05, expect, math.Sqrt(variance))
	}
	if sources < 200 || near < 200 {
		t.Fatalf("only %d near-copies at J >= %.2f of their source (%d pairs at J >= %.2f): the test tests little",
			sources, p.Threshold, near, p.Threshold+0.05)
	}

	// Batches, and the band tables cached (a cache of 64 KiB holds a few
	// of this index's files: evictions).
	for _, cache := range []int64{0, 64 << 10, 64 << 20} {
		s, err := Open(ctx, []string{f.out}, Options{CacheBytes: cache})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for _, batch := range []int{1, 7, len(docs)} {
			if cache == 0 && batch == len(docs) {
				continue // res
			}
			if got := query(s, batch); !reflect.DeepEqual(got, res) {
				t.Errorf("cache of %d bytes, batches of %d: results differ from one batch of %d without a cache", cache, batch, len(docs))
			}
		}
	}
}

// TestQueryIndexes queries two indexes at once, one of them verified by
// estimates (no shingle sets), with a threshold of its own; and checks
// the errors for a job without an index and an index missing a file.
func TestQueryIndexes(t *testing.T) {
	ctx := context.Background()
	exact := runJob(t, 300, 5, func(*job.Params) {})
	est := runJob(t, 300, 5, func(p *job.Params) { p.Verify = "estimate" })
	docs := []Doc{{ID: "a", Text: []byte(exact.texts[exact.ids[10]])}, {ID: "b", Text: []byte("nothing like it at all")}}

	s, err := Open(ctx, []string{exact.out, est.out}, Options{Threshold: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	res, st, err := s.Query(ctx, docs)
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	// The same corpus in both: document 10 in each, first in the first.
	var got []string
	for _, m := range res[0].Matches {
		if m.Similarity < 0.9 {
			t.Errorf("match %+v below --threshold 0.9", m)
		}
		if m.ID == exact.ids[10] {
			got = append(got, fmt.Sprintf("%s %s %.2f", filepath.Base(filepath.Dir(m.Index)), m.Method, m.Similarity))
		}
		if m.Index == est.out && (m.Method != "minhash" || m.Similarity != m.Estimate) {
			t.Errorf("estimate index: match %+v, want the MinHash estimate", m)
		}
	}
	want := []string{
		filepath.Base(filepath.Dir(exact.out)) + " exact 1.00",
		filepath.Base(filepath.Dir(est.out)) + " minhash 1.00",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("document 10 found as %q, want %q", got, want)
	}
	if len(res[1].Matches) != 0 || res[1].Matches == nil {
		t.Errorf("unrelated text: matches %v, want an empty list", res[1].Matches)
	}
	if st.Docs != 2 || st.Partitions == 0 || st.Partitions > 2*exact.p.Partitions || st.BandBytes == 0 {
		t.Errorf("stats %+v", st)
	}

	t.Run("tokenizer", func(t *testing.T) {
		// exact was made with --tokenizer scripts (the default), old with
		// words-only.
		old := runJob(t, 50, 8, func(p *job.Params) { p.Tokenizer = "words-only" })
		for _, tc := range []struct {
			indexes   []string
			tokenizer job.Tokenizer
			want      string
		}{
			{[]string{exact.out}, "", ""},
			{[]string{exact.out}, "scripts", ""},
			{[]string{exact.out}, "words-only", "was made with --tokenizer scripts, not words-only"},
			{[]string{old.out}, "", ""},
			{[]string{old.out}, "scripts", "was made with --tokenizer words-only, not scripts"},
			{[]string{exact.out, old.out}, "", "their similarities are not comparable"},
		} {
			s, err := Open(ctx, tc.indexes, Options{Tokenizer: tc.tokenizer})
			if err == nil {
				s.Close()
			}
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("indexes %v, --tokenizer %q: got %v, want %q", tc.indexes, tc.tokenizer, err, tc.want)
			}
		}
	})
	t.Run("index=false", func(t *testing.T) {
		none := runJob(t, 50, 6, func(p *job.Params) { p.Index = false })
		_, err := Open(ctx, []string{exact.out, none.out}, Options{})
		if err == nil || !strings.Contains(err.Error(), none.out) || !strings.Contains(err.Error(), "--index=false") {
			t.Errorf("got %v, want an error naming %s and --index=false", err, none.out)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		for _, name := range []string{job.TextFile(0), job.ReduceBandFile(0, 0)} {
			t.Run(name, func(t *testing.T) {
				f := runJob(t, 100, 7, func(p *job.Params) { p.Partitions = 1 })
				if err := os.Remove(filepath.Join(f.out, name)); err != nil {
					t.Fatal(err)
				}
				s, err := Open(ctx, []string{f.out}, Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				_, _, err = s.Query(ctx, []Doc{{ID: "x", Text: []byte(f.texts[f.ids[0]])}})
				if err == nil || !strings.Contains(err.Error(), name) {
					t.Errorf("got %v, want an error naming %s", err, name)
				}
			})
		}
	})
}

// TestQueryMethods queries an indexed document's own text in indexes of
// each method and verification: it finds itself at similarity 1, said by
// the method that measured it, and nothing the job would not pass.
func TestQueryMethods(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		method job.Method
		verify job.Verify
		want   string
	}{
		{"minhash", "estimate", "minhash"},
		{"simhash", "exact", "exact"},
		{"simhash", "estimate", "simhash"},
	}
	for _, tt := range tests {
		t.Run(tt.method.String()+"/"+tt.verify.String(), func(t *testing.T) {
			f := runJob(t, 200, 8, func(p *job.Params) { p.Method, p.Verify = tt.method, tt.verify })
			s, err := Open(ctx, []string{f.out}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			id := f.ids[5]
			res, _, err := s.Query(ctx, []Doc{{ID: "q", Text: []byte(f.texts[id])}})
			if err != nil {
				t.Fatal(err)
			}
			self := false
			for _, m := range res[0].Matches {
				self = self || m.ID == id && m.Similarity == 1 && m.Estimate == 1
				if m.Method != tt.want {
					t.Errorf("match %+v: method %q, want %q", m, m.Method, tt.want)
				}
				switch {
				case tt.want != "simhash" && m.Similarity < f.p.Threshold:
					t.Errorf("match %+v below the threshold %.2f", m, f.p.Threshold)
				case tt.want == "simhash" && m.Similarity < 1-float64(f.p.Hamming)/64:
					t.Errorf("match %+v beyond the Hamming bound %d", m, f.p.Hamming)
				}
			}
			if !self {
				t.Errorf("document %s not found at similarity 1: %+v", id, res[0].Matches)
			}
		})
	}
}

// TestQueryForgedIndex edits an index so that a band file of a partition,
// or a chunk's signature file, is named outside the job's output (by ".."
// and by an absolute path, its bytes copied there so that reading it
// would go unnoticed), and checks that a query fails naming the forged
// name as leaving its store.
func TestQueryForgedIndex(t *testing.T) {
	ctx := context.Background()
	f := runJob(t, 100, 7, func(p *job.Params) { p.Partitions = 1 })
	outside := filepath.Join(filepath.Dir(f.out), "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	// forge moves the file name names to outside under the name
	// ../outside/... or its absolute path, and returns the new name.
	forge := func(t *testing.T, name string, absolute bool) string {
		data, err := os.ReadFile(filepath.Join(f.out, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		copied := filepath.Join(outside, path.Base(name))
		if err := os.WriteFile(copied, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if absolute {
			return copied
		}
		return "../outside/" + path.Base(name)
	}
	// edit rewrites the JSON file name of the output with change.
	edit := func(t *testing.T, name string, v any, change func()) {
		p := filepath.Join(f.out, filepath.FromSlash(name))
		orig, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(orig, v); err != nil {
			t.Fatal(err)
		}
		change()
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.WriteFile(p, orig, 0o644) })
	}
	for _, tt := range []struct {
		name     string
		absolute bool
	}{
		{"band file", false},
		{"band file", true},
		{"signature file", false},
		{"signature file", true},
	} {
		t.Run(fmt.Sprintf("%s, absolute %v", tt.name, tt.absolute), func(t *testing.T) {
			var bad string
			if tt.name == "band file" {
				var ix index.Index
				edit(t, job.IndexFile, &ix, func() {
					for i := range ix.BandFiles {
						bad = forge(t, ix.BandFiles[i].File.Name, tt.absolute)
						ix.BandFiles[i].File.Name = bad
					}
				})
			} else {
				var ix index.Index
				edit(t, job.IndexFile, &ix, func() {
					bad = forge(t, ix.Chunks[0].SigFile.Name, tt.absolute)
					ix.Chunks[0].SigFile.Name = bad
				})
			}
			s, err := Open(ctx, []string{f.out}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			_, _, err = s.Query(ctx, []Doc{{ID: "x", Text: []byte(f.texts[f.ids[0]])}})
			if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "leaves its store") {
				t.Errorf("got %v, want an error naming %s as leaving its store", err, bad)
			}
		})
	}
}

// TestQueryLayouts checks that a query finds the same matches, with and
// without a cache, in an index whose bands/ is a file per reduce task and
// in the same index rewritten in the layout of version 2 (a file per
// chunk and partition, listed in index/parts/), its files of the new
// layout removed so that only the old layout can answer.
func TestQueryLayouts(t *testing.T) {
	ctx := context.Background()
	f := runJob(t, 300, 11, func(p *job.Params) {})
	r := rand.New(rand.NewPCG(3, 4))
	var docs []Doc
	for _, id := range f.ids[:60] {
		docs = append(docs, Doc{ID: id, Text: []byte(nearCopy(r, f.texts[id], 0.01))})
	}
	query := func(t *testing.T, cache int64) ([]Result, Stats) {
		s, err := Open(ctx, []string{f.out}, Options{CacheBytes: cache})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		res, st, err := s.Query(ctx, docs)
		if err != nil {
			t.Fatal(err)
		}
		return res, st
	}
	newRes, newSt := query(t, 0)
	cachedRes, _ := query(t, 1<<30)
	if newSt.Matches < len(docs) || !reflect.DeepEqual(newRes, cachedRes) {
		t.Fatalf("%d matches of %d near copies; cached results equal: %v", newSt.Matches, len(docs), reflect.DeepEqual(newRes, cachedRes))
	}
	st, err := storage.NewDir(f.out)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if err := index.WriteVersion2Bands(ctx, st, ix); err != nil {
		t.Fatal(err)
	}
	if files, _ := filepath.Glob(filepath.Join(f.out, "bands", "parts-*")); len(files) > 0 {
		t.Fatalf("files of the new layout left: %v", files)
	}
	for _, cache := range []int64{0, 1 << 30} {
		oldRes, oldSt := query(t, cache)
		if !reflect.DeepEqual(oldRes, newRes) || oldSt.Candidates != newSt.Candidates {
			t.Errorf("cache %d: version 2 layout found %d matches of %d candidates, the new one %d of %d, or others",
				cache, oldSt.Matches, oldSt.Candidates, newSt.Matches, newSt.Candidates)
		}
	}
}
