package reduce

import (
	"context"
	"fmt"
	"slices"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/index"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/workfile"
	"github.com/neardup/neardup/pkg/records"
)

// reduceTaskBytes is about the bytes of band run records a reduce task
// reads: the map stage's runs are cut into tasks of partitions by it.
const reduceTaskBytes = 96 << 20

// minReduceTasks is the fewest reduce tasks of a job of several
// partitions, so that two cores share a small job's reduce.
const minReduceTasks = 2

// TaskInput is a reduce task's input: its partitions, First to Last,
// and the job's band run files, each holding every partition.
type TaskInput struct {
	First int           `json:"first"`
	Last  int           `json:"last"`
	Runs  []bandRunFile `json:"runs"`
	// IDs are the job's id run files (job.IDRunWorkFile), in which the
	// task counts the documents that share an id.
	IDs []bandRunFile `json:"ids,omitempty"`
}

// bandRunFile is one band run file of a chunk.
type bandRunFile struct {
	Chunk int           `json:"c"`
	File  fileinfo.Info `json:"f"`
}

// planReduceTasks cuts partitions into reduce tasks of about
// reduceTaskBytes of the map results' band run files (at least
// minReduceTasks, at most one a partition), by contiguous ranges of
// partitions: hashing spreads records evenly over them.
func PlanTasks(maps []job.MapResult, partitions int) map[int]TaskInput {
	var runs, ids []bandRunFile
	var total int64
	for _, m := range maps {
		for _, f := range m.BandRunFiles {
			runs = append(runs, bandRunFile{Chunk: m.Chunk, File: f})
			total += f.Bytes
		}
		for _, f := range m.IDRunFiles {
			ids = append(ids, bandRunFile{Chunk: m.Chunk, File: f})
		}
	}
	if runs == nil {
		runs = []bandRunFile{}
	}
	ranges := stage.SplitPartitions(total, reduceTaskBytes, minReduceTasks, partitions)
	tasks := make(map[int]TaskInput, len(ranges))
	for t, r := range ranges {
		tasks[t] = TaskInput{First: r.First, Last: r.Last, Runs: runs, IDs: ids}
	}
	return tasks
}

// ReduceTask reduces partitions in.First to in.Last, one after another
// (see Reduce), reading each partition's blocks of every band run file
// (read at once: the task's partitions are contiguous in each) and, for a job matched against earlier ones (--against), their band
// records of the partition. It writes the job's own records of its
// partitions as one bands/ file, a row group per partition.
func ReduceTask(ctx context.Context, st storage.FS, spec *job.Spec, in TaskInput) (*job.ReduceTaskResult, error) {
	earlier, err := index.LoadEarlierBands(ctx, st, len(spec.Against))
	if err != nil {
		return nil, err
	}
	// The task's blocks of every run file, one ranged read each: about
	// reduceTaskBytes in all.
	runs, err := loadBandRuns(ctx, st, in.Runs, in.First, in.Last)
	if err != nil {
		return nil, err
	}
	ids, err := loadBandRuns(ctx, st, in.IDs, in.First, in.Last)
	if err != nil {
		return nil, err
	}
	name := job.ReduceBandFile(in.First, in.Last)
	w, err := pqfile.NewWriter[records.Band](ctx, st, name, index.BandsOptions())
	if err != nil {
		return nil, err
	}
	defer w.Abort()
	res := &job.ReduceTaskResult{First: in.First, Last: in.Last}
	var own []records.Band
	bufs := &workfile.SortBufs{}
	for part := in.First; part <= in.Last; part++ {
		lists, err := earlier.Read(ctx, st, part)
		if err != nil {
			return nil, fmt.Errorf("reduce partition %d: earlier job: %w", part, err)
		}
		for _, r := range runs {
			recs, err := r.Part(part) // its errors name the partition
			if err != nil {
				return nil, err
			}
			lists = append(lists, index.BandList{Name: r.Name, Recs: recs})
		}
		own = own[:0]
		pr, err := reducePart(ctx, st, spec, part, lists, func(r records.BandRecord) {
			own = append(own, records.Band{Part: int32(part), Band: r.Band, Key: r.Key, Doc: r.Doc, FP: r.FPHi})
		}, bufs)
		if err != nil {
			return nil, err
		}
		if err := w.Write(own); err != nil {
			return nil, err
		}
		if err := w.EndRowGroup(); err != nil {
			return nil, err
		}
		res.Parts = append(res.Parts, *pr)
		if err := countDuplicateIDs(ids, part, res); err != nil {
			return nil, err
		}
	}
	if res.Bands, err = w.Close(); err != nil {
		return nil, err
	}
	return res, nil
}

// loadBandRuns loads the blocks of partitions first to last of band run
// files (or id run files).
func loadBandRuns(ctx context.Context, st storage.Opener, files []bandRunFile, first, last int) ([]*workfile.BandRunReader, error) {
	runs := make([]*workfile.BandRunReader, 0, len(files))
	for _, rf := range files {
		r, err := workfile.LoadBandRun(ctx, st, rf.File, rf.Chunk, first, last)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// duplicateIDExamples is how many documents sharing an id a reduce task
// names.
const duplicateIDExamples = 3

// countDuplicateIDs counts, in partition part of the id runs, the
// documents whose id records (idRecord: both hashes) equal an earlier
// document's, and names the first document of the first few such ids.
func countDuplicateIDs(ids []*workfile.BandRunReader, part int, res *job.ReduceTaskResult) error {
	lists, names := make([][]records.BandRecord, 0, len(ids)), make([]string, 0, len(ids))
	for _, r := range ids {
		recs, err := r.Part(part)
		if err != nil {
			return err // it names the partition
		}
		lists, names = append(lists, recs), append(names, r.Name)
	}
	m := workfile.NewBandMerge(lists, names)
	// The records of one key, by document: mostly one, or the documents
	// of one id; two ids whose first hashes collide differ by the second.
	var group []records.BandRecord
	count := func() {
		for i, r := range group {
			j := slices.IndexFunc(group[:i], func(e records.BandRecord) bool { return e.FPHi == r.FPHi })
			if j < 0 {
				continue
			}
			res.DuplicateIDs++
			if d := group[j].Doc; !slices.Contains(res.DuplicateIDDocs, d) && len(res.DuplicateIDDocs) < duplicateIDExamples {
				res.DuplicateIDDocs = append(res.DuplicateIDDocs, d)
			}
		}
	}
	for {
		rec, ok, err := m.Next()
		if err != nil {
			return fmt.Errorf("reduce partition %d: id runs: %w", part, err)
		}
		if !ok {
			count()
			return nil
		}
		if len(group) > 0 && rec.Key != group[0].Key {
			count()
			group = group[:0]
		}
		group = append(group, rec)
	}
}
