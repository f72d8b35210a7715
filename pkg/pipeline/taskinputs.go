package pipeline

import (
	"context"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
)

// A stage's results form a matrix (chunks × partitions of band files,
// partitions × chunks of edge and request ranges, chunks × chunks of
// gathered ranges): a task needs one column of it. The coordinator writes
// each task's column to its own file (job.TaskInputFile) before the tasks
// run, so a task reads kilobytes instead of every result of the stage
// (hundreds of MB at 10M documents), and the workers' memory does not grow
// with the number of chunks times partitions.

// inputWriters bounds the task input files written at once (object
// storage: one request each).
const inputWriters = 16

// writeTaskInputs writes each task's input list to its file.
func writeTaskInputs[T any](ctx context.Context, st storage.Creator, kind string, inputs map[int][]T) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(inputWriters)
	for _, i := range sortedKeys(inputs) {
		g.Go(func() error { return writeJSON(ctx, st, job.TaskInputFile(kind, i), inputs[i]) })
	}
	return g.Wait()
}

// readTaskInputs reads a task's input list.
func readTaskInputs[T any](ctx context.Context, st storage.Opener, kind string, i int) ([]T, error) {
	var list []T
	if err := readJSON(ctx, st, job.TaskInputFile(kind, i), &list); err != nil {
		return nil, err
	}
	return list, nil
}

// reduceInputs gives each partition the band files of every chunk: its
// own band file and, for a chunk of several runs, the side file listing
// them. Partitions without band files get an empty list.
func reduceInputs(maps []job.MapResult, partitions int) map[int][]job.MapResult {
	in := make(map[int][]job.MapResult, partitions)
	for p := range partitions {
		in[p] = []job.MapResult{}
	}
	for _, m := range maps {
		for p := range partitions {
			info, ok := m.BandFiles[p]
			if !ok && m.BandRuns == nil {
				continue
			}
			col := job.MapResult{Chunk: m.Chunk, BandRuns: m.BandRuns}
			if ok {
				col.BandFiles = map[int]pqfile.Info{p: info}
			}
			in[p] = append(in[p], col)
		}
	}
	return in
}

// slimMaps is the map results without their band files, which only the
// reduce tasks read (through reduceInputs): what gather, verify and the
// cluster stage's workers load.
func slimMaps(maps []job.MapResult) []job.MapResult {
	out := slices.Clone(maps)
	for i := range out {
		out[i].BandFiles = nil
	}
	return out
}

// edgeInputs gives each chunk the ranges that every partition wrote for
// it: its edges (for its verify task) and the requests for its documents
// (for its gather task).
func edgeInputs(reduces []job.ReduceResult) map[int][]job.ReduceResult {
	in := map[int][]job.ReduceResult{}
	add := func(r job.ReduceResult, c int) *job.ReduceResult {
		list := in[c]
		if n := len(list); n > 0 && list[n-1].Part == r.Part {
			return &list[n-1]
		}
		in[c] = append(list, job.ReduceResult{Part: r.Part, EdgeFiles: map[int]pqfile.Info{}, RequestFiles: map[int]pqfile.Info{}})
		return &in[c][len(in[c])-1]
	}
	for _, r := range reduces {
		for _, c := range sortedKeys(r.EdgeFiles) {
			add(r, c).EdgeFiles[c] = r.EdgeFiles[c]
		}
		for _, c := range sortedKeys(r.RequestFiles) {
			add(r, c).RequestFiles[c] = r.RequestFiles[c]
		}
	}
	return in
}

// gatheredInputs gives each verify chunk the range every gather task
// wrote for it.
func gatheredInputs(gathers []job.GatherResult) map[int][]job.GatherResult {
	in := map[int][]job.GatherResult{}
	for _, g := range gathers {
		for _, c := range sortedKeys(g.Ranges) {
			in[c] = append(in[c], job.GatherResult{Chunk: g.Chunk, Ranges: map[int]pqfile.Info{c: g.Ranges[c]}})
		}
	}
	return in
}
