// Package writekept is the write-kept stage: after the cluster stage, the
// job's inputs written again without their duplicates into the kept
// corpus's directory (--write-kept), by the workers.
//
// Its tasks are by input file: each input file gives its own output file
// (kept.WriteTask), so one task writes it whole. A task is a chunk's: the
// input files whose first piece the chunk holds, read from their start to
// their end even where later chunks hold the rest (only an uncompressed
// JSONL file is ever cut into pieces). A chunk cut from a file and a
// chunk of many small files thus need no merge of partial outputs, at the
// price of one task for a large uncompressed file. A task reads the docs/
// files of the chunks its files span, and the ordinals of the duplicates
// among their documents, which the coordinator takes from
// duplicates.parquet into its input file (job.InputsKept). Its outputs
// are named by their input's place among the job's inputs and appear
// whole when complete: a task run again, after its worker died, writes
// the same bytes into the same names.
package writekept

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/kept"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/stage"
)

// Name is the stage's name.
const Name = "write-kept"

// Result is what a task reports: what it wrote of each of its inputs,
// and the repeated units it stripped (--strip-paragraphs).
type Result = kept.TaskSummary

// Stage returns the write-kept stage.
func Stage() stage.Stage {
	return stage.Stage{
		Name:  Name,
		Tasks: tasks,
		Run:   run,
		Done:  done,
	}
}

// tasks plans a task for every chunk that holds the first piece of an
// input file, and writes each its input (job.InputsKept).
func tasks(ctx context.Context, j *stage.Job) ([]int, error) {
	if j.Spec.Kept == nil {
		return nil, nil
	}
	plan := j.Plan
	first, last := map[string]int{}, map[string]int{} // an input's first and last chunks
	for _, c := range plan.Chunks {
		for _, p := range c.Pieces {
			if _, ok := first[p.Path]; !ok {
				first[p.Path] = c.Index
			}
			last[p.Path] = c.Index
		}
	}
	docFiles := map[int]fileinfo.Info{}
	for _, m := range j.Mapped.Own { // a chunk whose map task failed has none
		docFiles[m.Chunk] = m.DocFile
	}
	dups, err := kept.ReadDuplicates(ctx, j.Out)
	if err != nil {
		return nil, err
	}
	if int64(len(dups)) != j.Clusters.Duplicates {
		return nil, fmt.Errorf("%s lists %d documents, but the cluster stage wrote %d", job.DuplicatesFile, len(dups), j.Clusters.Duplicates)
	}
	inputs := map[int]kept.Task{}
	ends := map[int]int{} // the last chunk of each task's inputs
	for i, in := range plan.Inputs {
		c, ok := first[in.Path]
		if !ok {
			return nil, fmt.Errorf("input %d, %s, is in no chunk of the plan", i, in.Path)
		}
		t, ok := inputs[c]
		if !ok {
			t.First = i
		}
		t.Last = i
		inputs[c] = t
		ends[c] = max(ends[c], last[in.Path])
	}
	for c, t := range inputs {
		for chunk := c; chunk <= ends[c]; chunk++ {
			if f, ok := docFiles[chunk]; ok {
				t.Docs = append(t.Docs, f)
			}
		}
		lo, _ := slices.BinarySearch(dups, job.Ordinal(c, 0))
		hi, _ := slices.BinarySearch(dups, job.Ordinal(ends[c]+1, 0))
		t.Dups = dups[lo:hi:hi]
		if j.Spec.Kept.Strip != nil {
			t.Paragraphs = j.ParagraphFiles
		}
		inputs[c] = t
	}
	if err := stage.WriteTaskInputs(ctx, j.Out, job.InputsKept, inputs); err != nil {
		return nil, err
	}
	j.Log.Info("writing the kept corpus", "dir", j.Spec.Kept.Dir, "format", j.Spec.Kept.Format, "tasks", len(inputs), "duplicates", len(dups))
	return slices.Sorted(maps.Keys(inputs)), nil
}

// run runs task t on a worker: it writes the task's input files into the
// corpus's directory.
func run(ctx context.Context, e *stage.Env, t stage.Task) (any, error) {
	if e.Spec.Kept == nil || e.Kept == nil {
		return nil, fmt.Errorf("%w: %s task %d: job %s writes no kept corpus", stage.ErrRefused, Name, t.Index, e.Spec.Job)
	}
	in, err := stage.ReadTaskInput[kept.Task](ctx, e.FS, job.InputsKept, t.Index)
	if err != nil {
		return nil, err
	}
	plan, err := e.Cache.Plan(ctx)
	if err != nil {
		return nil, err
	}
	if in.First < 0 || in.Last >= len(plan.Inputs) || in.First > in.Last {
		return nil, fmt.Errorf("%w: %s task %d: inputs %d to %d, but the plan has %d", stage.ErrRefused, Name, t.Index, in.First, in.Last, len(plan.Inputs))
	}
	o := kept.TaskOptions{Job: e.FS, Dir: e.Kept, Inputs: plan.Inputs, Params: e.Spec.Params, Format: e.Spec.Kept.Format, Strip: e.Spec.Kept.Strip}
	if e.Inputs != nil {
		for _, in := range plan.Inputs[in.First : in.Last+1] {
			if err := e.Inputs.Check(in.Path); err != nil {
				return nil, fmt.Errorf("%w: job %s: input: %w", stage.ErrRefused, e.Spec.Job, err)
			}
		}
		o.Check = e.Inputs.Check
	}
	r, err := kept.WriteTask(ctx, o, in)
	if err != nil {
		return nil, fmt.Errorf("%s task %d: %w", Name, t.Index, err)
	}
	return r, nil
}

// done checks that the tasks dropped every duplicate and read every
// document, completes the corpus (kept.Complete: its summary) and records
// it in the manifest. The corpus's marker comes with the job's.
func done(ctx context.Context, j *stage.Job, out *stage.Outcome) error {
	sum := &kept.Summary{Job: j.Spec.Out, Format: j.Spec.Kept.Format, Duplicates: j.Clusters.Duplicates, Strip: j.Spec.Kept.Strip}
	err := stage.EachResult(ctx, out, func(_ int, r Result) error {
		sum.Add(r.Files)
		sum.Stripped += r.Stripped
		sum.StrippedBytes += r.StrippedBytes
		return nil
	})
	if err != nil {
		return err
	}
	switch {
	case sum.Dropped != sum.Duplicates:
		return fmt.Errorf("the kept corpus: %d documents dropped, but %s lists %d", sum.Dropped, job.DuplicatesFile, sum.Duplicates)
	case sum.Docs != j.Manifest.Counts.Docs:
		return fmt.Errorf("the kept corpus: %d documents read, but docs/ lists %d", sum.Docs, j.Manifest.Counts.Docs)
	}
	if err := kept.Complete(ctx, j.Kept, sum); err != nil {
		return fmt.Errorf("the kept corpus in %s: %w", j.Kept.Root(), err)
	}
	m := &manifest.Kept{Dir: j.Spec.Kept.Dir, Format: sum.Format, Docs: sum.Docs, Kept: sum.Kept, Dropped: sum.Dropped,
		Duplicates: sum.Duplicates, Bytes: sum.Bytes, Files: make([]manifest.KeptFile, len(sum.Files)),
		Stripped: sum.Stripped, StrippedBytes: sum.StrippedBytes, Short: sum.Short}
	for i, f := range sum.Files {
		m.Files[i] = f.KeptFile
	}
	j.Manifest.Kept = m
	j.Log.Info("kept corpus written", "dir", j.Spec.Kept.Dir, "docs", sum.Docs, "kept", sum.Kept, "dropped", sum.Dropped, "bytes", sum.Bytes)
	return nil
}
