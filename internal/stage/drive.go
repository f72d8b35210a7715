package stage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/index"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/storage"
)

// Job is a job as its stages see it on the coordinator: what they read,
// and what each leaves for the stages after it and for the job's end.
type Job struct {
	Spec *job.Spec
	Plan *job.Plan
	// Out is the job's output; FS is Out with the outputs of the earlier
	// jobs it is matched against under their mounts (job.Mount).
	Out storage.FS
	FS  storage.FS
	// Earlier are the map results of the earlier jobs' chunks (--against),
	// their files named through their mounts.
	Earlier  []job.MapResult
	Manifest *manifest.Manifest
	Log      *slog.Logger
	// KeepWork keeps the work area's files that a stage would remove
	// once done (the band run files: see cleanBands).
	KeepWork bool
	// WholeBytes bounds what the one task of a job whose cluster stage
	// runs as one task holds (see cluster.WholeBytes): 0 means
	// cluster.WholeBytes, a negative bound never.
	WholeBytes int64
	// Kept is the directory of the job's kept corpus (Spec.Kept), which
	// the coordinator has claimed (kept.Claim); nil when it writes none.
	Kept *storage.Dir

	// What each stage leaves for the stages after it and for the job's
	// end, set by its Done (or Steps).
	Mapped   *Mapped
	Reduced  *Reduced
	Verified []job.VerifyResult
	Clusters *ClusterStats
	// ParagraphFiles are the paragraphs/ files of the paragraph pass
	// (--paragraphs), from which a kept corpus strips repeated units.
	ParagraphFiles []fileinfo.Info
	// UnitDocFiles are the paragraph pass's repeated bytes by document
	// (job.UnitDocsWorkFile), which the job's end tallies by host.
	UnitDocFiles []fileinfo.Info
	// UnitTable is the unit table the paragraph pass wrote (--paragraphs
	// with --index), which the index lists; nil for none.
	UnitTable *index.UnitTable
	// StripUnits are the results of the strip-units stage
	// (--shingle-after-strip): each chunk's unit run files.
	StripUnits []job.MapResult

	// cleanups are the removals of work files that a stage's Done
	// started in the background (RemoveLater).
	cleanups errgroup.Group
}

// RemoveLater removes the work area's directory dir in the background,
// while the stages after the caller's run: for files no later stage
// reads, whose removal (the kernel freeing their cached pages) would
// otherwise take the job's last moments on one core. The job's end
// waits for it (WaitRemovals); a removal cut short is done again with
// the rest of the work area.
func (j *Job) RemoveLater(ctx context.Context, dir string) {
	j.cleanups.Go(func() error {
		if err := Retried(ctx, func() error { return j.Out.Remove(ctx, dir) }); err != nil {
			return fmt.Errorf("removing %s: %w", dir, err)
		}
		return nil
	})
}

// WaitRemovals waits for the removals RemoveLater started, and returns
// the first error of one.
func (j *Job) WaitRemovals() error { return j.cleanups.Wait() }

// Mapped is what the map stage leaves.
type Mapped struct {
	// Own are the map results of the job's own chunks, without their band
	// run files; All, those and the earlier jobs' (--against), by chunk.
	Own []job.MapResult
	All map[int]job.MapResult
	// Runs are the job's own chunks' results with their band run files,
	// from which the reduce stage plans its tasks; it lets them go (nil)
	// once it has.
	Runs []job.MapResult
}

// Reduced is what the reduce stage leaves.
type Reduced struct {
	// BandFiles are the bands/ files the reduce tasks wrote, by partition
	// range: the index lists them.
	BandFiles []index.BandFile
	// GatherChunks are the chunks whose documents a verify task asked
	// for (the gather stage's tasks), VerifyChunks the chunks with
	// candidate pairs or group claims (the verify stage's).
	GatherChunks, VerifyChunks []int
}

// Executor runs a stage's tasks: on the workers of a queue, or in this
// process.
type Executor interface {
	// Execute runs the tasks of s with the given indices that are not done
	// yet and waits until each is done or has failed for good.
	Execute(ctx context.Context, s Stage, indices []int) (*Outcome, error)
	// Clear forgets what earlier runs of the job recorded of s's tasks.
	Clear(ctx context.Context, s Stage) error
}

// Drive runs stages in order through ex. A stage that ran tasks in this
// run invalidates what earlier runs recorded of the stages after it (map
// tasks retried after a partial run: what was reduced does not hold their
// documents), so those start over; a stage of steps always does. A task
// that failed for good fails the job unless its stage MayFail and the job
// is not strict.
func Drive(ctx context.Context, j *Job, stages []Stage, ex Executor) error {
	fresh := false
	for _, s := range stages {
		if fresh || s.Steps != nil {
			if err := ex.Clear(ctx, s); err != nil {
				return fmt.Errorf("clearing the %s stage: %w", s.Name, err)
			}
		}
		if s.Steps != nil {
			if err := s.Steps(ctx, j, stepRunner{ex: ex, log: j.Log}); err != nil {
				return err
			}
			continue
		}
		indices, err := s.Tasks(ctx, j)
		if err != nil {
			return fmt.Errorf("%s stage: %w", s.Name, err)
		}
		out, err := ex.Execute(ctx, s, indices)
		if err != nil {
			return err
		}
		fresh = fresh || out.Published > 0
		j.Manifest.Stages = append(j.Manifest.Stages, out.Timing)
		j.Manifest.Failures = append(j.Manifest.Failures, out.Failures...)
		if err := checkFailures(out, s.MayFail && !j.Spec.Params.Strict, j.Log); err != nil {
			return err
		}
		if err := s.Done(ctx, j, out); err != nil {
			return err
		}
	}
	return nil
}

// checkFailures fails on the tasks of out that failed for good, unless
// mayFail.
func checkFailures(out *Outcome, mayFail bool, log *slog.Logger) error {
	if len(out.Failures) == 0 {
		return nil
	}
	var msgs []string
	for _, f := range out.Failures {
		msgs = append(msgs, fmt.Sprintf("%s task %d failed after %d attempts: %s", f.Stage, f.Index, f.Attempts, f.Error))
		log.Error("task failed", "stage", f.Stage, "index", f.Index, "attempts", f.Attempts, "err", f.Error)
	}
	if mayFail {
		return nil
	}
	return errors.New(strings.Join(msgs, "; "))
}

// stepRunner runs the steps of a stage of steps through an Executor.
type stepRunner struct {
	ex  Executor
	log *slog.Logger
}

// RunTasks runs one step's tasks and returns their results in order; a
// task that failed for good fails the job.
func (r stepRunner) RunTasks(ctx context.Context, step string, n int) ([][]byte, error) {
	out, err := r.ex.Execute(ctx, Stage{Name: step}, Seq(n))
	if err != nil {
		return nil, err
	}
	if err := checkFailures(out, false, r.log); err != nil {
		return nil, err
	}
	r.log.Debug("cluster step done", "step", step, "tasks", n, "seconds", out.Timing.Seconds)
	results := make([][]byte, n)
	for i := range results {
		if results[i], err = out.Results.Result(ctx, i); err != nil {
			return nil, fmt.Errorf("%s task %d: result: %w", step, i, err)
		}
	}
	return results, nil
}

// Files is a Cache that reads the job's plan and stage file from its
// output, once.
type Files struct {
	St storage.Opener

	mu   sync.Mutex
	plan *job.Plan
	maps map[int]job.MapResult
}

// Plan reads job.PlanFile.
func (f *Files) Plan(ctx context.Context) (*job.Plan, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.plan == nil {
		var p job.Plan
		if err := storage.ReadJSON(ctx, f.St, job.PlanFile, &p); err != nil {
			return nil, err
		}
		f.plan = &p
	}
	return f.plan, nil
}

// Maps reads job.MapStageFile.
func (f *Files) Maps(ctx context.Context) (map[int]job.MapResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.maps == nil {
		var list []job.MapResult
		if err := storage.ReadJSON(ctx, f.St, job.MapStageFile, &list); err != nil {
			return nil, err
		}
		f.maps = make(map[int]job.MapResult, len(list))
		for _, m := range list {
			f.maps[m.Chunk] = m
		}
	}
	return f.maps, nil
}

// EachResult decodes a stage's task results one at a time, in task
// order, and calls fn with each.
func EachResult[T any](ctx context.Context, out *Outcome, fn func(i int, r T) error) error {
	for _, i := range out.Done {
		var r T
		data, err := out.Results.Result(ctx, i)
		if err == nil {
			err = json.Unmarshal(data, &r)
		}
		if err != nil {
			return fmt.Errorf("%s task %d: result: %w", out.Timing.Name, i, err)
		}
		if err := fn(i, r); err != nil {
			return err
		}
	}
	return nil
}

// DecodeResults decodes a stage's task results in task order: for a
// stage whose results are of a chunk each (map, verify).
func DecodeResults[T any](ctx context.Context, out *Outcome) ([]T, error) {
	list := make([]T, 0, len(out.Done))
	err := EachResult(ctx, out, func(_ int, r T) error {
		list = append(list, r)
		return nil
	})
	return list, err
}

// seq is 0, 1, ..., n-1.
func Seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
