package stage

import (
	"context"

	"github.com/neardup/neardup/internal/job"
)

// gatherStage (with --gather on) sends the verify tasks the signatures of
// their candidates: one task per chunk whose signatures a verify task
// needs, reading its signature file once, in order (see Gather).
func gatherStage() Stage {
	return Stage{
		Name: "gather",
		Tasks: func(_ context.Context, j *Job) ([]int, error) {
			return j.gatherChunks, nil
		},
		Run: func(ctx context.Context, e *Env, t Task) (any, error) {
			maps, err := e.Cache.Maps(ctx)
			if err != nil {
				return nil, err
			}
			in, err := readTaskInputs[edgeInput](ctx, e.FS, job.InputsEdges, t.Index)
			if err != nil {
				return nil, err
			}
			return Gather(ctx, e.FS, t.Index, reduceResults(in, t.Index), maps, !e.Spec.Params.Index && t.Index >= e.Spec.FirstChunk)
		},
		Done: func(ctx context.Context, j *Job, out *Outcome) error {
			list, err := decodeResults[job.GatherResult](out)
			if err != nil {
				return err
			}
			for _, g := range list {
				j.Manifest.Counts.Gathered += g.Requests
			}
			return writeTaskInputs(ctx, j.Out, job.InputsGathered, gatheredInputs(list))
		},
	}
}
