package stage

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
)

// reduceStage groups the band records: one task per partition, writing
// the candidate edges of each chunk and the signature requests of its
// documents (see Reduce).
func reduceStage() Stage {
	return Stage{
		Name: "reduce",
		Tasks: func(_ context.Context, j *Job) ([]int, error) {
			return seq(j.Spec.Params.Partitions), nil
		},
		Run: func(ctx context.Context, e *Env, t Task) (any, error) {
			in, err := reduceTaskInputs(ctx, e.FS, len(e.Spec.Against), t.Index)
			if err != nil {
				return nil, err
			}
			r, err := Reduce(ctx, e.FS, e.Spec, t.Index, mapResults(in, t.Index))
			if err != nil {
				return nil, fmt.Errorf("reduce partition %d: %w", t.Index, err)
			}
			return r, nil
		},
		Done: func(ctx context.Context, j *Job, out *Outcome) error {
			list, err := decodeResults[job.ReduceResult](out)
			if err != nil {
				return err
			}
			foldReduces(j.Manifest, list)
			if err := writeTaskInputs(ctx, j.Out, job.InputsEdges, edgeInputs(list)); err != nil {
				return err
			}
			// The ranges (partitions × chunks) are written: keep only
			// which chunks the gather and verify tasks are for.
			gather, verify := map[int]bool{}, map[int]bool{}
			for _, r := range list {
				for ch := range r.RequestFiles {
					gather[ch] = true
				}
				for ch := range r.EdgeFiles {
					verify[ch] = true
				}
			}
			j.gatherChunks = slices.Sorted(maps.Keys(gather))
			j.verifyChunks = slices.Sorted(maps.Keys(verify))
			return nil
		},
	}
}

// foldReduces adds what the reduce tasks found to the manifest.
func foldReduces(m *manifest.Manifest, list []job.ReduceResult) {
	for _, r := range list {
		m.Counts.BandGroups += r.Groups
		m.Counts.MaxBandGroup = max(m.Counts.MaxBandGroup, r.MaxGroup)
		m.Counts.CandidateRows += r.Candidates
		m.Counts.Candidates += r.Candidates
		m.Counts.BoundedBuckets += r.BoundedBuckets
		m.Counts.NotCompared += r.PairsNotCompared
		for _, b := range r.Bounded {
			m.BoundedBuckets = job.InsertBounded(m.BoundedBuckets, b)
		}
	}
}
