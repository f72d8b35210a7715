package stage

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/storage"
)

// TestManifestHistEdges checks that manifest.json gives each histogram
// the edges of its bins: one more than its bins.
func TestManifestHistEdges(t *testing.T) {
	p := job.DefaultParams()
	p.Resolve()
	m := NewManifest(&job.Spec{Params: p}, &job.Plan{}, time.Time{}, nil)
	foldVerifies(m, []job.VerifyResult{{VerifiedHist: make([]int64, job.HistBins), RejectedHist: make([]int64, job.HistBins)}})
	st, err := storage.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	stats, err := Cluster(t.Context(), st, &job.Spec{Params: p}, nil, nil)
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

// TestManifestRejectReasons checks that the manifest adds up the map
// tasks' rejects by reason, most frequent first, ties by reason.
func TestManifestRejectReasons(t *testing.T) {
	p := job.DefaultParams()
	p.Resolve()
	m := NewManifest(&job.Spec{Params: p}, &job.Plan{}, time.Time{}, nil)
	foldMaps(m, []job.MapResult{
		{Chunk: 0, Rejected: 3, RejectReasons: map[string]int64{"invalid JSON": 2, "unreadable": 1}},
		{Chunk: 1},
		{Chunk: 2, Rejected: 4, RejectReasons: map[string]int64{"invalid JSON": 1, "missing text field": 1, "b": 2}},
	}, 0)
	want := []manifest.ReasonCount{{Reason: "invalid JSON", Count: 3}, {Reason: "b", Count: 2}, {Reason: "missing text field", Count: 1}, {Reason: "unreadable", Count: 1}}
	if !slices.Equal(m.RejectReasons, want) {
		t.Errorf("reject reasons %v, want %v", m.RejectReasons, want)
	}
	var sum int64
	for _, r := range m.RejectReasons {
		sum += r.Count
	}
	if sum != m.Counts.Rejected {
		t.Errorf("reasons count %d rejects, counts.rejected %d", sum, m.Counts.Rejected)
	}
}

// TestNewManifestDerived checks that the manifest holds the derived state
// of the job's spec (what the report shows of the earlier jobs), beside
// params, and nothing of it for a job matched against none.
func TestNewManifestDerived(t *testing.T) {
	p := job.DefaultParams()
	if err := p.Resolve(); err != nil {
		t.Fatal(err)
	}
	d := job.Derived{FirstChunk: 2, Against: []job.Against{{Job: "j0", Out: "/out/j0", Chunks: 2, Docs: 9}}}
	tests := []struct {
		name string
		d    job.Derived
		keys []string // of the derived state beside params
	}{
		{"against", d, []string{"against", "first_chunk"}},
		{"alone", job.Derived{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewManifest(&job.Spec{Params: p, Derived: tt.d}, &job.Plan{}, time.Time{}, nil)
			data, err := manifest.Encode(m)
			if err != nil {
				t.Fatal(err)
			}
			back, err := manifest.Decode(data)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back.Derived, tt.d) {
				t.Errorf("the manifest's derived state %+v, want %+v", back.Derived, tt.d)
			}
			var all map[string]json.RawMessage
			if err := json.Unmarshal(data, &all); err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, k := range []string{"against", "first_chunk"} {
				if _, ok := all[k]; ok {
					keys = append(keys, k)
				}
			}
			if !slices.Equal(keys, tt.keys) {
				t.Errorf("keys beside params %q, want %q", keys, tt.keys)
			}
		})
	}
}
