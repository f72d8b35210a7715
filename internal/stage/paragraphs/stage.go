// Package paragraphs is the paragraph pass (--paragraphs): after the map
// stage, which cut every document into units (lines, or paragraphs) and
// wrote a record of each, partitioned by its hash as band records are by
// their key, each task counts the documents holding each unit hash in a
// range of partitions and writes the occurrences of the units held by two
// documents or more to paragraphs/ (see RunTask). No process holds every
// hash: a task holds its partitions' records, as a reduce task does; the
// coordinator holds each task's counts and top units only.
package paragraphs

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/index"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/textstore"
)

// Name is the stage's name.
const Name = "paragraphs"

// taskBytes is about the bytes of unit run records a task reads.
const taskBytes = 96 << 20

// minTasks is the fewest tasks of a job of several partitions, so that
// two cores share a small job's pass.
const minTasks = 2

// sampleBytes bounds a top unit's sample text in the manifest.
const sampleBytes = 160

// Stage returns the paragraph pass's stage.
func Stage() stage.Stage {
	return stage.Stage{
		Name: Name,
		Tasks: func(ctx context.Context, j *stage.Job) ([]int, error) {
			tasks := PlanTasks(j.Mapped.Runs, j.Spec.Params.Partitions)
			choice, err := chooseEarlier(ctx, j)
			if err != nil {
				return nil, err
			}
			for t, in := range tasks {
				in.Earlier, in.Jobs = choice.Sources, choice.Counted
				tasks[t] = in
			}
			if err := stage.WriteTaskInputs(ctx, j.Out, job.InputsUnits, tasks); err != nil {
				return nil, err
			}
			return stage.Seq(len(tasks)), nil
		},
		Run: func(ctx context.Context, e *stage.Env, t stage.Task) (any, error) {
			if !e.Spec.Params.Paragraphs {
				return nil, fmt.Errorf("%w: %s task %d: job %s runs no paragraph pass", stage.ErrRefused, Name, t.Index, e.Spec.Job)
			}
			in, err := stage.ReadTaskInput[TaskInput](ctx, e.FS, job.InputsUnits, t.Index)
			if err != nil {
				return nil, err
			}
			r, err := RunTask(ctx, e.FS, e.Spec.Job, e.Spec.Params.MaxBucket, e.Spec.Params.Index, in)
			if err != nil {
				return nil, fmt.Errorf("%s task %d (partitions %d to %d): %w", Name, t.Index, in.First, in.Last, err)
			}
			return r, nil
		},
		Done: done,
	}
}

// PlanTasks cuts partitions into tasks of about taskBytes of the map
// results' unit run files (at least minTasks, at most one a partition),
// by contiguous ranges of partitions.
func PlanTasks(maps []job.MapResult, partitions int) map[int]TaskInput {
	runs, docs := []runFile{}, []runFile{}
	var total int64
	for _, m := range maps {
		for _, f := range m.UnitRunFiles {
			runs = append(runs, runFile{Chunk: m.Chunk, File: f})
			total += f.Bytes
		}
		docs = append(docs, runFile{Chunk: m.Chunk, File: m.DocFile})
	}
	ranges := stage.SplitPartitions(total, taskBytes, minTasks, partitions)
	tasks := make(map[int]TaskInput, len(ranges))
	for t, r := range ranges {
		tasks[t] = TaskInput{First: r.First, Last: r.Last, Runs: runs, Docs: docs}
	}
	return tasks
}

// chooseEarlier chooses the earlier jobs' unit tables the job counts
// (index.ChooseUnitTables), read from their indexes through their mounts;
// none for a job matched against none.
func chooseEarlier(ctx context.Context, j *stage.Job) (index.UnitChoice, error) {
	p := j.Spec.Params
	if len(j.Spec.Against) == 0 {
		return index.UnitChoice{Sources: index.UnitSources{Partitions: p.Partitions}}, nil
	}
	ixs, err := index.LoadEarlier(ctx, j.FS, len(j.Spec.Against))
	if err != nil {
		return index.UnitChoice{}, err
	}
	return index.ChooseUnitTables(ixs, p.ParagraphUnit, p.Partitions), nil
}

// done folds the tasks' counts and top units into the manifest, reads
// the top units' samples, describes the unit table the tasks wrote for
// the index, and removes what the pass no longer needs: the paragraphs/
// and unit table files of an earlier run that cut its partitions
// otherwise, and the unit run files once every map task succeeded.
func done(ctx context.Context, j *stage.Job, out *stage.Outcome) error {
	p := &manifest.Paragraphs{Unit: j.Spec.Params.ParagraphUnit, Top: []manifest.TopUnit{}}
	for _, m := range j.Mapped.Own {
		p.Units += m.Units
		p.UnitBytes += m.UnitBytes
	}
	choice, err := chooseEarlier(ctx, j)
	if err != nil {
		return err
	}
	table := newTable(j, choice)
	files, tables := map[string]bool{}, map[string]bool{}
	j.ParagraphFiles = nil
	j.UnitDocFiles = []fileinfo.Info{}
	missing := 0 // results without their repeated bytes by document
	var held int64
	oldShape := false // a result of a worker before unit tables
	err = stage.EachResult(ctx, out, func(_ int, r Result) error {
		files[r.File.Name] = true
		j.ParagraphFiles = append(j.ParagraphFiles, r.File)
		if r.DocBytes == nil {
			missing++
		} else {
			j.UnitDocFiles = append(j.UnitDocFiles, *r.DocBytes)
		}
		oldShape = oldShape || r.Shape < ResultShape
		held += r.EarlierHeld
		if r.Table != nil {
			tables[r.Table.Name] = true
			table.Files = append(table.Files, index.BandFile{File: *r.Table, First: r.First, Last: r.Last})
			table.Units += r.TableUnits
		}
		p.Distinct += r.Distinct
		p.Repeated += r.Repeated
		p.Occurrences += r.Occurrences
		p.RepeatedBytes += r.RepeatedBytes
		p.ExtraBytes += r.ExtraBytes
		p.Bounded += r.Bounded
		p.RowsNotListed += r.RowsNotListed
		for _, u := range r.Top {
			p.Top = AddTop(p.Top, u)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if missing > 0 {
		j.UnitDocFiles = nil
		j.Log.Warn("the repeated bytes by host and input file are not counted: tasks of the paragraph pass were run by workers of an earlier version", "tasks", missing)
	}
	if text := j.Manifest.Counts.TextBytes; text > 0 {
		p.RepeatedShare = float64(p.RepeatedBytes) / float64(text)
		p.ExtraShare = float64(p.ExtraBytes) / float64(text)
	}
	addSamples(ctx, j, p.Top)
	j.UnitTable = nil
	switch {
	case oldShape:
		// Resumed from a run of an earlier version: its tasks counted
		// the job's units alone and wrote no unit table.
		w := "the paragraph pass's tasks were run by an earlier version: its counts are of this job's documents alone and the index holds no unit table; run the job again with --overwrite to count them across the series"
		j.Log.Warn(w)
		j.Manifest.Warnings = append(j.Manifest.Warnings, w)
	case j.Spec.Params.Index:
		slices.SortFunc(table.Files, func(a, b index.BandFile) int { return cmp.Compare(a.First, b.First) })
		j.UnitTable = table
		p.IndexUnits = table.Units
	}
	if len(j.Spec.Against) > 0 && !oldShape {
		p.Earlier = &manifest.EarlierUnits{Counted: []string{}, NotCounted: choice.NotCounted, Held: held}
		for _, a := range choice.Counted {
			p.Earlier.Counted = append(p.Earlier.Counted, a.Job)
		}
		if p.Earlier.NotCounted == nil {
			p.Earlier.NotCounted = []job.UnitsNotCounted{}
		}
		for _, nc := range choice.NotCounted {
			w := fmt.Sprintf("the paragraph pass did not count the units of earlier job %s: %s; its documents hold no unit in this job's counts", nc.Job, nc.Reason)
			j.Log.Warn(w)
			j.Manifest.Warnings = append(j.Manifest.Warnings, w)
		}
	}
	j.Manifest.Paragraphs = p
	if err := clean(ctx, j, files, tables); err != nil {
		return err
	}
	j.Log.Info("paragraph pass done", "units", p.Units, "distinct", p.Distinct, "repeated", p.Repeated, "repeated_share", p.RepeatedShare)
	return nil
}

// addSamples sets each top unit's sample: the start of its text in its
// first document, read from the chunk's text store (ranged reads of the
// frames that hold them). A text that cannot be read leaves the sample
// empty, with a warning in the log: a sample is not worth failing the
// job.
func addSamples(ctx context.Context, j *stage.Job, top []manifest.TopUnit) {
	type store struct {
		f storage.File
		r *textstore.Reader
	}
	stores := map[int]*store{}
	defer func() {
		for _, s := range stores {
			if s != nil {
				s.r.Close()
				s.f.Close()
			}
		}
	}()
	for i := range top {
		u := &top[i]
		c := job.ChunkOf(u.FirstDoc)
		s, ok := stores[c]
		if !ok {
			f, r, err := openText(ctx, j, c)
			if err != nil {
				j.Log.Warn("a repeated unit's sample could not be read", "chunk", c, "err", err)
			} else {
				s = &store{f, r}
			}
			stores[c] = s
		}
		if s == nil {
			continue
		}
		d, ok, err := s.r.Get(job.SlotOf(u.FirstDoc))
		if err != nil || !ok || u.Offset+u.Length > int64(len(d.Text)) {
			j.Log.Warn("a repeated unit's sample could not be read", "doc", u.FirstDoc, "err", err)
			continue
		}
		b := d.Text[u.Offset : u.Offset+min(u.Length, sampleBytes)]
		for len(b) > 0 && !utf8.Valid(b) { // cut inside a character
			b = b[:len(b)-1]
		}
		u.Sample = string(b)
	}
}

// openText opens chunk c's text store.
func openText(ctx context.Context, j *stage.Job, c int) (storage.File, *textstore.Reader, error) {
	m, ok := j.Mapped.All[c]
	if !ok {
		return nil, nil, fmt.Errorf("chunk %d has no map result", c)
	}
	f, err := j.Out.Open(ctx, m.SigFile.Name)
	if err != nil {
		return nil, nil, err
	}
	r, err := textstore.NewReader(f, f.Size(), m.SigFile.Name)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, r, nil
}

// clean removes the paragraphs/ and unit table files that no task of
// this run wrote (an earlier run's, of other partition ranges) and, once
// every map task succeeded and unless the work area is kept, the unit run
// files. Each removal may be done again.
func clean(ctx context.Context, j *stage.Job, keep, tables map[string]bool) error {
	if len(j.Manifest.Failures) == 0 && !j.KeepWork {
		if err := stage.Retried(ctx, func() error { return j.Out.Remove(ctx, job.UnitRunsDir) }); err != nil {
			return fmt.Errorf("removing the unit run files: %w", err)
		}
	}
	if err := stage.RemoveOthers(ctx, j.Out, job.UnitTableDir, tables); err != nil {
		return err
	}
	return stage.RemoveOthers(ctx, j.Out, job.ParagraphsDir, keep)
}

// newTable describes the job's unit table, its files not yet listed:
// the units of its own documents and of the earlier jobs counted.
func newTable(j *stage.Job, choice index.UnitChoice) *index.UnitTable {
	p := j.Spec.Params
	own := job.Against{Job: j.Spec.Job, FirstChunk: j.Spec.FirstChunk}
	for _, m := range j.Mapped.Own {
		own.Chunks = max(own.Chunks, m.Chunk+1-j.Spec.FirstChunk)
		own.Docs += m.Docs
	}
	return &index.UnitTable{Unit: p.ParagraphUnit, Partitions: p.Partitions, Jobs: append(slices.Clone(choice.Counted), own),
		NotCounted: choice.NotCounted}
}
