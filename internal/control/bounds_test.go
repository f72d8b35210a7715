package control

import (
	"cmp"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/pkg/records"
)

// TestBounds runs a job without bounds and again with tiny --max-cluster-pairs
// and --max-bucket, and checks what the bounds promise against the
// unbounded run.
func TestBounds(t *testing.T) {
	in, _ := genCorpus(t, 600, 11, 2)
	ctx := context.Background()
	run := func(set func(*job.Params)) (string, *Manifest) {
		out := filepath.Join(t.TempDir(), "out")
		cfg := testConfig(t, in, out, 2)
		set(&cfg.Params)
		m, err := Run(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return out, m
	}
	fullOut, full := run(func(*job.Params) {})
	if full.Counts.BoundedClust != 0 || full.Counts.BoundedBuckets != 0 {
		t.Fatalf("default bounds bounded %d clusters and %d buckets of a 600-document corpus", full.Counts.BoundedClust, full.Counts.BoundedBuckets)
	}
	fullPairs := readPairs(t, fullOut)
	if int64(len(fullPairs)) != full.Counts.Pairs || full.Counts.Pairs == 0 {
		t.Fatalf("pairs/ has %d rows, the manifest says %d", len(fullPairs), full.Counts.Pairs)
	}

	t.Run("cluster", func(t *testing.T) {
		const bound = 3
		out, m := run(func(p *job.Params) { p.MaxClusterPairs = bound })
		clusters, err := parquet.ReadFile[records.ClusterRecord](filepath.Join(out, "clusters.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		clusterOf, kept := map[int64]int64{}, map[int64]int64{}
		for _, c := range clusters {
			clusterOf[c.Doc] = c.Cluster
			if c.Keep {
				kept[c.Cluster] = c.Doc
			}
		}
		// A cluster's complete pair list is what the unbounded run lists.
		complete := map[int64]int64{}
		for _, pr := range fullPairs {
			complete[clusterOf[pr.A]]++
		}
		var want []records.Pair
		var notListed, bounded int64
		for _, pr := range fullPairs {
			c := clusterOf[pr.A]
			if complete[c] <= bound || pr.A == kept[c] || pr.B == kept[c] {
				want = append(want, pr)
			} else {
				notListed++
			}
		}
		for _, n := range complete {
			if n > bound {
				bounded++
			}
		}
		got := readPairs(t, out)
		byAB := func(a, b records.Pair) int { return cmp.Or(cmp.Compare(a.A, b.A), cmp.Compare(a.B, b.B)) }
		slices.SortFunc(got, byAB)
		slices.SortFunc(want, byAB)
		if !slices.EqualFunc(got, want, func(a, b records.Pair) bool { return byAB(a, b) == 0 && a.Similarity == b.Similarity }) {
			t.Fatalf("bounded run lists %d pairs, want the %d of unbounded clusters and of kept documents", len(got), len(want))
		}
		if bounded == 0 || m.Counts.BoundedClust != bounded || m.Counts.NotListed != notListed {
			t.Fatalf("manifest: %d bounded clusters, %d pairs not listed; want %d and %d (and some)", m.Counts.BoundedClust, m.Counts.NotListed, bounded, notListed)
		}
		if len(m.BoundedClusters) == 0 || !hasWarning(m, "--max-cluster-pairs") {
			t.Fatalf("bounded clusters not named: %+v, warnings %q", m.BoundedClusters, m.Warnings)
		}
		t.Logf("%d of %d clusters bounded, %d of %d pairs not listed", bounded, len(complete), notListed, len(fullPairs))
	})

	t.Run("bucket", func(t *testing.T) {
		out, m := run(func(p *job.Params) { p.MaxBucket = 2 })
		if m.Counts.BoundedBuckets == 0 || m.Counts.NotCompared == 0 || len(m.BoundedBuckets) == 0 || !hasWarning(m, "--max-bucket") {
			t.Fatalf("buckets of 3 or more with --max-bucket 2 were not reported: counts %+v, warnings %q", m.Counts, m.Warnings)
		}
		// Every pair still listed is one of the unbounded run's.
		all := map[[2]int64]bool{}
		for _, pr := range fullPairs {
			all[[2]int64{pr.A, pr.B}] = true
		}
		got := readPairs(t, out)
		for _, pr := range got {
			if !all[[2]int64{pr.A, pr.B}] {
				t.Fatalf("pair %d-%d is not a pair of the unbounded run", pr.A, pr.B)
			}
		}
		if len(got) >= len(fullPairs) {
			t.Fatalf("--max-bucket 2 lists %d pairs, the unbounded run %d: nothing was bounded", len(got), len(fullPairs))
		}
		t.Logf("%d buckets bounded, %d pairs not compared; %d of %d pairs listed", m.Counts.BoundedBuckets, m.Counts.NotCompared, len(got), len(fullPairs))
	})
}

func hasWarning(m *Manifest, s string) bool {
	return slices.ContainsFunc(m.Warnings, func(w string) bool { return strings.Contains(w, s) })
}
