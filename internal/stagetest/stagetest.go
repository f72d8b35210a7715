// Package stagetest runs stages in this process as the tests of the
// stages after them need their outputs: every reduce task of a job's map
// results, every gather task of its reduce results; and it makes up task
// results for the control plane's benchmarks (Fabricator). Tests only: no
// other package imports it.
package stagetest

import (
	"context"
	"maps"
	"slices"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/stage/gather"
	"github.com/neardup/neardup/internal/stage/reduce"
	"github.com/neardup/neardup/internal/storage"
)

// ReduceMaps runs every reduce task of the map results maps, planned as
// the reduce stage plans them, and returns their partitions' results.
func ReduceMaps(ctx context.Context, st storage.FS, spec *job.Spec, maps []job.MapResult) ([]job.ReduceResult, error) {
	tasks := reduce.PlanTasks(maps, spec.Params.Partitions)
	var out []job.ReduceResult
	for i := range len(tasks) {
		tr, err := reduce.ReduceTask(ctx, st, spec, tasks[i])
		if err != nil {
			return nil, err
		}
		out = append(out, tr.Parts...)
	}
	return out, nil
}

// RunGathers runs every gather task the reduce results ask for, in chunk
// order.
func RunGathers(ctx context.Context, st storage.FS, reduces []job.ReduceResult, byChunk map[int]job.MapResult) ([]job.GatherResult, error) {
	srcs := map[int]bool{}
	for _, rr := range reduces {
		for c := range rr.RequestFiles {
			srcs[c] = true
		}
	}
	var gathers []job.GatherResult
	for _, c := range slices.Sorted(maps.Keys(srcs)) {
		g, err := gather.Gather(ctx, st, c, reduces, byChunk, true)
		if err != nil {
			return nil, err
		}
		gathers = append(gathers, *g)
	}
	return gathers, nil
}
