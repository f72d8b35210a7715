package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/neardup/neardup/internal/control"
)

// Errors a caller may tell apart with errors.Is.
var (
	// ErrInvalidOptions is a bad field of Options or IndexOptions; the
	// message names it.
	ErrInvalidOptions = errors.New("neardup: invalid options")
	// ErrComplete is an output that already holds a complete job (set
	// Options.Overwrite to replace it).
	ErrComplete = errors.New("neardup: the output already holds a complete job (set Options.Overwrite to replace it)")
	// ErrJobBusy is an output or a job that another coordinator is
	// running.
	ErrJobBusy = errors.New("neardup: another coordinator is running this job")
	// ErrNotComplete is an output that holds no complete job: unfinished,
	// partial or none at all.
	ErrNotComplete = errors.New("neardup: the output is not a complete job")
)

// Status is how a job ended.
type Status string

// The statuses of a finished job.
const (
	// StatusComplete: every input record was read or listed as
	// rejected, and the output is marked _SUCCESS.
	StatusComplete Status = "complete"
	// StatusPartial: some map tasks failed for good, and the documents of
	// their chunks are missing. The output has no _SUCCESS; running the
	// same job again retries them.
	StatusPartial Status = "partial"
)

// Result describes a finished job. Its datasets are read with Pairs,
// Clusters, Duplicates and Rejects (Out as their out), or as Parquet files
// under Out by any Parquet reader.
type Result struct {
	// Out is the output's location: an absolute path or a URL.
	Out string
	// Job is the job's name (the NATS state of the job is named after it).
	Job    string
	Status Status
	Counts Counts
	// FailedTasks is the number of tasks that failed for good.
	FailedTasks int
	// Warnings name what a person should look at before dropping
	// documents (also in manifest.json and report.html).
	Warnings []string
	// Duration is how long the job took.
	Duration time.Duration
}

// Counts are the main numbers of a job (manifest.json holds them all).
type Counts struct {
	// InputBytes is the size of the inputs read.
	InputBytes int64
	// Docs is the number of documents read, Rejected the records skipped
	// (rejects/), Empty the documents without a shingle.
	Docs, Rejected, Empty int64
	// Pairs is the number of near-duplicate pairs listed in pairs/.
	Pairs int64
	// ExactGroups is the number of groups of documents with identical
	// shingle sets, ExactDuplicates their documents other than the first.
	ExactGroups, ExactDuplicates int64
	// Clusters is the number of clusters of two or more documents
	// (clusters.parquet).
	Clusters int64
	// Duplicates is the number of documents to drop (duplicates.parquet).
	Duplicates int64
}

// Complete reports whether the job is complete (StatusComplete).
func (r *Result) Complete() bool { return r.Status == StatusComplete }

// Run runs a dedup job to its end and describes it. By default the job
// runs in this process: an embedded NATS server, with its store in the
// output's work area (for an output in object storage, in the user's cache
// directory), and Options.Workers workers. With Options.NATSURL it
// runs on the workers of that server instead.
//
// A job stopped by ctx, or by a failure, is resumable: Run with the same
// options picks it up where it stopped. Run refuses an output holding a
// complete job (ErrComplete) unless Options.Overwrite. A job some of
// whose map tasks failed for good ends with StatusPartial and no error.
func Run(ctx context.Context, o Options) (*Result, error) {
	cfg, err := o.config()
	if err != nil {
		return nil, err
	}
	m, err := control.Run(ctx, cfg)
	if errors.Is(err, control.ErrComplete) {
		return nil, fmt.Errorf("%w: %s", ErrComplete, cfg.Out)
	}
	if errors.Is(err, control.ErrJobBusy) {
		return nil, &busyError{out: cfg.Out, err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("neardup: job into %s: %w", cfg.Out, err)
	}
	return result(cfg.Out, m), nil
}

// busyError is a job another coordinator runs: it is ErrJobBusy, and says
// what the control plane found.
type busyError struct {
	out string
	err error
}

func (e *busyError) Error() string { return fmt.Sprintf("neardup: job into %s: %v", e.out, e.err) }

func (e *busyError) Is(target error) bool { return target == ErrJobBusy }

func (e *busyError) Unwrap() error { return e.err }
