package gather

import (
	"context"

	"github.com/neardup/neardup/internal/stage"

	"github.com/neardup/neardup/internal/job"
)

// Stage returns the gather stage, which (with --gather on) sends the
// verify tasks the signatures of their candidates: one task per chunk whose signatures a verify task
// needs, reading its signature file once, in order (see Gather).
func Stage() stage.Stage {
	return stage.Stage{
		Name: "gather",
		Tasks: func(_ context.Context, j *stage.Job) ([]int, error) {
			return j.Reduced.GatherChunks, nil
		},
		Run: func(ctx context.Context, e *stage.Env, t stage.Task) (any, error) {
			maps, err := e.Cache.Maps(ctx)
			if err != nil {
				return nil, err
			}
			in, err := stage.ReadTaskInputs[stage.EdgeInput](ctx, e.FS, job.InputsEdges, t.Index)
			if err != nil {
				return nil, err
			}
			return Gather(ctx, e.FS, t.Index, stage.ReduceResults(in, t.Index), maps, !e.Spec.Params.Index && t.Index >= e.Spec.FirstChunk)
		},
		Done: func(ctx context.Context, j *stage.Job, out *stage.Outcome) error {
			list, err := stage.DecodeResults[job.GatherResult](out)
			if err != nil {
				return err
			}
			for _, g := range list {
				j.Manifest.Counts.Gathered += g.Requests
			}
			return stage.WriteTaskInputs(ctx, j.Out, job.InputsGathered, stage.GatheredInputs(list))
		},
	}
}
