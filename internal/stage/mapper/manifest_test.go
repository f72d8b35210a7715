package mapper

import (
	"slices"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/stage"
)

// TestManifestRejectReasons checks that the manifest adds up the map
// tasks' rejects by reason, most frequent first, ties by reason.
func TestManifestRejectReasons(t *testing.T) {
	p := job.DefaultParams()
	p.Resolve()
	m := stage.NewManifest(&job.Spec{Params: p}, &job.Plan{}, time.Time{}, nil)
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
