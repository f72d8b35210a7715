package stages

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/internal/storage"
)

// TestLookup checks the workers' registry: every stage by its name, a
// stage of steps by its steps' names only.
func TestLookup(t *testing.T) {
	tests := []struct {
		name string
		want string // the stage found; "" for none
	}{
		{"map", "map"}, {"reduce", "reduce"}, {"gather", "gather"}, {"verify", "verify"}, {"write-kept", "write-kept"}, {"paragraphs", "paragraphs"},
		{"strip-units", "strip-units"}, {"strip-count", "strip-count"},
		{"cluster-contract", "cluster"}, {"cluster-ls-3", "cluster"},
		{"cluster", ""}, {"mapx", ""}, {"", ""}, {"verify-1", ""},
	}
	for _, tt := range tests {
		s, ok := Lookup(tt.name)
		if ok != (tt.want != "") || s.Name != tt.want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", tt.name, s.Name, ok, tt.want)
		}
	}
	// Every stage of every sequence can be looked up, and runs; a job
	// writes its kept corpus last.
	for _, gather := range []job.Gather{job.GatherOn, job.GatherOff, job.GatherSets} {
		for _, spec := range []*job.Spec{
			{Params: job.DefaultParams()},
			{Params: job.DefaultParams(), Kept: &job.KeptOutput{Dir: "/kept", Format: "auto"}},
			{Params: paragraphParams()},
			{Params: stripParams()},
		} {
			spec.Params.Gather = gather
			seq := Of(spec)
			if has := slices.ContainsFunc(seq, func(s stage.Stage) bool { return s.Name == "paragraphs" }); has != spec.Params.Paragraphs {
				t.Errorf("a job with --paragraphs=%v has the paragraphs stage: %v", spec.Params.Paragraphs, has)
			}
			if first := seq[0].Name; (first == "strip-units") != (spec.Params.ShingleAfterStrip != 0) {
				t.Errorf("a job with --shingle-after-strip %d begins with %s", spec.Params.ShingleAfterStrip, first)
			}
			if last := seq[len(seq)-1].Name; (last == "write-kept") != (spec.Kept != nil) {
				t.Errorf("the last stage of a job (kept corpus %v) is %s", spec.Kept, last)
			}
			for _, s := range seq {
				name := s.Name
				if s.Steps != nil {
					name += "-x"
				}
				if got, ok := Lookup(name); !ok || got.Name != s.Name || got.Run == nil {
					t.Errorf("stage %s: Lookup(%q) = %q, %v", s.Name, name, got.Name, ok)
				}
			}
		}
	}
}

// paragraphParams are the default params with the paragraph pass.
func paragraphParams() job.Params {
	p := job.DefaultParams()
	p.Paragraphs = true
	return p
}

// stripParams are the default params with --shingle-after-strip.
func stripParams() job.Params {
	p := job.DefaultParams()
	p.ShingleAfterStrip, p.Index = 3, false
	return p
}

// TestRefused checks that the tasks a stage does not have are refused
// for good (ErrRefused), not retried.
func TestRefused(t *testing.T) {
	ctx := context.Background()
	st, err := storage.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := storage.WriteJSON(ctx, st, job.PlanFile, &job.Plan{FirstChunk: 0, Chunks: []job.Chunk{{Index: 0}}}, true); err != nil {
		t.Fatal(err)
	}
	// A cluster step of one task: a large-star round ("ls").
	step := map[string]any{"name": "cluster-one", "kind": "ls", "parts": 1, "tasks": 1}
	if err := storage.WriteJSON(ctx, st, job.ClusterStepFile("cluster-one"), step, false); err != nil {
		t.Fatal(err)
	}
	env := &stage.Env{Spec: &job.Spec{Params: job.DefaultParams()}, FS: st, Cache: &stage.Files{St: st}}
	tests := []struct {
		stage string
		index int
	}{{"map", 1}, {"map", -1}, {"cluster-one", 1}, {"cluster-one", -1}, {"write-kept", 0}, {"strip-units", 0}, {"strip-count", 0}}
	for _, tt := range tests {
		s, ok := Lookup(tt.stage)
		if !ok {
			t.Fatalf("no stage for %q", tt.stage)
		}
		if _, err := s.Run(ctx, env, stage.Task{Stage: tt.stage, Index: tt.index}); !errors.Is(err, stage.ErrRefused) {
			t.Errorf("%s task %d: %v, want ErrRefused", tt.stage, tt.index, err)
		}
	}
	if s := Of(&job.Spec{Params: job.DefaultParams()}); !slices.ContainsFunc(s, func(s stage.Stage) bool { return s.Name == "map" }) {
		t.Errorf("no map stage in %v", s)
	}
}
