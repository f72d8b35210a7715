package kept

import (
	"context"
	"log/slog"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/storage"
)

// Task is a task of a job's write-kept stage: the job's input files First
// to Last (of its plan, which are its manifest's inputs), each written
// whole, into the names Write gives them.
type Task struct {
	First int `json:"first"`
	Last  int `json:"last"`
	// Docs are the docs/ files that list their documents, in the order
	// of their chunks, as the map tasks recorded them (each is checked
	// against its record before it is read). They may list documents of
	// other inputs too, before and after theirs.
	Docs []fileinfo.Info `json:"docs"`
	// Dups are the ordinals of the job's duplicates among the documents
	// of Docs, sorted (those of other inputs too).
	Dups []int64 `json:"dups"`
	// Paragraphs are the job's paragraphs/ files, from which a corpus
	// stripped of repeated units (TaskOptions.Strip) reads them.
	Paragraphs []fileinfo.Info `json:"paragraphs,omitempty"`
}

// TaskOptions is what a task of the write-kept stage writes with.
type TaskOptions struct {
	// Job holds the job's files; Dir is the corpus's directory.
	Job storage.Opener
	Dir storage.Creator
	// Inputs are the job's inputs, in the order of its plan.
	Inputs []job.Input
	Params job.Params
	// Format is one of Formats (FormatAuto when empty).
	Format string
	// Check refuses an input file outside the worker's data roots, once
	// opened (the stage checks each by its path before); nil allows any.
	Check func(path string) error
	// Open opens an input file; nil: storage.OpenFile.
	Open func(ctx context.Context, path string) (storage.File, error)
	Log  *slog.Logger
	// Strip strips the repeated units (--strip-paragraphs); nil for none.
	Strip *job.Strip
}

// checkFunc is a func as a checker.
type checkFunc func(path string) error

func (f checkFunc) Check(path string) error { return f(path) }

// WriteTask writes the inputs of t into o.Dir, each as Write writes it,
// and returns what it wrote of each. Written again, a task writes the same
// bytes into the same names: a task is idempotent, and its files appear
// whole when complete.
func WriteTask(ctx context.Context, o TaskOptions, t Task) (*TaskSummary, error) {
	if o.Format == "" {
		o.Format = FormatAuto
	}
	if err := CheckFormat(o.Format, nil); err != nil {
		return nil, err
	}
	if err := CheckStrip(o.Strip, o.Format); err != nil {
		return nil, err
	}
	w := &writer{src: o.Job, dst: o.Dir, inputs: o.Inputs, params: o.Params, format: o.Format,
		dups: t.Dups, open: o.Open, log: o.Log}
	if o.Check != nil {
		w.checks = []checker{checkFunc(o.Check)}
	}
	if o.Strip != nil {
		var err error
		if w.strip, err = loadStripper(ctx, o.Job, t.Paragraphs, o.Params, *o.Strip); err != nil {
			return nil, err
		}
	}
	files, err := w.part(ctx, t)
	if err != nil {
		return nil, err
	}
	sum := &TaskSummary{Files: files}
	if w.strip != nil {
		sum.Stripped, sum.StrippedBytes = w.strip.Units, w.strip.Bytes
	}
	return sum, nil
}

// TaskSummary is what a task wrote: each input's summary, and the units
// it stripped (--strip-paragraphs) and their bytes.
type TaskSummary struct {
	Files         []FileSummary `json:"files"`
	Stripped      int64         `json:"stripped,omitempty"`
	StrippedBytes int64         `json:"stripped_bytes,omitempty"`
}
