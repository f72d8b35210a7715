package control

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/corpus"
	"github.com/neardup/neardup/internal/faults"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/queue"
	"github.com/neardup/neardup/internal/reference"
	"github.com/neardup/neardup/internal/report"
	"github.com/neardup/neardup/pkg/records"
)

// genCorpus writes a generated corpus with planted near-duplicates and
// returns its directory and the generator.
func genCorpus(t testing.TB, n int, seed uint64, files int) (string, *corpus.Generator) {
	t.Helper()
	dir := t.TempDir()
	g, _, err := corpus.WriteDefault(dir, n, seed, files)
	if err != nil {
		t.Fatal(err)
	}
	return dir, g
}

func testConfig(t testing.TB, in, out string, workers int) Config {
	p := job.DefaultParams()
	p.ChunkBytes = 256 << 10 // several chunks even for a small corpus
	p.Partitions = 8
	qc := queue.DefaultConfig()
	qc.AckWait = 5 * time.Second
	qc.TransientRetry = time.Second // a full disk that stays full fails fast
	return Config{Out: out, Inputs: []string{in}, Params: p, Workers: workers, Queue: qc}
}

func readPairs(t testing.TB, out string) []records.Pair {
	t.Helper()
	return readDataset[records.Pair](t, out, "pairs")
}

// readDataset reads the rows of every file of a dataset of the output out.
func readDataset[T any](t testing.TB, out, dataset string) []T {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(out, dataset, "*.parquet"))
	var all []T
	for _, f := range files {
		rows, err := parquet.ReadFile[T](f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, rows...)
	}
	return all
}

// TestEndToEnd runs the job with 1 and 3 workers on a generated corpus and
// checks pair-level recall and precision against brute-force exact
// Jaccard, the exact-duplicate groups, and that both runs wrote
// byte-identical pairs and clusters.
func TestEndToEnd(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 400
	}
	in, g := genCorpus(t, n, 7, 3)
	ctx := context.Background()

	outs := map[int]string{}
	var man *Manifest
	for _, workers := range []int{1, 3} {
		out := filepath.Join(t.TempDir(), "out")
		m, err := Run(ctx, testConfig(t, in, out, workers))
		if err != nil {
			t.Fatalf("%d workers: %v", workers, err)
		}
		outs[workers] = out
		man = m
	}
	if man.Chunks < 2 {
		t.Fatalf("corpus planned into %d chunks; the test wants several", man.Chunks)
	}
	if man.Counts.Docs != int64(n) {
		t.Fatalf("manifest counts %d docs, want %d", man.Counts.Docs, n)
	}

	// Byte-identical results whatever the number of workers.
	sameFiles(t, outs[1], outs[3], "pairs/*.parquet", "candidates/*.parquet", "clusters.parquet", "duplicates.parquet", "exact.parquet", "docs/*.parquet", report.PairsFile)
	// The example pairs: the most the report shows, each with its texts
	// read again.
	page, err := os.ReadFile(filepath.Join(outs[1], report.PairsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(man.ExamplePairs) != manifest.MaxExamples || bytes.Contains(page, []byte("could not be read again")) || bytes.Count(page, []byte("<mark>")) < 100 {
		t.Errorf("%d example pairs (want %d), or their texts are not shown with shared words highlighted", len(man.ExamplePairs), manifest.MaxExamples)
	}
	// With --verify exact, the Jaccard of the texts read again and
	// shingled for the page is the similarity verify computed.
	sims := regexp.MustCompile(`<td>similarity</td><td class="mono">([0-9.]+)<`).FindAllSubmatch(page, -1)
	jacs := regexp.MustCompile(`<td>Jaccard of the texts</td><td class="mono">([0-9.]+)<`).FindAllSubmatch(page, -1)
	if len(sims) != len(man.ExamplePairs) || len(jacs) != len(sims) {
		t.Errorf("%s shows %d similarities and %d Jaccards for %d pairs", report.PairsFile, len(sims), len(jacs), len(man.ExamplePairs))
	}
	for i := range min(len(sims), len(jacs)) {
		if !bytes.Equal(sims[i][1], jacs[i][1]) {
			t.Errorf("example pair %d: similarity %s, Jaccard of its texts %s", i+1, sims[i][1], jacs[i][1])
		}
	}

	// Brute force: every pair's exact Jaccard.
	p := job.DefaultParams()
	p.Resolve()
	o := p.ShingleOptions()
	ids := make([]string, n)
	sets := make([][]uint64, n)
	byID := map[string]int{}
	for i := range n {
		ids[i] = g.Doc(i).ID
		sets[i] = reference.Set(g.Text(i), o)
		byID[ids[i]] = i
	}
	pairs := readPairs(t, outs[1])
	// Precision: every reported pair really is at or above the threshold,
	// and its similarity is the exact one.
	for _, pr := range pairs {
		ia, ok1 := byID[pr.AID]
		ib, ok2 := byID[pr.BID]
		if !ok1 || !ok2 {
			t.Fatalf("pair %+v names unknown ids", pr)
		}
		j := reference.Jaccard(sets[ia], sets[ib])
		if j < p.Threshold || pr.Similarity != j || pr.Method != "exact" {
			t.Fatalf("pair %s %s: reported %v (%s), exact %v, threshold %v", pr.AID, pr.BID, pr.Similarity, pr.Method, j, p.Threshold)
		}
	}
	// Each pair once, a < b.
	seen := map[[2]int64]bool{}
	for _, pr := range pairs {
		if pr.A >= pr.B || seen[[2]int64{pr.A, pr.B}] {
			t.Fatalf("pair (%d, %d) out of order or listed twice", pr.A, pr.B)
		}
		seen[[2]int64{pr.A, pr.B}] = true
	}
	// Recall, by pair (what pairs/ lists) and by cluster.
	cluster := map[string]int64{}
	crow, err := parquet.ReadFile[records.ClusterRecord](filepath.Join(outs[1], "clusters.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range crow {
		cluster[c.ID] = c.Cluster
	}
	found := map[[2]string]bool{}
	for _, pr := range pairs {
		found[[2]string{pr.AID, pr.BID}] = true
		found[[2]string{pr.BID, pr.AID}] = true
	}
	type tally struct{ want, direct, clustered int }
	var above, near, identical tally // J >= t+0.05, t <= J < t+0.05, J = 1
	for a := range n {
		for b := a + 1; b < n; b++ {
			j := reference.Jaccard(sets[a], sets[b])
			if j < p.Threshold {
				continue
			}
			ca, oka := cluster[ids[a]]
			cb, okb := cluster[ids[b]]
			for _, tl := range []*tally{&above, &near, &identical} {
				switch {
				case tl == &above && j < p.Threshold+0.05,
					tl == &near && j >= p.Threshold+0.05,
					tl == &identical && j != 1:
					continue
				}
				tl.want++
				if found[[2]string{ids[a], ids[b]}] {
					tl.direct++
				}
				if oka && okb && ca == cb {
					tl.clustered++
				}
			}
		}
	}
	if above.want < 50 || identical.want < 10 {
		t.Fatalf("only %d true pairs >= %.2f and %d identical: the corpus plants too few near-duplicates for this test", above.want, p.Threshold+0.05, identical.want)
	}
	for _, tc := range []struct {
		name string
		tl   tally
		min  float64
	}{
		{"J >= t+0.05", above, 0.99},
		{"t <= J < t+0.05", near, 0.94},
		{"J = 1", identical, 1},
	} {
		recall := float64(tc.tl.direct) / float64(max(tc.tl.want, 1))
		t.Logf("%-16s %4d true pairs: listed %4d (%.3f), in one cluster %4d (%.3f)", tc.name, tc.tl.want, tc.tl.direct, recall,
			tc.tl.clustered, float64(tc.tl.clustered)/float64(max(tc.tl.want, 1)))
		if tc.tl.want > 0 && recall < tc.min {
			t.Errorf("%s: pair recall %.3f < %.2f", tc.name, recall, tc.min)
		}
	}

	// exact.parquet holds exactly the groups of documents with identical
	// reference shingle sets.
	wantGroup := map[string]string{} // id -> id of the group's first document
	first := map[string]string{}
	for i := range n {
		if len(sets[i]) == 0 {
			continue
		}
		key := fmt.Sprint(sets[i])
		if f, ok := first[key]; ok {
			wantGroup[ids[i]] = f
			wantGroup[f] = f
		} else {
			first[key] = ids[i]
		}
	}
	erows, err := parquet.ReadFile[records.ExactRecord](filepath.Join(outs[1], "exact.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	idOf := map[int64]string{}
	for _, r := range erows {
		if r.Doc == r.Group {
			idOf[r.Group] = r.ID
		}
	}
	if len(erows) != len(wantGroup) {
		t.Errorf("exact.parquet has %d documents in groups, want %d", len(erows), len(wantGroup))
	}
	for _, r := range erows {
		if want, ok := wantGroup[r.ID]; !ok || idOf[r.Group] != want {
			t.Errorf("exact.parquet puts %s in the group of %s, want %q", r.ID, idOf[r.Group], want)
		}
	}
	t.Logf("%d documents in %d exact groups; %d pairs listed", len(erows), len(idOf), len(pairs))
}

// TestRerunRefusesCompleteOutput checks the --overwrite rule.
func TestRerunRefusesCompleteOutput(t *testing.T) {
	in, _ := genCorpus(t, 60, 3, 1)
	out := filepath.Join(t.TempDir(), "out")
	ctx := context.Background()
	cfg := testConfig(t, in, out, 2)
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "_SUCCESS")); err != nil {
		t.Fatal("no _SUCCESS after a complete run")
	}
	if _, err := Run(ctx, cfg); !errors.Is(err, ErrComplete) {
		t.Fatalf("rerun into complete output: err = %v, want ErrComplete", err)
	}
	cfg.Overwrite = true
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatalf("rerun with overwrite: %v", err)
	}
}

// TestBadConfigKeepsOutput checks that a run with --overwrite but an
// invalid configuration fails before touching the complete output there.
func TestBadConfigKeepsOutput(t *testing.T) {
	in, _ := genCorpus(t, 60, 3, 1)
	out := filepath.Join(t.TempDir(), "out")
	cfg := testConfig(t, in, out, 2)
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		set  func(*Config)
	}{
		{"bad threshold", func(c *Config) { c.Params.Threshold = 1.5 }},
		{"missing input", func(c *Config) { c.Inputs = []string{filepath.Join(in, "nope.jsonl")} }},
		{"no workers", func(c *Config) { c.Workers = 0 }},
		{"bad job name", func(c *Config) { c.Job = "no spaces allowed" }},
	}
	for _, tt := range tests {
		c := cfg
		c.Overwrite = true
		tt.set(&c)
		if _, err := Run(context.Background(), c); err == nil {
			t.Fatalf("%s: Run succeeded", tt.name)
		}
		if _, err := os.Stat(filepath.Join(out, "_SUCCESS")); err != nil {
			t.Fatalf("%s: the complete output was removed", tt.name)
		}
	}
}

// outsideWorker starts a NATS server on loopback and one worker connected
// to it over TCP, as a worker process elsewhere would be, injecting the
// given fault rules; it returns the server's URL. The worker runs until
// ctx ends; the server and connection close when the test ends.
func outsideWorker(t *testing.T, ctx context.Context, qc queue.Config, slots int, rules string) string {
	t.Helper()
	srv, err := queue.StartEmbedded(t.TempDir(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	wq, err := queue.Connect(ctx, queue.ConnConfig{URL: srv.URL(), ConnectTimeout: 10 * time.Second}, "test-worker", qc, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(wq.Close)
	f, err := faults.Parse(rules, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWorker(wq, slots, slog.New(slog.DiscardHandler))
	w.InjectFaults(f)
	go w.Run(ctx)
	return srv.URL()
}
