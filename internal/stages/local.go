package stages

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/stage"
)

// Local runs every task in this process, one after another, as a worker
// would: a whole job without a queue, for tests and tools.
type Local struct {
	Env *stage.Env
}

// Execute runs the tasks of s; the first error fails it (no retries).
func (l Local) Execute(ctx context.Context, s stage.Stage, indices []int) (*stage.Outcome, error) {
	run, step := s.Run, s.Run == nil
	if step { // a step: its stage runs it, and its errors name the task
		st, ok := Lookup(s.Name)
		if !ok {
			return nil, fmt.Errorf("%w: unknown stage %q", stage.ErrRefused, s.Name)
		}
		run = st.Run
	}
	results := stage.ResultMap{}
	out := &stage.Outcome{Done: slices.Sorted(slices.Values(indices)), Results: results, Published: len(indices), Timing: manifest.StageTiming{Name: s.Name, Tasks: len(indices)}}
	for _, i := range indices {
		r, err := run(ctx, l.Env, stage.Task{Stage: s.Name, Index: i})
		if err != nil && !step {
			err = fmt.Errorf("%s task %d: %w", s.Name, i, err)
		}
		if err != nil {
			return nil, err
		}
		if results[i], err = json.Marshal(r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Clear does nothing: Local records nothing between runs.
func (Local) Clear(context.Context, stage.Stage) error { return nil }
