package stage

import (
	"context"
	"errors"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/textstore"
	"github.com/neardup/neardup/internal/workfile"
)

// Stage is one stage of a job, as a value: what the coordinator plans and
// folds (Tasks, Done) and what a worker runs (Run). Stages returns a job's
// sequence; a worker finds a task's stage with Lookup. A new stage is one
// file defining its Stage plus its line in stages; one whose results later
// stages read also leaves them in a field of Job (its Done) and, for their
// tasks, in task input files (see taskinputs.go).
type Stage struct {
	// Name names the stage's tasks: a task of the stage has Task.Stage
	// Name, or, for a stage of Steps, Name + "-" + the step.
	Name string
	// Tasks plans the stage's tasks (their indices, ascending) from what
	// the stages before it left in j. Coordinator side; nil for a stage
	// of Steps.
	Tasks func(ctx context.Context, j *Job) ([]int, error)
	// Steps, for a stage whose tasks come in steps each planned from the
	// last (cluster), drives them all through run, replacing Tasks and
	// Done. Such a stage runs whole on every run of the job: what an
	// earlier run recorded of it is cleared first.
	Steps func(ctx context.Context, j *Job, run TaskRunner) error
	// Run runs one task on a worker; its result is recorded as JSON.
	Run func(ctx context.Context, e *Env, t Task) (any, error)
	// Done folds the results of the stage's tasks into j: the manifest,
	// the inputs of the next stages' tasks. Coordinator side.
	Done func(ctx context.Context, j *Job, out *Outcome) error
	// Count, if set, tells progress the documents and input bytes a
	// task's result stands for.
	Count func(result []byte) (docs, bytes int64)
	// MapBuffers: its tasks use the worker's MapBuffers (Env); a task
	// of a stage that does not makes the worker drop the idle ones.
	MapBuffers bool
	// MayFail: a task that fails for good leaves the job partial (its
	// documents missing, listed in the manifest) instead of failing it,
	// unless the job is strict.
	MayFail bool
}

// Task names one task of a stage on a worker.
type Task struct {
	Stage string // the stage's name, or its step's
	Index int
}

// Outcome is what one run of a stage's tasks produced.
type Outcome struct {
	// Done are the indices of the tasks done, ascending; Results reads
	// their JSON results, one at a time (see EachResult): a stage's
	// results together are not held.
	Done    []int
	Results Results
	// Failures are the tasks that failed for good, by index.
	Failures []manifest.Failure
	// Published counts the tasks put on the queue in this run: the others
	// were done by an earlier run of the job.
	Published int
	Timing    manifest.StageTiming
}

// Results reads the JSON results of a stage's tasks.
type Results interface {
	// Result returns task i's result; its errors need not name the task.
	Result(ctx context.Context, i int) ([]byte, error)
}

// ResultMap is Results held in memory, by task index.
type ResultMap map[int][]byte

// Result returns task i's result.
func (m ResultMap) Result(_ context.Context, i int) ([]byte, error) {
	r, ok := m[i]
	if !ok {
		return nil, errors.New("none recorded")
	}
	return r, nil
}

// Env is what a task runs with on a worker.
type Env struct {
	Spec *job.Spec
	// FS holds the job's files and, through their mounts (job.Mount),
	// those of the earlier jobs it is matched against.
	FS storage.FS
	// Cache is what the worker keeps of the job between its tasks.
	Cache Cache
	// Inputs refuses input files outside the worker's data roots; nil
	// allows any.
	Inputs Checker
	// Reads hears what each map task read (metrics); nil for none.
	Reads ReadObserver
	// Kept is the directory of the job's kept corpus (job.Spec.Kept),
	// checked against the worker's data roots; nil when the job writes
	// none.
	Kept storage.FS
	// MapBuffers are what the worker's map tasks reuse; nil: each task
	// makes its own.
	MapBuffers *MapBuffers
}

// MapBuffers are the buffers a worker's map tasks reuse, one task after
// another: the text stores' zstd encoders and frame buffers (about 29
// MiB a task) and the band records' memory (about 18 MiB for documents
// of 2.4 KB). Idle, they still count in the live heap, which the
// collector lets grow twice over (GOGC 200; four times until
// 2026-11-30) before it collects: a worker drops them when it starts a
// task of a stage that does not use them (Stage.MapBuffers), so that the
// stages after map do not grow their heap by that much more (the 100k
// benchmark job at GOGC 400: a peak RSS of 485 against 759 MB, 122,000
// against 190,000 page faults).
type MapBuffers struct {
	Text  textstore.Encoders
	Bands workfile.BandBuffers
}

// Drop lets the idle buffers go.
func (b *MapBuffers) Drop() {
	b.Text.Drop()
	b.Bands.Drop()
}

// Cache loads, once per job on a worker, what many tasks read.
type Cache interface {
	// Plan is the job's plan of chunks.
	Plan(ctx context.Context) (*job.Plan, error)
	// Maps are the map results of every chunk the job reads (its own and
	// the earlier jobs'), by chunk, without their band files.
	Maps(ctx context.Context) (map[int]job.MapResult, error)
}

// Checker refuses paths a worker must not touch.
type Checker interface {
	Check(path string) error
}

// ReadObserver hears what a map task read: docs documents, inputBytes of
// input holding textBytes of text, and the records rejected, by the kind
// of their reason (RejectKind).
type ReadObserver interface {
	Read(docs, inputBytes, textBytes int64, rejects map[string]int64)
}

// ErrRefused marks a task that no retry mends: its stage does not have it,
// or it names files outside the worker's data roots.
var ErrRefused = errors.New("task refused")

// TaskRunner runs the tasks of one step of the cluster stage: RunTask
// with the step's name and every index below n, wherever it likes, and
// returns each task's result as JSON, in index order. It fails if any
// task failed for good.
type TaskRunner interface {
	RunTasks(ctx context.Context, step string, n int) ([][]byte, error)
}
