package control

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/storage"
)

// TestSpecDiff checks what an unfinished job is said to differ in from
// the job asked for: nothing for the same job, else the name, or each
// parameter that differs by its own name, inside the groups of
// job.Params, with its old and new values, or the earlier jobs
// (--against) it was matched against.
func TestSpecDiff(t *testing.T) {
	base := job.DefaultParams()
	if err := base.Resolve(); err != nil {
		t.Fatal(err)
	}
	inputs := []job.Input{{Path: "/in/a.jsonl", Size: 10}}
	plan := job.Plan{Inputs: inputs}
	var none job.Derived
	j0 := job.Derived{FirstChunk: 2, Against: []job.Against{{Job: "j0", Out: "/out/j0", Chunks: 2, Docs: 9}}}
	j0b := job.Derived{FirstChunk: 3, Against: []job.Against{{Job: "j0", Out: "/out/j0", Chunks: 3, Docs: 12}}}
	tests := []struct {
		name    string
		jobName string
		set     func(p *job.Params)
		old     job.Derived // the unfinished job's
		derived job.Derived // the one asked for's
		want    []string    // substrings; none: the same job
		not     []string    // substrings it must not have
		// The kept corpora (--write-kept) of the unfinished job and of
		// the one asked for.
		oldKept, kept *job.KeptOutput
	}{
		{"same", "j1", func(*job.Params) {}, none, none, nil, nil, nil, nil},
		{"same, name derived", "", func(*job.Params) {}, none, none, nil, nil, nil, nil},
		{"name", "j2", func(*job.Params) {}, none, none, []string{`another job name ("j1", not "j2")`}, nil, nil, nil},
		{"threshold", "", func(p *job.Params) { p.Threshold = 0.9 }, none, none,
			[]string{"other parameters: Threshold 0.8 (now 0.9)"}, []string{"LSHParams"}, nil, nil},
		{"one of each group", "", func(p *job.Params) {
			p.Keep, p.Words, p.Method, p.InputFormat = job.KeepLongest, 3, job.MethodSimHash, "jsonl"
		}, none, none, []string{"Method minhash (now simhash)", "Words 5 (now 3)", "Keep first (now longest)", "InputFormat auto (now jsonl)"},
			[]string{"Params", "Threshold"}, nil, nil},
		{"against", "", func(*job.Params) {}, none, j0,
			[]string{"other earlier jobs (--against): FirstChunk 0 (now 2)", "Against [] (now [{j0 /out/j0 0 2 9}])"}, []string{"parameters"}, nil, nil},
		{"against, same", "", func(*job.Params) {}, j0, j0, nil, nil, nil, nil},
		{"against, no more", "", func(*job.Params) {}, j0, none,
			[]string{"other earlier jobs (--against): FirstChunk 2 (now 0)", "Against [{j0 /out/j0 0 2 9}] (now [])"}, nil, nil, nil},
		{"against, grown", "", func(*job.Params) {}, j0, j0b,
			[]string{"FirstChunk 2 (now 3)", "(now [{j0 /out/j0 0 3 12}])"}, nil, nil, nil},
		{"against and threshold", "", func(p *job.Params) { p.Threshold = 0.9 }, none, j0,
			[]string{"other parameters: Threshold 0.8 (now 0.9)"}, nil, nil, nil},
		{"kept, same", "", func(*job.Params) {}, none, none, nil, nil, &job.KeptOutput{Dir: "/k", Format: "auto"}, &job.KeptOutput{Dir: "/k", Format: "auto"}},
		{"kept, new", "", func(*job.Params) {}, none, none, []string{"another kept corpus (--write-kept, --kept-format): none, now /k as auto"}, nil,
			nil, &job.KeptOutput{Dir: "/k", Format: "auto"}},
		{"kept, other format", "", func(*job.Params) {}, none, none, []string{"/k as auto, now /k as parquet"}, nil,
			&job.KeptOutput{Dir: "/k", Format: "auto"}, &job.KeptOutput{Dir: "/k", Format: "parquet"}},
		{"kept, no more", "", func(*job.Params) {}, none, none, []string{"/k as auto, now none"}, nil, &job.KeptOutput{Dir: "/k", Format: "auto"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := base
			tt.set(&p)
			old := job.Spec{Job: "j1", Epoch: "e", Out: ".", Params: base, Derived: tt.old, Kept: tt.oldKept}
			got := specDiff(old, plan, tt.jobName, p, tt.derived, inputs, tt.kept)
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

// TestResumeSpecFormat checks that a job begun by an earlier version
// (a spec of an older format) resumes in this version's format, its spec
// rewritten so, and that one of a later version is refused.
func TestResumeSpecFormat(t *testing.T) {
	ctx := context.Background()
	p := job.DefaultParams()
	if err := p.Resolve(); err != nil {
		t.Fatal(err)
	}
	inputs := []job.Input{{Path: "/in/a.jsonl", Size: 10}}
	for _, tt := range []struct {
		format int
		want   string // in the error; "" to resume
	}{
		{job.SpecFormat - 1, ""}, {0, ""}, {job.SpecFormat, ""},
		{job.SpecFormat + 1, "of a later version of neardup"},
	} {
		t.Run(fmt.Sprint(tt.format), func(t *testing.T) {
			st, err := storage.NewDir(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			old := job.Spec{Job: "j1", Epoch: "e1", Out: ".", Params: p, Format: tt.format}
			if err := writeJSON(ctx, st, job.SpecFile, old); err != nil {
				t.Fatal(err)
			}
			if err := writeJSON(ctx, st, job.PlanFile, job.Plan{Inputs: inputs}); err != nil {
				t.Fatal(err)
			}
			spec, _, resumed, err := loadOrPlan(ctx, st, "", &checked{params: p, inputs: inputs})
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err = %v, want one saying %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var onDisk job.Spec
			if err := readJSON(ctx, st, job.SpecFile, &onDisk); err != nil {
				t.Fatal(err)
			}
			if !resumed || spec.Epoch != "e1" || spec.Format != job.SpecFormat || onDisk.Format != job.SpecFormat || onDisk.Out != "." {
				t.Errorf("resumed %v, spec %+v, on disk %+v: want epoch e1 resumed in format %d", resumed, spec, onDisk, job.SpecFormat)
			}
		})
	}
}
