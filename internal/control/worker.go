package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/neardup/neardup/internal/dataroot"
	"github.com/neardup/neardup/internal/faults"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/queue"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/internal/stages"
	"github.com/neardup/neardup/internal/storage"
)

// Worker runs tasks from the queue for any job.
type Worker struct {
	q     *queue.Queue
	log   *slog.Logger
	slots int

	faults *faults.Set
	roots  dataroot.Roots // paths a job may name; empty for any
	obs    TaskObserver   // never nil
	// sideResultBytes: a larger result goes to a file (see storeResult).
	sideResultBytes int

	// buffers keeps what finished map tasks leave the next ones.
	buffers stage.MapBuffers

	mu    sync.Mutex
	jobs  map[string]*jobCache // by epoch and coordinator life
	order []string             // their keys, oldest first
}

// cachedJobs is how many jobs a worker remembers between tasks.
const cachedJobs = 8

// InjectFaults makes the worker fail, panic or stall at the points f names
// (see package faults). For tests of recovery only.
func (w *Worker) InjectFaults(f *faults.Set) { w.faults = f }

// Observe makes the worker tell o of every task it runs.
func (w *Worker) Observe(o TaskObserver) {
	if o == nil {
		o = noObserver{}
	}
	w.obs = o
}

// RestrictTo makes the worker refuse, as a permanent failure, a task whose
// job output or input files lie outside roots.
func (w *Worker) RestrictTo(roots dataroot.Roots) { w.roots = roots }

// jobCache is what a worker keeps of a job between tasks.
type jobCache struct {
	spec  job.Spec
	state *queue.State
	st    *storage.Dir
	// fs reads the job's files and, through their mounts (job.Mount),
	// those of the earlier jobs it is matched against.
	fs      storage.FS
	earlier []*storage.Dir
	files   *stage.Files // its plan and map results, read once
	// kept is its kept corpus's directory (job.Spec.Kept), or nil.
	kept *storage.Dir
}

// NewWorker returns a worker that runs up to slots tasks at once.
func NewWorker(q *queue.Queue, slots int, log *slog.Logger) *Worker {
	return &Worker{q: q, log: log, slots: max(slots, 1), jobs: map[string]*jobCache{}, sideResultBytes: sideResultBytes, obs: noObserver{}}
}

// Run serves tasks until ctx ends. On return, a task that was running has
// been handed back to the queue.
func (w *Worker) Run(ctx context.Context) error {
	return w.q.Serve(ctx, w.slots, w.handle, w.recordFailure, w.log)
}

// handle runs a delivered task and tells the observer.
func (w *Worker) handle(ctx context.Context, d queue.Delivery) error {
	var t Task
	if err := json.Unmarshal(d.Data, &t); err != nil {
		return queue.Permanent(fmt.Errorf("bad task message %q: %w", d.Data, err))
	}
	name := metricStage(t.Stage)
	w.obs.TaskStarted(name, d.Attempt)
	t0 := time.Now()
	err := w.run(ctx, t, d)
	if errors.Is(err, storage.ErrBadName) {
		err = queue.Permanent(err) // a forged state: no retry mends it
	}
	w.obs.TaskEnded(name, time.Since(t0), err)
	return err
}

// mapBuffers returns the buffers a task of stage s may reuse, having
// dropped the idle ones for a stage that does not use them (see
// stage.MapBuffers).
func (w *Worker) mapBuffers(s stage.Stage) *stage.MapBuffers {
	if !s.MapBuffers {
		w.buffers.Drop()
	}
	return &w.buffers
}

// run runs task t of delivery d.
func (w *Worker) run(ctx context.Context, t Task, d queue.Delivery) error {
	jc, err := w.job(ctx, t)
	if err != nil {
		return err
	}
	log := w.log.With("job", t.Job, "stage", t.Stage, "index", t.Index, "attempt", d.Attempt)
	log.Debug("task started")
	if err := w.faults.Task(ctx, t.Stage, t.Index); err != nil {
		return err
	}
	s, ok := stages.Lookup(t.Stage)
	if !ok {
		return queue.Permanent(fmt.Errorf("unknown stage %q", t.Stage))
	}
	reads := &heldRead{}
	env := &stage.Env{Spec: &jc.spec, FS: w.faults.FS(jc.fs), Cache: jc.files, Inputs: w.roots, Reads: reads, MapBuffers: w.mapBuffers(s)}
	if jc.kept != nil {
		env.Kept = w.faults.FS(jc.kept)
	}
	result, err := s.Run(ctx, env, stage.Task{Stage: t.Stage, Index: t.Index})
	if errors.Is(err, stage.ErrRefused) {
		return queue.Permanent(err)
	}
	if err != nil {
		return err
	}
	st := env.FS
	data, err := json.Marshal(result)
	if err != nil {
		return err
	}
	if data, err = storeResult(ctx, st, t, data, w.sideResultBytes); err != nil {
		return fmt.Errorf("recording %s task %d: %w", t.Stage, t.Index, err)
	}
	if err := jc.state.Put(ctx, doneKey(t.Epoch, t.Stage, t.Index), data); err != nil {
		return fmt.Errorf("recording %s task %d: %w", t.Stage, t.Index, err)
	}
	reads.tell(w.obs) // counted once the task is done: a retry reads again
	log.Debug("task done")
	return nil
}

// recordFailure writes a task that failed for good into the job's state.
func (w *Worker) recordFailure(ctx context.Context, d queue.Delivery, err error) error {
	var t Task
	if json.Unmarshal(d.Data, &t) != nil {
		w.log.Error("dropping unreadable task message", "data", string(d.Data), "err", err)
		return nil
	}
	w.log.Error("task failed for good", "job", t.Job, "stage", t.Stage, "index", t.Index, "attempts", d.Attempt, "err", err)
	var state *queue.State
	if jc, jerr := w.job(ctx, t); jerr == nil {
		state = jc.state
	} else if state, jerr = w.q.State(ctx, t.Job); jerr != nil { // a job this worker refuses still hears why
		w.log.Error("cannot record failure", "err", jerr)
		return jerr
	}
	data, _ := json.Marshal(manifest.Failure{Stage: t.Stage, Index: t.Index, Attempts: d.Attempt, Error: err.Error()})
	if perr := state.Put(ctx, failedKey(t.Epoch, t.Stage, t.Index), data); perr != nil {
		w.log.Error("cannot record failure", "err", perr)
		return perr
	}
	return nil
}

// job returns the cached state of a task's job, loading its spec from the
// job's bucket the first time.
func (w *Worker) job(ctx context.Context, t Task) (*jobCache, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if j, ok := w.jobs[t.cacheKey()]; ok {
		return j, nil
	}
	state, err := w.q.State(ctx, t.Job)
	if err != nil {
		return nil, err
	}
	v, err := state.Get(ctx, specKey)
	if err != nil {
		return nil, fmt.Errorf("job %s: reading spec: %w", t.Job, err)
	}
	var spec job.Spec
	if err := json.Unmarshal(v, &spec); err != nil {
		return nil, queue.Permanent(fmt.Errorf("job %s: bad spec: %w", t.Job, err))
	}
	if err := spec.CheckFormat(); err != nil {
		return nil, queue.Permanent(err)
	}
	if spec.Epoch != t.Epoch {
		return nil, queue.Permanent(fmt.Errorf("job %s: task of epoch %s, but the job is now in epoch %s", t.Job, t.Epoch, spec.Epoch))
	}
	if err := w.roots.Check(spec.Out); err != nil {
		return nil, queue.Permanent(fmt.Errorf("job %s: output: %w", t.Job, err))
	}
	st, err := storage.Open(ctx, spec.Out)
	if err != nil {
		return nil, err
	}
	st.Fsync = spec.Params.Fsync
	j := &jobCache{spec: spec, state: state, st: st, files: &stage.Files{St: st}}
	if j.fs, j.earlier, err = mountEarlier(ctx, st, spec.Against, w.roots); err != nil {
		st.Close()
		return nil, err
	}
	if j.kept, err = openKept(ctx, spec, w.roots); err != nil {
		j.close()
		return nil, err
	}
	w.jobs[t.cacheKey()] = j
	w.order = append(w.order, t.cacheKey())
	if len(w.order) > cachedJobs {
		w.jobs[w.order[0]].close()
		delete(w.jobs, w.order[0])
		w.order = w.order[1:]
	}
	return j, nil
}

// close releases the job's storage.
func (j *jobCache) close() {
	j.st.Close()
	for _, d := range j.earlier {
		d.Close()
	}
	if j.kept != nil {
		j.kept.Close()
	}
}

// openKept opens the directory of the job's kept corpus, checked against
// roots like the job's output; nil when the job writes none.
func openKept(ctx context.Context, spec job.Spec, roots dataroot.Roots) (*storage.Dir, error) {
	if spec.Kept == nil {
		return nil, nil
	}
	if err := roots.Check(spec.Kept.Dir); err != nil {
		return nil, queue.Permanent(fmt.Errorf("job %s: its kept corpus (--write-kept): %w", spec.Job, err))
	}
	d, err := storage.Open(ctx, spec.Kept.Dir)
	if err != nil {
		return nil, fmt.Errorf("job %s: its kept corpus (--write-kept): %w", spec.Job, err)
	}
	d.Fsync = spec.Params.Fsync
	return d, nil
}

// mountEarlier opens the outputs of the earlier jobs a job is matched
// against, each under its mount (job.Mount), for reading only: checked
// against roots like the job's own output.
func mountEarlier(ctx context.Context, st *storage.Dir, against []job.Against, roots dataroot.Roots) (storage.FS, []*storage.Dir, error) {
	var dirs []*storage.Dir
	for _, a := range against {
		err := roots.Check(a.Out)
		var d *storage.Dir
		if err == nil {
			d, err = storage.Open(ctx, a.Out)
		}
		if err != nil {
			for _, d := range dirs {
				d.Close()
			}
			return nil, nil, queue.Permanent(fmt.Errorf("earlier job %s (--against): %w", a.Job, err))
		}
		dirs = append(dirs, d)
	}
	return mountDirs(st, dirs), dirs, nil
}

func readJSON(ctx context.Context, st storage.Opener, name string, v any) error {
	data, err := storage.ReadFile(ctx, st, name)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

func writeJSON(ctx context.Context, st storage.Creator, name string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return storage.WriteFile(ctx, st, name, append(data, '\n'))
}
