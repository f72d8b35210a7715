package control

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/reference"
	"github.com/neardup/neardup/pkg/records"
	"github.com/neardup/neardup/pkg/shingle"
	"github.com/neardup/neardup/pkg/simhash"
)

// TestSimHashEndToEnd runs the job with --method simhash with 1 and 3
// workers and checks: byte-identical results, every pair within the
// Hamming distance and at the threshold, and every pair of documents
// within the distance whose exact Jaccard reaches the threshold (found by
// brute force over all pairs) joined in one cluster; and that the job
// warns that k = 3 finds few of the pairs at the threshold.
func TestSimHashEndToEnd(t *testing.T) {
	n := 800
	in, g := genCorpus(t, n, 13, 2)
	outs := map[int]string{}
	for _, workers := range []int{1, 3} {
		out := filepath.Join(t.TempDir(), "out")
		cfg := testConfig(t, in, out, workers)
		cfg.Params.Method = "simhash"
		man, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		// At the default threshold 0.8, k = 3 finds few pairs: warned.
		if !hasWarning(man, "SimHash at --hamming 3 finds a pair at --threshold 0.8") {
			t.Errorf("no SimHash recall warning: %q", man.Warnings)
		}
		outs[workers] = out
	}
	sameFiles(t, outs[1], outs[3], "pairs/*.parquet", "candidates/*.parquet", "clusters.parquet", "duplicates.parquet")

	p := job.DefaultParams()
	p.Method = "simhash"
	if err := p.Resolve(); err != nil {
		t.Fatal(err)
	}
	sh, err := shingle.NewShingler(p.ShingleOptions())
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, n)
	fps := make([]uint64, n)
	sets := make([][]uint64, n)
	byID := map[string]int{}
	for i := range n {
		ids[i] = g.Doc(i).ID
		byID[ids[i]] = i
		h, _ := sh.Hashes(nil, []byte(g.Text(i)))
		if len(h) > 0 {
			fps[i] = simhash.Fingerprint(h)
		}
		sets[i] = reference.Set(g.Text(i), p.ShingleOptions())
	}
	for _, pr := range readPairs(t, outs[1]) {
		a, b := byID[pr.AID], byID[pr.BID]
		d := simhash.Distance(fps[a], fps[b])
		if pr.Hamming == nil || int(*pr.Hamming) != d || d > p.Hamming || pr.Similarity < p.Threshold ||
			pr.Similarity != reference.Jaccard(sets[a], sets[b]) {
			t.Fatalf("pair %+v: distance %d, exact %v", pr, d, reference.Jaccard(sets[a], sets[b]))
		}
	}
	// Every band key of every document, from the band partitions.
	ord := map[int64]int{} // ordinal -> generator index
	docFiles, _ := filepath.Glob(filepath.Join(outs[1], "docs", "*.parquet"))
	for _, f := range docFiles {
		rows, err := parquet.ReadFile[records.DocRecord](f)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			ord[r.Doc] = byID[r.ID]
		}
	}
	keys := make([]map[int32]int64, n)
	bandFiles, _ := filepath.Glob(filepath.Join(outs[1], "bands", "*.parquet"))
	for _, f := range bandFiles {
		rows, err := parquet.ReadFile[records.Band](f)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			i := ord[r.Doc]
			if keys[i] == nil {
				keys[i] = map[int32]int64{}
			}
			keys[i][r.Band] = r.Key
		}
	}
	rows, err := parquet.ReadFile[records.ClusterRecord](filepath.Join(outs[1], "clusters.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	cluster := map[string]int64{}
	for _, r := range rows {
		cluster[r.ID] = r.Cluster
	}
	// Brute force over all pairs: the block search (a shared band key) must
	// find every pair within distance k; clusters must join nearly all of
	// those at the threshold. Linking each bucket member to the bucket's
	// smallest document (linear edges) can lose a pair whose smallest
	// document is not a near-duplicate of both, hence the 0.95 bar.
	var within, missed, want, joined int
	for a := range n {
		for b := a + 1; b < n; b++ {
			if len(sets[a]) == 0 || len(sets[b]) == 0 || simhash.Distance(fps[a], fps[b]) > p.Hamming {
				continue
			}
			within++
			shared := false
			for band, k := range keys[a] {
				if keys[b][band] == k {
					shared = true
				}
			}
			if !shared {
				missed++
			}
			if reference.Jaccard(sets[a], sets[b]) < p.Threshold {
				continue
			}
			want++
			ca, oka := cluster[ids[a]]
			cb, okb := cluster[ids[b]]
			if oka && okb && ca == cb {
				joined++
			}
		}
	}
	t.Logf("%d pairs within Hamming %d (%d sharing no block key); %d of them at Jaccard %.2f, %d joined in a cluster",
		within, p.Hamming, missed, want, p.Threshold, joined)
	if within == 0 || missed != 0 {
		t.Fatalf("the block search missed %d of %d pairs within distance %d", missed, within, p.Hamming)
	}
	if want == 0 || float64(joined) < 0.95*float64(want) {
		t.Fatalf("%d of %d qualifying pairs joined in a cluster, want at least 95%%", joined, want)
	}
}
