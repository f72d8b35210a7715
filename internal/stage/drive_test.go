package stage

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
)

// fakeExecutor runs no task: each stage's outcome is given, and it notes
// what Drive asked of it.
type fakeExecutor struct {
	published map[string]int                // tasks a stage's run publishes
	failures  map[string][]manifest.Failure // tasks of a stage that fail for good
	calls     []string                      // "clear NAME", "run NAME"
}

func (f *fakeExecutor) Execute(_ context.Context, s Stage, indices []int) (*Outcome, error) {
	f.calls = append(f.calls, "run "+s.Name)
	results := ResultMap{}
	out := &Outcome{Done: indices, Results: results, Published: f.published[s.Name], Failures: f.failures[s.Name]}
	for _, i := range indices {
		results[i] = []byte("{}")
	}
	return out, nil
}

func (f *fakeExecutor) Clear(_ context.Context, s Stage) error {
	f.calls = append(f.calls, "clear "+s.Name)
	return nil
}

// TestDrive checks Drive's loop over stages of one task each: which
// stages it clears (those after a stage that published tasks in this
// run, and every stage of steps) and when a failed task fails the job.
func TestDrive(t *testing.T) {
	stage := func(name string, mayFail bool) Stage {
		return Stage{Name: name, MayFail: mayFail,
			Tasks: func(context.Context, *Job) ([]int, error) { return []int{0}, nil },
			Done:  func(context.Context, *Job, *Outcome) error { return nil }}
	}
	steps := Stage{Name: "steps", Steps: func(ctx context.Context, j *Job, run TaskRunner) error {
		_, err := run.RunTasks(ctx, "steps-a", 1)
		return err
	}}
	seqOf := []Stage{stage("a", true), stage("b", false), stage("c", false), steps}
	fail := []manifest.Failure{{Stage: "x", Index: 0, Attempts: 3, Error: "boom"}}
	tests := []struct {
		name      string
		published map[string]int
		failures  map[string][]manifest.Failure
		strict    bool
		calls     string
		err       string // in the error; "" for none
	}{
		{"all done before", nil, nil, false, "run a, run b, run c, clear steps, run steps-a", ""},
		{"first stage ran", map[string]int{"a": 1}, nil, false, "run a, clear b, run b, clear c, run c, clear steps, run steps-a", ""},
		{"second stage resumed", map[string]int{"b": 1}, nil, false, "run a, run b, clear c, run c, clear steps, run steps-a", ""},
		{"a task of a stage that may fail", nil, map[string][]manifest.Failure{"a": fail}, false, "run a, run b, run c, clear steps, run steps-a", ""},
		{"strict", nil, map[string][]manifest.Failure{"a": fail}, true, "run a", "x task 0 failed after 3 attempts: boom"},
		{"a task of another stage", nil, map[string][]manifest.Failure{"b": fail}, false, "run a, run b", "boom"},
		{"a step's task", nil, map[string][]manifest.Failure{"steps-a": fail}, false, "run a, run b, run c, clear steps, run steps-a", "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex := &fakeExecutor{published: tt.published, failures: tt.failures}
			p := job.DefaultParams()
			p.Strict = tt.strict
			j := &Job{Spec: &job.Spec{Params: p}, Manifest: &manifest.Manifest{}, Log: slog.New(slog.DiscardHandler)}
			err := Drive(context.Background(), j, seqOf, ex)
			if got := strings.Join(ex.calls, ", "); got != tt.calls {
				t.Errorf("calls %q, want %q", got, tt.calls)
			}
			switch {
			case tt.err == "" && err != nil:
				t.Errorf("error %v", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Errorf("error %v, want one with %q", err, tt.err)
			}
			if tt.err == "" && len(j.Manifest.Stages) != 3 {
				t.Errorf("manifest stages %v, want one per stage of tasks", j.Manifest.Stages)
			}
		})
	}
}
