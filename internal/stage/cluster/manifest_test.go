package cluster

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/internal/storage"
)

// TestManifestHistEdges checks that manifest.json gives each histogram
// the edges of its bins: one more than its bins.
func TestManifestHistEdges(t *testing.T) {
	p := job.DefaultParams()
	p.Resolve()
	m := stage.NewManifest(&job.Spec{Params: p}, &job.Plan{}, time.Time{}, nil)
	m.VerifiedHist, m.RejectedHist = make([]int64, job.HistBins), make([]int64, job.HistBins) // as the verify stage folds them
	st, err := storage.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	stats, err := RunLocal(t.Context(), st, &job.Spec{Params: p}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	foldClusters(m, stats, 0, 0)
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		t.Fatal(err)
	}
	got := map[string][]*float64{}
	for _, k := range []string{"verified_similarity_hist", "rejected_similarity_hist", "cluster_size_hist", "similarity_hist_edges", "cluster_size_hist_edges"} {
		var v []*float64
		if err := json.Unmarshal(all[k], &v); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		got[k] = v
	}
	tests := []struct{ hist, edges string }{
		{"verified_similarity_hist", "similarity_hist_edges"},
		{"rejected_similarity_hist", "similarity_hist_edges"},
		{"cluster_size_hist", "cluster_size_hist_edges"},
	}
	for _, tc := range tests {
		if n, e := len(got[tc.hist]), len(got[tc.edges]); n == 0 || e != n+1 {
			t.Errorf("%s has %d bins, %s %d edges", tc.hist, n, tc.edges, e)
		}
	}
	if e := got["similarity_hist_edges"]; len(e) > 0 && (*e[0] != 0 || *e[len(e)-1] != 1) {
		t.Errorf("similarity_hist_edges from %v to %v, want 0 to 1", *e[0], *e[len(e)-1])
	}
	if e := got["cluster_size_hist_edges"]; len(e) > 0 && (*e[0] != 2 || e[len(e)-1] != nil) {
		t.Errorf("cluster_size_hist_edges from %v to %v, want 2 to null", e[0], e[len(e)-1])
	}
}
