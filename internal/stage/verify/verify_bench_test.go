package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/benchtext"
	"github.com/neardup/neardup/internal/corpus"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/stage/mapper"
	"github.com/neardup/neardup/internal/stagetest"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/worktest"
)

// BenchmarkVerify times one verify task over a chunk of near-duplicate
// families: Opticks cut into 100-word documents, each with three variants
// that change one word (about 3,800 documents, 5,700 candidate pairs, most
// of them verified). Map and reduce run once, outside the timing.
func BenchmarkVerify(b *testing.B) {
	text, err := os.ReadFile(filepath.Join("..", "..", "..", "pkg", "shingle", "testdata", "Isaac.Newton-Opticks.txt"))
	if err != nil {
		b.Fatal(err)
	}
	var lines []byte
	for i, d := range benchtext.SplitDocs(string(text), 100, 100, 1) {
		words := strings.Fields(string(d))
		for v := range 4 {
			w := append([]string(nil), words...)
			if v > 0 && len(w) > 0 {
				w[(v*len(w))/4] = "variant"
			}
			line, _ := json.Marshal(map[string]string{"id": fmt.Sprintf("d%d-%d", i, v), "text": strings.Join(w, " ")})
			lines = append(append(lines, line...), '\n')
		}
	}
	for _, verify := range []job.Verify{job.VerifyExact, job.VerifyEstimate} {
		b.Run("verify="+verify.String(), func(b *testing.B) {
			p := job.DefaultParams()
			p.Verify = verify
			benchVerify(b, lines, p)
		})
	}
}

// BenchmarkVerifyTemplated times one verify task at threshold 0.5 over
// long templated pages (corpus.TemplatedConfig, seed 1: 1,600 documents,
// most of them in 10 template families of 1,600 to 2,400 words, so most
// candidate pairs are similar at 0.5 to 0.8 and need their exact
// similarity). Map and reduce run once, outside the timing.
func BenchmarkVerifyTemplated(b *testing.B) {
	p := job.DefaultParams()
	p.Threshold = 0.5
	benchVerify(b, templatedLines(b, 1600, 1), p)
}

// templatedLines returns the documents of corpus.TemplatedConfig(n,
// seed) as JSONL.
func templatedLines(tb testing.TB, n int, seed uint64) []byte {
	tb.Helper()
	pool, err := corpus.BundledPool()
	if err != nil {
		tb.Fatal(err)
	}
	g, err := corpus.New(pool, corpus.TemplatedConfig(n, seed))
	if err != nil {
		tb.Fatal(err)
	}
	var lines []byte
	for i := range g.Len() {
		d := g.Doc(i)
		line, _ := json.Marshal(map[string]string{"id": d.ID, "text": d.Text})
		lines = append(append(lines, line...), '\n')
	}
	return lines
}

// verifyInput is what a verify task of chunk 0 reads.
type verifyInput struct {
	st      storage.FS
	spec    *job.Spec
	reduces []job.ReduceResult
	src     SigSource
}

// mapReduce writes lines (JSONL) as one chunk, and maps and reduces it
// with p (one partition, gather off).
func mapReduce(tb testing.TB, lines []byte, p job.Params) verifyInput {
	tb.Helper()
	ctx := context.Background()
	dir := tb.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, lines, 0o644); err != nil {
		tb.Fatal(err)
	}
	st, err := storage.NewDir(filepath.Join(dir, "out"))
	if err != nil {
		tb.Fatal(err)
	}
	p.Partitions, p.Gather = 1, "off"
	if err := p.Resolve(); err != nil {
		tb.Fatal(err)
	}
	spec := &job.Spec{Params: p}
	mr, err := mapper.Map(ctx, st, spec, worktest.WholeChunk(0, in))
	if err != nil {
		tb.Fatal(err)
	}
	reduces, err := stagetest.ReduceMaps(ctx, st, spec, []job.MapResult{*mr})
	if err != nil {
		tb.Fatal(err)
	}
	return verifyInput{st: st, spec: spec, reduces: reduces, src: SigSource{Maps: map[int]job.MapResult{0: *mr}}}
}

// benchVerify writes lines (JSONL) as one chunk, maps and reduces it with
// p (one partition, gather off) and times Verify on it, reporting the time
// per distinct candidate pair and the counts of the last run.
func benchVerify(b *testing.B, lines []byte, p job.Params) {
	ctx := context.Background()
	in := mapReduce(b, lines, p)
	var res *job.VerifyResult
	var err error
	for b.Loop() {
		if res, err = Verify(ctx, in.st, in.spec, 0, in.reduces, in.src); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(res.Checked), "ns/pair")
	b.ReportMetric(float64(res.Verified), "verified")
	b.ReportMetric(float64(res.Exact), "exact")
	b.ReportMetric(float64(res.Prefiltered), "prefiltered")
}

// BenchmarkSigCacheNext times the end of a window of a verify task whose
// cache is over its budget: 16,384 entries of earlier windows (about a
// 64 MiB budget's worth of documents of 1,000 shingles) and a window's
// 4,096, of which those that go over the budget are chosen and dropped.
func BenchmarkSigCacheNext(b *testing.B) {
	const old, window = 1 << 14, verifyWindowDocs
	for b.Loop() {
		b.StopTimer()
		c := newSigCache(1)
		for doc := range int64(old + window) {
			if doc == old {
				c.window++
			}
			c.add(doc, &sigEntry{set: make([]uint64, 1), n: 1000})
		}
		c.bytes = 1 << 40 // every entry of earlier windows goes
		b.StartTimer()
		c.next()
	}
}
