package reduce

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/index"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/workfile"
	"github.com/neardup/neardup/pkg/records"
)

// Stage returns the reduce stage, which groups the band records: one
// task per range of partitions (PlanTasks), writing for each partition
// the candidate edges of each chunk and the signature requests of its
// documents (see Reduce), and one bands/ file of its partitions' records
// (see ReduceTask).
func Stage() stage.Stage {
	return stage.Stage{
		Name: "reduce",
		Tasks: func(ctx context.Context, j *stage.Job) ([]int, error) {
			// Each task reads its range of partitions of every band run
			// file, listed in its input file; then the band run files'
			// list (chunks × runs) goes.
			tasks := PlanTasks(j.Mapped.Runs, j.Spec.Params.Partitions)
			if err := stage.WriteTaskInputs(ctx, j.Out, job.InputsBands, tasks); err != nil {
				return nil, err
			}
			j.Mapped.Runs = nil
			return stage.Seq(len(tasks)), nil
		},
		Run: func(ctx context.Context, e *stage.Env, t stage.Task) (any, error) {
			in, err := stage.ReadTaskInput[TaskInput](ctx, e.FS, job.InputsBands, t.Index)
			if err != nil {
				return nil, err
			}
			r, err := ReduceTask(ctx, e.FS, e.Spec, in)
			if err == nil {
				// Its ranges by chunk (partitions × chunks in all) go to its
				// route table, which the coordinator reads by windows.
				err = routeParts(ctx, e.FS, t.Index, r)
			}
			if err != nil {
				return nil, fmt.Errorf("reduce task %d (partitions %d to %d): %w", t.Index, in.First, in.Last, err)
			}
			return r, nil
		},
		Done: func(ctx context.Context, j *stage.Job, out *stage.Outcome) error {
			// The results one at a time: each holds its partitions'
			// counts and its route table, not their ranges.
			j.Reduced = &stage.Reduced{}
			var tables []*job.Routes
			var parts [][]int
			var idDocs []int64
			err := stage.EachResult(ctx, out, func(i int, t job.ReduceTaskResult) error {
				if t.Routes == nil { // recorded by an earlier version: ranges in Parts
					if err := routeParts(ctx, j.Out, i, &t); err != nil {
						return fmt.Errorf("reduce task %d: %w", i, err)
					}
				}
				foldReduces(j.Manifest, t.Parts)
				j.Manifest.Counts.DuplicateIDs += t.DuplicateIDs
				idDocs = append(idDocs, t.DuplicateIDDocs...)
				j.Reduced.BandFiles = append(j.Reduced.BandFiles, index.BandFile{File: t.Bands, First: t.First, Last: t.Last})
				tables, parts = append(tables, t.Routes), append(parts, partsOf(t.Parts))
				return nil
			})
			if err != nil {
				return err
			}
			slices.SortFunc(j.Reduced.BandFiles, func(a, b index.BandFile) int { return cmp.Compare(a.First, b.First) })
			if err := cleanBands(ctx, j); err != nil {
				return err
			}
			foldDuplicateIDs(ctx, j, idDocs)
			j.Reduced.GatherChunks, j.Reduced.VerifyChunks, err = stage.WriteEdgeInputs(ctx, j.Out, tables, parts)
			return err
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

// routeParts writes the ranges of reduce task i's edge and request files,
// by chunk, to its route table (two slots a partition of t.Parts: its
// edge file, its request file), and leaves only the table in t.
func routeParts(ctx context.Context, st storage.Creator, i int, t *job.ReduceTaskResult) error {
	var slots []string
	var ranges []map[int]fileinfo.Info
	for k, p := range t.Parts {
		slots = append(slots, job.EdgeFile(p.Part), job.RequestFile(p.Part))
		ranges = append(ranges, p.EdgeFiles, p.RequestFiles)
		t.Parts[k].EdgeFiles, t.Parts[k].RequestFiles = nil, nil
	}
	var err error
	t.Routes, err = workfile.WriteRoutes(ctx, st, job.RouteFile("reduce", i), slots, ranges)
	return err
}

// partsOf are the partitions of results.
func partsOf(results []job.ReduceResult) []int {
	parts := make([]int, len(results))
	for i, r := range results {
		parts[i] = r.Part
	}
	return parts
}

// foldDuplicateIDs adds the ids of a few of the documents the reduce
// tasks found sharing an id with another (docs, the first of each of
// their ids) to the manifest, read from their docs/ files (where one
// cannot be read, the job says so and goes on without it: an example is
// not worth failing the job).
func foldDuplicateIDs(ctx context.Context, j *stage.Job, docs []int64) {
	slices.Sort(docs)
	docs = docs[:min(len(docs), duplicateIDExamples)]
	byChunk := map[int][]int64{}
	for _, d := range docs {
		byChunk[job.ChunkOf(d)] = append(byChunk[job.ChunkOf(d)], d)
	}
	ids := map[int64]string{}
	for _, c := range slices.Sorted(maps.Keys(byChunk)) {
		err := pqfile.Stream(ctx, j.Out, job.DocFile(c), nil, 4096, func(rows []records.DocRecord) error {
			for _, r := range rows {
				if slices.Contains(byChunk[c], r.Doc) {
					ids[r.Doc] = r.ID
				}
			}
			return nil
		})
		if err != nil {
			j.Log.Warn("the ids of documents that share one could not be read", "file", job.DocFile(c), "err", err)
		}
	}
	for _, d := range docs {
		if id, ok := ids[d]; ok {
			j.Manifest.DuplicateIDExamples = append(j.Manifest.DuplicateIDExamples, id)
		}
	}
}

// cleanBands removes what the reduce stage no longer needs: the band
// run files, once every map task succeeded (a rerun that retries failed
// chunks reduces again and reads them all) unless the work area is kept, and the bands/ files of an
// earlier run of the job that cut its partitions otherwise (map tasks
// retried since). Each removal may be done again: a coordinator that
// stopped here runs Done again. An object store's transient errors (a
// 503 SlowDown, a reset connection) are retried for cleanRetry.
func cleanBands(ctx context.Context, j *stage.Job) error {
	if len(j.Manifest.Failures) == 0 && !j.KeepWork {
		if err := stage.Retried(ctx, func() error { return j.Out.Remove(ctx, job.BandRunsDir) }); err != nil {
			return fmt.Errorf("removing the band run files: %w", err)
		}
	}
	keep := map[string]bool{}
	for _, f := range j.Reduced.BandFiles {
		keep[f.File.Name] = true
	}
	return stage.RemoveOthers(ctx, j.Out, job.BandsDir, keep)
}
