package paragraphs

import (
	"context"
	"fmt"
	"slices"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/workfile"
	"github.com/neardup/neardup/pkg/records"
)

// StripCountName is the name of the stage that counts the units of
// --shingle-after-strip, between strip-units and map.
const StripCountName = "strip-count"

// StripResult is what a strip-count task wrote: the hashes of its
// partitions' units held by enough documents (Held of them, among
// Distinct unit hashes).
type StripResult struct {
	File     fileinfo.Info `json:"file"`
	Distinct int64         `json:"distinct"`
	Held     int64         `json:"held"`
}

// StripCountStage returns the stage that counts, as the paragraph pass
// does (a task per range of partitions, no process holding every hash),
// the documents holding each unit that the strip-units stage recorded,
// and writes the hashes of those held by --shingle-after-strip documents
// or more (job.StripSetWorkFile). Its Done lists them in
// job.StripSetList for the map and verify tasks, each of which holds
// them all (refused past stage.MaxStripUnits).
func StripCountStage() stage.Stage {
	return stage.Stage{
		Name: StripCountName,
		Tasks: func(ctx context.Context, j *stage.Job) ([]int, error) {
			tasks := PlanTasks(j.StripUnits, j.Spec.Params.Partitions)
			for t, in := range tasks {
				in.Docs = nil // the counts need no ids
				tasks[t] = in
			}
			if err := stage.WriteTaskInputs(ctx, j.Out, job.InputsStrip, tasks); err != nil {
				return nil, err
			}
			return stage.Seq(len(tasks)), nil
		},
		Run: func(ctx context.Context, e *stage.Env, t stage.Task) (any, error) {
			minCount := e.Spec.Params.ShingleAfterStrip
			if minCount == 0 {
				return nil, fmt.Errorf("%w: %s task %d: job %s has no --shingle-after-strip", stage.ErrRefused, StripCountName, t.Index, e.Spec.Job)
			}
			in, err := stage.ReadTaskInput[TaskInput](ctx, e.FS, job.InputsStrip, t.Index)
			if err != nil {
				return nil, err
			}
			r, err := RunStripTask(ctx, e.FS, minCount, in)
			if err != nil {
				return nil, fmt.Errorf("%s task %d (partitions %d to %d): %w", StripCountName, t.Index, in.First, in.Last, err)
			}
			return r, nil
		},
		Done: func(ctx context.Context, j *stage.Job, out *stage.Outcome) error {
			var files []fileinfo.Info
			var distinct, held int64
			err := stage.EachResult(ctx, out, func(_ int, r StripResult) error {
				files = append(files, r.File)
				distinct += r.Distinct
				held += r.Held
				return nil
			})
			if err != nil {
				return err
			}
			if held > stage.MaxStripUnits {
				return fmt.Errorf("--shingle-after-strip %d: %d units are held by that many documents, more than the %d a map or verify task holds: raise it",
					j.Spec.Params.ShingleAfterStrip, held, stage.MaxStripUnits)
			}
			j.Manifest.StripSet = &manifest.StripSet{Unit: j.Spec.Params.ParagraphUnit, MinCount: j.Spec.Params.ShingleAfterStrip, Distinct: distinct, LeftOut: held}
			j.Log.Info("units to leave out of the sketches counted", "distinct", distinct, "left_out", held, "min_count", j.Spec.Params.ShingleAfterStrip)
			return storage.WriteJSON(ctx, j.Out, job.StripSetList, files, true)
		},
	}
}

// RunStripTask counts the documents holding each unit hash of partitions
// in.First to in.Last and writes, sorted, those held by minCount
// documents or more. Run again, it writes the same bytes.
func RunStripTask(ctx context.Context, st storage.FS, minCount int, in TaskInput) (*StripResult, error) {
	res := &StripResult{}
	var held []uint64
	err := eachPart(ctx, st, in, func(part int, recs []records.BandRecord) error {
		return eachGroup(part, recs, func(group []records.BandRecord, docs int64) error {
			res.Distinct++
			if docs >= int64(minCount) {
				held = append(held, uint64(group[0].Key))
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	// Partitions are hash mod n: the hashes of several come unsorted.
	slices.Sort(held)
	res.Held = int64(len(held))
	if res.File, err = workfile.WriteHashes(ctx, st, job.StripSetWorkFile(in.First, in.Last), held); err != nil {
		return nil, err
	}
	return res, nil
}
