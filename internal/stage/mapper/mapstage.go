package mapper

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/neardup/neardup/internal/stage"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/storage"
)

// Stage returns the map stage, which reads the inputs: one task per
// chunk of the plan, writing its documents, signatures, rejects and band files (see Map). A chunk whose
// task fails for good leaves the job partial.
func Stage() stage.Stage {
	return stage.Stage{
		Name:       "map",
		MayFail:    true,
		MapBuffers: true,
		Tasks:      chunkTasks,
		Run: func(ctx context.Context, e *stage.Env, t stage.Task) (any, error) {
			chunk, err := taskChunk(ctx, e, t)
			if err != nil {
				return nil, err
			}
			r, err := MapShared(ctx, e.FS, e.Spec, chunk, e.MapBuffers)
			if err != nil {
				return nil, fmt.Errorf("map chunk %d: %w", t.Index, err)
			}
			if e.Reads != nil {
				e.Reads.Read(r.Docs, r.InputBytes, r.TextBytes, r.RejectReasons)
			}
			return r, nil
		},
		Count: countMap,
		Done: func(ctx context.Context, j *stage.Job, out *stage.Outcome) error {
			list, err := stage.DecodeResults[job.MapResult](ctx, out)
			if err != nil {
				return err
			}
			foldMaps(j.Manifest, list, len(out.Failures))
			foldPlanned(j.Manifest, j.Plan.Skipped)
			if len(list) == 0 && len(j.Plan.Chunks) > 0 {
				return fmt.Errorf("every map task failed; the first: %s", out.Failures[0].Error)
			}
			// What planning rejected is listed in rejects/ too; a dataset
			// no map task wrote a file of still holds its schema.
			planned, err := WritePlannedRejects(ctx, j.Out, j.Plan)
			if err != nil {
				return err
			}
			if err := CompleteMapOutputs(ctx, j.Out, list, planned); err != nil {
				return err
			}
			// The reduce stage plans its tasks from the band run files;
			// the other stages read the rest: the earlier jobs' chunks
			// (--against) too, read through their mounts.
			own := slimMaps(list)
			j.Mapped = &stage.Mapped{Own: own, All: make(map[int]job.MapResult, len(j.Earlier)+len(list)), Runs: list}
			all := append(slices.Clone(j.Earlier), own...)
			for _, m := range all {
				j.Mapped.All[m.Chunk] = m
			}
			return storage.WriteJSON(ctx, j.Out, job.MapStageFile, all, true)
		},
	}
}

// taskChunk is the chunk of the plan that task t of a stage of a task a
// chunk reads, its input files checked against the worker's data roots.
func taskChunk(ctx context.Context, e *stage.Env, t stage.Task) (job.Chunk, error) {
	plan, err := e.Cache.Plan(ctx)
	if err != nil {
		return job.Chunk{}, err
	}
	i := t.Index - plan.FirstChunk
	if i < 0 || i >= len(plan.Chunks) {
		return job.Chunk{}, fmt.Errorf("%w: %s task %d: the plan has chunks %d to %d", stage.ErrRefused, t.Stage, t.Index, plan.FirstChunk, plan.FirstChunk+len(plan.Chunks)-1)
	}
	for _, pc := range plan.Chunks[i].Pieces {
		if e.Inputs == nil {
			break
		}
		if err := e.Inputs.Check(pc.Path); err != nil {
			return job.Chunk{}, fmt.Errorf("%w: job %s: input: %w", stage.ErrRefused, e.Spec.Job, err)
		}
	}
	return plan.Chunks[i], nil
}

// chunkTasks are the tasks of a stage of a task a chunk: the plan's
// chunks.
func chunkTasks(_ context.Context, j *stage.Job) ([]int, error) {
	s := make([]int, len(j.Plan.Chunks))
	for i := range s {
		s[i] = j.Plan.FirstChunk + i
	}
	return s, nil
}

// countMap tells progress the documents and input bytes of a map
// result.
func countMap(result []byte) (int64, int64) {
	var r job.MapResult
	if json.Unmarshal(result, &r) != nil {
		return 0, 0
	}
	return r.Docs, r.InputBytes
}

// foldPlanned adds the files planning rejected (not regular files, see
// job.Skipped) to the manifest's rejects, by the kind of their reason.
func foldPlanned(m *manifest.Manifest, skipped []job.Skipped) {
	reasons := map[string]int64{}
	for _, sk := range skipped {
		if sk.Rejected {
			m.Counts.Rejected++
			reasons[RejectKind(sk.Reason)]++
		}
	}
	addReasons(m, reasons)
}

// addReasons adds rejects counted by kind to the manifest's, most
// frequent first.
func addReasons(m *manifest.Manifest, reasons map[string]int64) {
	for kind, n := range reasons {
		i := slices.IndexFunc(m.RejectReasons, func(r manifest.ReasonCount) bool { return r.Reason == kind })
		if i < 0 {
			m.RejectReasons = append(m.RejectReasons, manifest.ReasonCount{Reason: kind})
			i = len(m.RejectReasons) - 1
		}
		m.RejectReasons[i].Count += n
	}
	slices.SortFunc(m.RejectReasons, func(x, y manifest.ReasonCount) int {
		return cmp.Or(cmp.Compare(y.Count, x.Count), strings.Compare(x.Reason, y.Reason))
	})
}

// foldMaps adds what the map tasks read to the manifest.
func foldMaps(m *manifest.Manifest, list []job.MapResult, failed int) {
	reasons := map[string]int64{}
	scripts := map[string]*job.ScriptStats{}
	changed := map[string]bool{}
	for _, r := range list {
		for name, st := range r.Scripts {
			if scripts[name] == nil {
				scripts[name] = &job.ScriptStats{}
			}
			scripts[name].Merge(st)
			m.Counts.Thin += st.Thin
		}
		for _, f := range r.ChangedFiles {
			changed[f] = true
		}
		for kind, n := range r.RejectReasons {
			reasons[kind] += n
		}
		m.Counts.InputBytes += r.InputBytes
		m.Counts.TextBytes += r.TextBytes
		m.Counts.Docs += r.Docs
		m.Counts.Rejected += r.Rejected
		m.Counts.UnreadFiles += r.UnreadFiles
		m.Counts.UnreadBytes += r.UnreadBytes
		m.Counts.DamagedRanges += r.DamagedRanges
		m.Counts.DamagedBytes += r.DamagedBytes
		m.Counts.DamagedRows += r.DamagedRows
		m.Counts.Empty += r.Empty
		m.Counts.Shingles += r.Shingles
		m.Counts.BandRecords += r.BandRecords
	}
	m.ChangedInputs = slices.Sorted(maps.Keys(changed))
	m.Counts.ChangedFiles = int64(len(changed))
	addReasons(m, reasons)
	m.Scripts = job.SummariseScripts(scripts)
	m.Counts.FailedChunks = int64(failed)
}
