package gather

import (
	"context"
	"fmt"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/workfile"

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
			g, err := Gather(ctx, e.FS, t.Index, stage.ReduceResults(in, t.Index), maps, !e.Spec.Params.Index && t.Index >= e.Spec.FirstChunk)
			if err != nil {
				return nil, err
			}
			// Its ranges by verify chunk (chunks × chunks in all) go to its
			// route table, which the coordinator reads by windows.
			if err := routeRanges(ctx, e.FS, t.Index, g); err != nil {
				return nil, err
			}
			return g, nil
		},
		Done: func(ctx context.Context, j *stage.Job, out *stage.Outcome) error {
			var tables []*job.Routes
			var chunks []int
			err := stage.EachResult(ctx, out, func(i int, g job.GatherResult) error {
				j.Manifest.Counts.Gathered += g.Requests
				if g.Routes == nil && len(g.Ranges) > 0 { // recorded by an earlier version
					if err := routeRanges(ctx, j.Out, i, &g); err != nil {
						return fmt.Errorf("gather task %d: %w", i, err)
					}
				}
				tables, chunks = append(tables, g.Routes), append(chunks, g.Chunk)
				return nil
			})
			if err != nil {
				return err
			}
			return stage.WriteGatheredInputs(ctx, j.Out, tables, chunks)
		},
	}
}

// routeRanges writes the ranges of gather task i's file, by verify chunk,
// to its route table (one slot: its gather file), and leaves only the
// table in g.
func routeRanges(ctx context.Context, st storage.Creator, i int, g *job.GatherResult) error {
	r, err := workfile.WriteRoutes(ctx, st, job.RouteFile("gather", i), []string{job.GatherFile(g.Chunk)}, []map[int]fileinfo.Info{g.Ranges})
	if err != nil {
		return err
	}
	g.Routes, g.Ranges = r, nil
	return nil
}
