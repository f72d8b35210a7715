package pipeline

import (
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/job"
)

// TestSpecDiff checks what an unfinished job is said to differ in from
// the job asked for: nothing for the same job, else the name, or each
// parameter that differs by its own name, inside the groups of
// job.Params, with its old and new values.
func TestSpecDiff(t *testing.T) {
	base := job.DefaultParams()
	if err := base.Resolve(); err != nil {
		t.Fatal(err)
	}
	old := job.Spec{Job: "j1", Epoch: "e", Out: ".", Params: base}
	inputs := []job.Input{{Path: "/in/a.jsonl", Size: 10}}
	plan := job.Plan{Inputs: inputs}
	tests := []struct {
		name    string
		jobName string
		set     func(p *job.Params)
		want    []string // substrings; none: the same job
		not     []string // substrings it must not have
	}{
		{"same", "j1", func(*job.Params) {}, nil, nil},
		{"same, name derived", "", func(*job.Params) {}, nil, nil},
		{"name", "j2", func(*job.Params) {}, []string{`another job name ("j1", not "j2")`}, nil},
		{"threshold", "", func(p *job.Params) { p.Threshold = 0.9 },
			[]string{"other parameters: Threshold 0.8 (now 0.9)"}, []string{"LSHParams"}},
		{"one of each group", "", func(p *job.Params) {
			p.Keep, p.Words, p.Method, p.InputFormat = job.KeepLongest, 3, job.MethodSimHash, "jsonl"
		}, []string{"Method minhash (now simhash)", "Words 5 (now 3)", "Keep first (now longest)", "InputFormat auto (now jsonl)"},
			[]string{"Params", "Threshold"}},
		{"against", "", func(p *job.Params) {
			p.FirstChunk, p.Against = 2, []job.Against{{Job: "j0", Out: "/out/j0", Chunks: 2, Docs: 9}}
		}, []string{"FirstChunk 0 (now 2)", "Against [] (now [{j0 /out/j0 0 2 9}])"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := base
			tt.set(&p)
			got := specDiff(old, plan, tt.jobName, p, inputs)
			if (got == "") != (tt.want == nil) {
				t.Fatalf("specDiff = %q, want %q", got, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("specDiff = %q, want it to say %q", got, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("specDiff = %q names %q", got, n)
				}
			}
		})
	}
}
