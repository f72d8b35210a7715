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
// request ranges, chunks × chunks of gathered ranges, partitions ×
// partitions of a cluster step's runs): a task needs one column of it.
// The tasks write their rows of it to route tables (job.Routes) of their
// own, and report only the tables; the coordinator reads them a window
// of columns at a time (Transpose) and writes each task's column to its
// own file (job.TaskInputFile) before the tasks run. So a task reads
// kilobytes instead of every result of the stage (hundreds of MB at 10M
// documents), and neither the workers' nor the coordinator's memory
// grows with the number of chunks times partitions. (A reduce task's
// input is its range of partitions and the list of band run files, each
// holding every partition: see planReduceTasks.)

// inputWriters bounds the task input files written at once (object
// storage: one request each).
const inputWriters = 16

// writeTaskInputs writes each task's input list to its file, as compact
// JSON (entries number chunks or partitions: thousands).
func WriteTaskInputs[T any](ctx context.Context, st storage.Creator, kind string, inputs map[int]T) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(inputWriters)
	for _, i := range slices.Sorted(maps.Keys(inputs)) {
		g.Go(func() error { return writeInput(ctx, st, kind, i, inputs[i]) })
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

// WriteEdgeInputs writes each chunk's input file (InputsEdges): the
// ranges every partition wrote for it, its edges (for its verify task)
// and the requests for its documents (for its gather task), from the
// reduce tasks' route tables (Transpose), in task order; parts[i] are
// the partitions of tables[i]'s pairs of slots (edges, requests). It
// returns the chunks with requests (the gather tasks) and those with
// edges (the verify tasks).
func WriteEdgeInputs(ctx context.Context, st storage.FS, tables []*job.Routes, parts [][]int) (gather, verify []int, err error) {
	keys := MaxKeys(tables)
	requested, edged := make([]bool, keys), make([]bool, keys) // each key set by its own emit
	err = Transpose(ctx, st, tables, keys, func(k int, entries [][]fileinfo.Info) error {
		var in []EdgeInput
		for i, slots := range entries {
			for s := 0; s+1 < len(slots); s += 2 {
				e := EdgeInput{Part: parts[i][s/2]}
				if slots[s].Rows > 0 {
					e.Edges = &slots[s]
				}
				if slots[s+1].Rows > 0 {
					e.Requests = &slots[s+1]
				}
				if e.Edges != nil || e.Requests != nil {
					in = append(in, e)
					edged[k] = edged[k] || e.Edges != nil
					requested[k] = requested[k] || e.Requests != nil
				}
			}
		}
		return writeInputList(ctx, st, job.InputsEdges, k, in)
	})
	return trueKeys(requested), trueKeys(edged), err
}

// WriteGatheredInputs writes each verify chunk's input file
// (InputsGathered): the range every gather task wrote for it, from their
// route tables (Transpose), in task order; chunks[i] is the chunk of
// tables[i]'s task.
func WriteGatheredInputs(ctx context.Context, st storage.FS, tables []*job.Routes, chunks []int) error {
	return Transpose(ctx, st, tables, MaxKeys(tables), func(k int, entries [][]fileinfo.Info) error {
		var in []GatheredInput
		for i, slots := range entries {
			if len(slots) == 1 && slots[0].Rows > 0 {
				in = append(in, GatheredInput{Chunk: chunks[i], Range: slots[0]})
			}
		}
		return writeInputList(ctx, st, job.InputsGathered, k, in)
	})
}

// writeInputList writes task i's input list, if it has entries.
func writeInputList[T any](ctx context.Context, st storage.Creator, kind string, i int, list []T) error {
	if len(list) == 0 {
		return nil
	}
	return writeInput(ctx, st, kind, i, list)
}

// writeInput writes task i's input, as compact JSON.
func writeInput[T any](ctx context.Context, st storage.Creator, kind string, i int, in T) error {
	name := job.TaskInputFile(kind, i)
	data, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return storage.WriteFile(ctx, st, name, data)
}

// trueKeys are the indices of set.
func trueKeys(set []bool) []int {
	var out []int
	for k, ok := range set {
		if ok {
			out = append(out, k)
		}
	}
	return out
}
