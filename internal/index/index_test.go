package index

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/storage"
)

// TestLoadDerived checks where Load finds the earlier jobs an index's job
// was matched against: beside params in an index this version writes
// (and nowhere else, first_chunk only once), in params in one an earlier
// version wrote (testdata/index-against-in-params.json, written by the
// version before job.Derived left job.Params, for a job matched against
// one earlier job), and nowhere in the index of a job matched against
// none.
func TestLoadDerived(t *testing.T) {
	ctx := t.Context()
	earlier := []job.Against{{Job: "j7b5d5924289277cb", Out: "/tmp/derived-fix/A", FirstChunk: 0, Chunks: 1, Docs: 600}}
	results := []job.MapResult{{Chunk: 1, Docs: 2000, DocFile: fileinfo.Info{Name: job.DocFile(1), Rows: 2000}}}
	spec := &job.Spec{Job: "j2", Params: job.DefaultParams(), Derived: job.Derived{FirstChunk: 1, Against: earlier}}
	alone := &job.Spec{Job: "j1", Params: job.DefaultParams()}
	fixture, err := os.ReadFile(filepath.Join("testdata", "index-against-in-params.json"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		data       []byte // index.json; nil: New(spec) as Write writes it
		spec       *job.Spec
		firstChunk int
		against    []job.Against
		keys       []string // of the index.json
		paramKeys  []string // of its params that are the derived state's
	}{
		{"now", nil, spec, 1, earlier, []string{"against", "chunks", "docs", "first_chunk", "job", "params", "version"}, nil},
		{"now, against none", nil, alone, 0, nil, []string{"chunks", "docs", "first_chunk", "job", "params", "version"}, nil},
		{"before", fixture, nil, 1, earlier, []string{"chunks", "docs", "first_chunk", "job", "params", "version"}, []string{"against", "first_chunk"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := storage.NewDir(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if tt.data == nil {
				if err := Write(ctx, st, New(tt.spec, results)); err != nil {
					t.Fatal(err)
				}
			} else if err := storage.WriteFile(ctx, st, job.IndexFile, tt.data); err != nil {
				t.Fatal(err)
			}
			ix, err := Load(ctx, st)
			if err != nil {
				t.Fatal(err)
			}
			if ix.FirstChunk != tt.firstChunk || !reflect.DeepEqual(ix.Against, tt.against) || ix.End() != 2 || ix.Docs != 2000 {
				t.Errorf("first chunk %d, end %d, %d docs, against %+v; want %d, 2, 2000, %+v",
					ix.FirstChunk, ix.End(), ix.Docs, ix.Against, tt.firstChunk, tt.against)
			}
			data, err := storage.ReadFile(ctx, st, job.IndexFile)
			if err != nil {
				t.Fatal(err)
			}
			var top map[string]json.RawMessage
			if err := json.Unmarshal(data, &top); err != nil {
				t.Fatal(err)
			}
			var params map[string]json.RawMessage
			if err := json.Unmarshal(top["params"], &params); err != nil {
				t.Fatal(err)
			}
			var derived []string
			for _, k := range []string{"against", "first_chunk"} {
				if _, ok := params[k]; ok {
					derived = append(derived, k)
				}
			}
			if got := slices.Sorted(maps.Keys(top)); !slices.Equal(got, tt.keys) || !slices.Equal(derived, tt.paramKeys) {
				t.Errorf("keys %q, in params %q; want %q, %q", got, derived, tt.keys, tt.paramKeys)
			}
		})
	}
}

// TestLoadVersions loads an index.json of every layout version: those
// this build reads, and the ones before and after, refused by their
// version.
func TestLoadVersions(t *testing.T) {
	for v := 0; v <= Version+1; v++ {
		st, err := storage.NewDir(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		data, err := json.Marshal(map[string]any{"version": v, "job": "j1", "params": job.DefaultParams()})
		if err != nil {
			t.Fatal(err)
		}
		if err := storage.WriteFile(t.Context(), st, job.IndexFile, data); err != nil {
			t.Fatal(err)
		}
		_, err = Load(t.Context(), st)
		want := v >= 1 && v <= Version
		if (err == nil) != want {
			t.Errorf("version %d: err %v, want it read: %v", v, err, want)
		}
		if !want && (err == nil || !strings.Contains(err.Error(), fmt.Sprintf("layout version %d, this build reads versions 1 to %d", v, Version))) {
			t.Errorf("version %d: err %v does not name the versions", v, err)
		}
	}
}
