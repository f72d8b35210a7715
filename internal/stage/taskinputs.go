package stage

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/storage"
)

// A stage's results form a matrix (partitions × chunks of edge and
// request ranges, chunks × chunks of
// gathered ranges): a task needs one column of it. The coordinator writes
// each task's column to its own file (job.TaskInputFile) before the tasks
// run, so a task reads kilobytes instead of every result of the stage
// (hundreds of MB at 10M documents), and the workers' memory does not grow
// with the number of chunks times partitions. (A reduce task's input is
// its range of partitions and the list of band run files, each holding
// every partition: see planReduceTasks.)

// inputWriters bounds the task input files written at once (object
// storage: one request each).
const inputWriters = 16

// writeTaskInputs writes each task's input list to its file, as compact
// JSON (entries number chunks or partitions: thousands).
func WriteTaskInputs[T any](ctx context.Context, st storage.Creator, kind string, inputs map[int]T) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(inputWriters)
	for _, i := range slices.Sorted(maps.Keys(inputs)) {
		g.Go(func() error {
			name := job.TaskInputFile(kind, i)
			data, err := json.Marshal(inputs[i])
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			return storage.WriteFile(ctx, st, name, data)
		})
	}
	return g.Wait()
}

// readTaskInput reads a task's input.
func ReadTaskInput[T any](ctx context.Context, st storage.Opener, kind string, i int) (T, error) {
	var in T
	err := storage.ReadJSON(ctx, st, job.TaskInputFile(kind, i), &in)
	return in, err
}

// readTaskInputs reads a task's input list.
func ReadTaskInputs[T any](ctx context.Context, st storage.Opener, kind string, i int) ([]T, error) {
	var list []T
	if err := storage.ReadJSON(ctx, st, job.TaskInputFile(kind, i), &list); err != nil {
		return nil, err
	}
	return list, nil
}

// edgeInput is a chunk's entry for one partition: its edge range (for its
// verify task) and its request range (for its gather task).
type EdgeInput struct {
	Part     int            `json:"p"`
	Edges    *fileinfo.Info `json:"e,omitempty"`
	Requests *fileinfo.Info `json:"q,omitempty"`
}

// reduceResults turns a chunk's entries back into the reduce results
// stage.Gather and stage.Verify read.
func ReduceResults(in []EdgeInput, chunk int) []job.ReduceResult {
	out := make([]job.ReduceResult, len(in))
	for i, e := range in {
		out[i] = job.ReduceResult{Part: e.Part, EdgeFiles: map[int]fileinfo.Info{}, RequestFiles: map[int]fileinfo.Info{}}
		if e.Edges != nil {
			out[i].EdgeFiles[chunk] = *e.Edges
		}
		if e.Requests != nil {
			out[i].RequestFiles[chunk] = *e.Requests
		}
	}
	return out
}

// gatheredInput is a verify chunk's entry for one gather task: the range
// it wrote for it.
type GatheredInput struct {
	Chunk int           `json:"c"`
	Range fileinfo.Info `json:"g"`
}

// gatherResults turns a verify chunk's entries back into the gather
// results stage.Verify reads.
func GatherResults(in []GatheredInput, chunk int) []job.GatherResult {
	out := make([]job.GatherResult, len(in))
	for i, g := range in {
		out[i] = job.GatherResult{Chunk: g.Chunk, Ranges: map[int]fileinfo.Info{chunk: g.Range}}
	}
	return out
}

// edgeInputs gives each chunk the ranges that every partition wrote for
// it: its edges (for its verify task) and the requests for its documents
// (for its gather task).
func EdgeInputs(reduces []job.ReduceResult) map[int][]EdgeInput {
	in := map[int][]EdgeInput{}
	for _, r := range reduces {
		chunks := map[int]bool{}
		for c := range r.EdgeFiles {
			chunks[c] = true
		}
		for c := range r.RequestFiles {
			chunks[c] = true
		}
		for c := range chunks {
			e := EdgeInput{Part: r.Part}
			if info, ok := r.EdgeFiles[c]; ok {
				e.Edges = &info
			}
			if info, ok := r.RequestFiles[c]; ok {
				e.Requests = &info
			}
			in[c] = append(in[c], e)
		}
	}
	return in
}

// gatheredInputs gives each verify chunk the range every gather task
// wrote for it.
func GatheredInputs(gathers []job.GatherResult) map[int][]GatheredInput {
	in := map[int][]GatheredInput{}
	for _, g := range gathers {
		for _, c := range slices.Sorted(maps.Keys(g.Ranges)) {
			in[c] = append(in[c], GatheredInput{Chunk: g.Chunk, Range: g.Ranges[c]})
		}
	}
	return in
}
