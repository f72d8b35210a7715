package stage

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
)

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
