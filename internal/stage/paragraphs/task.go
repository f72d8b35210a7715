package paragraphs

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/index"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/paragraph"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/workfile"
	"github.com/neardup/neardup/pkg/records"
)

// TaskInput is a task's input: its partitions, First to Last, the job's
// unit run files (each holding every partition) and the docs/ files of
// the chunks that wrote them, which name their documents.
type TaskInput struct {
	First int       `json:"first"`
	Last  int       `json:"last"`
	Runs  []runFile `json:"runs"`
	Docs  []runFile `json:"docs"`
	// Earlier are the unit tables of the earlier jobs (--against) whose
	// counts the task adds to the job's own, and Jobs the jobs they count
	// (their chunk ranges name the job of a first document of theirs).
	Earlier index.UnitSources `json:"earlier,omitzero"`
	Jobs    []job.Against     `json:"jobs,omitempty"`
}

// runFile is a file of a chunk.
type runFile struct {
	Chunk int           `json:"c"`
	File  fileinfo.Info `json:"f"`
}

// Result is what a task found in its partitions (see manifest.Paragraphs)
// and the paragraphs/ file it wrote.
type Result struct {
	First         int                `json:"first"`
	Last          int                `json:"last"`
	File          fileinfo.Info      `json:"file"`
	Distinct      int64              `json:"distinct"`
	Repeated      int64              `json:"repeated"`
	Occurrences   int64              `json:"occurrences"`
	RepeatedBytes int64              `json:"repeated_bytes"`
	ExtraBytes    int64              `json:"extra_bytes"`
	Bounded       int64              `json:"bounded"`
	RowsNotListed int64              `json:"rows_not_listed"`
	Top           []manifest.TopUnit `json:"top"`
	// DocBytes is the task's repeated bytes by document
	// (job.UnitDocsWorkFile); none from a worker before it.
	DocBytes *fileinfo.Info `json:"doc_bytes,omitempty"`
	// Table is the unit table file the task wrote (with --index), of
	// TableUnits rows; EarlierHeld counts the job's distinct units that
	// an earlier job's documents hold too.
	Table       *fileinfo.Info `json:"table,omitempty"`
	TableUnits  int64          `json:"table_units,omitempty"`
	EarlierHeld int64          `json:"earlier_held,omitempty"`
	// Shape is ResultShape for a task that counted the earlier jobs'
	// unit tables and wrote its own (0: a worker before them).
	Shape int `json:"shape,omitempty"`
}

// ResultShape is the Shape of this version's results.
const ResultShape = 1

// TopUnits is how many of the units held by the most documents the
// manifest lists.
const TopUnits = 20

// compareUnit orders unit records by hash, document and unit index.
func compareUnit(a, b records.BandRecord) int {
	return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Doc, b.Doc), cmp.Compare(a.Band, b.Band))
}

// RunTask counts, in partitions in.First to in.Last one after another,
// the documents holding each unit hash, from the partition's blocks of
// every unit run file (loaded at once, as a reduce task loads its band
// runs: memory is about the task's share of the unit records), adds the
// counts of the earlier jobs' unit tables (in.Earlier: their rows of the
// partition, read one partition at a time), and writes the occurrences of
// the units held by two documents or more, with their documents' ids, to
// the task's paragraphs/ file; with table, it writes the merged counts of
// every unit (the job's and the earlier tables') to its unit table file.
// A unit held by more than maxBucket documents of the job lists the
// occurrences of its first maxBucket documents only: the rows a task
// holds are bounded by its records, not by the reach of one unit. It is
// idempotent: run again, it writes the same bytes into the same names.
func RunTask(ctx context.Context, st storage.FS, jobName string, maxBucket int, table bool, in TaskInput) (*Result, error) {
	res := &Result{First: in.First, Last: in.Last, Top: []manifest.TopUnit{}, Shape: ResultShape}
	var tw *pqfile.Writer[records.Unit]
	if table {
		var err error
		if tw, err = pqfile.NewWriter[records.Unit](ctx, st, job.UnitTableFile(in.First, in.Last), index.UnitOptions()); err != nil {
			return nil, err
		}
		defer tw.Abort()
	}
	var rows []records.Paragraph
	var held []job.DocBytes  // an occurrence of a repeated unit each
	var units []records.Unit // of the partition, for the unit table
	err := eachPart(ctx, st, in, func(part int, recs []records.BandRecord) error {
		earlier, err := in.Earlier.Read(ctx, st, part)
		if err != nil {
			return err
		}
		units = units[:0]
		k := 0 // the next earlier row
		err = eachGroup(part, recs, func(group []records.BandRecord, docs int64) error {
			u := records.Unit{Part: int32(part), UnitHash: group[0].Key, Holders: docs, FirstDoc: group[0].Doc}
			for ; k < len(earlier) && earlier[k].UnitHash < u.UnitHash; k++ {
				units = append(units, earlier[k])
			}
			if k < len(earlier) && earlier[k].UnitHash == u.UnitHash {
				u.Holders += earlier[k].Holders
				u.FirstDoc = min(u.FirstDoc, earlier[k].FirstDoc)
				res.EarlierHeld++
				k++
			}
			units = append(units, u)
			res.Distinct++
			if u.Holders < 2 {
				return nil
			}
			firstJob, err := jobOf(u.FirstDoc, group[0].Doc, jobName, in.Jobs)
			if err != nil {
				return fmt.Errorf("partition %d: unit %d: %w", part, u.UnitHash, err)
			}
			rows = res.addUnit(group, docs, u, firstJob, jobName, maxBucket, rows)
			held = appendHeld(held, group)
			return nil
		})
		if err != nil || tw == nil {
			return err
		}
		units = append(units, earlier[k:]...)
		res.TableUnits += int64(len(units))
		if err := tw.Write(units); err != nil {
			return err
		}
		return tw.EndRowGroup()
	})
	if err != nil {
		return nil, err
	}
	docBytes, err := writeDocBytes(ctx, st, job.UnitDocsWorkFile(in.First, in.Last), held)
	if err != nil {
		return nil, err
	}
	res.DocBytes = &docBytes
	if err := fillIDs(ctx, st, in.Docs, rows); err != nil {
		return nil, err
	}
	slices.SortFunc(rows, func(a, b records.Paragraph) int {
		return cmp.Or(cmp.Compare(a.UnitHash, b.UnitHash), cmp.Compare(a.Doc, b.Doc), cmp.Compare(a.UnitIndex, b.UnitIndex))
	})
	if res.File, err = pqfile.Write(ctx, st, job.ParagraphFile(in.First, in.Last), rows, pqfile.Sorted("unit_hash", "doc", "unit_index")); err != nil {
		return nil, err
	}
	if tw != nil {
		info, err := tw.Close()
		if err != nil {
			return nil, err
		}
		res.Table = &info
	}
	return res, nil
}

// jobOf names the job of a unit's first document first: this job's
// (jobName) when it is the job's own first document holding it (own),
// else the earlier job whose chunk range holds it.
func jobOf(first, own int64, jobName string, jobs []job.Against) (string, error) {
	if first == own {
		return jobName, nil
	}
	c := job.ChunkOf(first)
	for _, a := range jobs {
		if c >= a.FirstChunk && c < a.FirstChunk+a.Chunks {
			return a.Job, nil
		}
	}
	return "", fmt.Errorf("its first document %d (chunk %d) is of no job the earlier unit tables count: %w", first, c, pqfile.ErrCorrupt)
}

// eachPart calls fn, in partitions in.First to in.Last one after another,
// with the partition's unit records sorted by compareUnit, from the
// partition's blocks of every unit run file (loaded at once, as a reduce
// task loads its band runs: memory is about the task's share of the unit
// records).
func eachPart(ctx context.Context, st storage.Opener, in TaskInput, fn func(part int, recs []records.BandRecord) error) error {
	runs := make([]*workfile.BandRunReader, 0, len(in.Runs))
	for _, rf := range in.Runs {
		r, err := workfile.LoadBandRun(ctx, st, rf.File, rf.Chunk, in.First, in.Last)
		if err != nil {
			return err
		}
		runs = append(runs, r)
	}
	var recs []records.BandRecord
	for part := in.First; part <= in.Last; part++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		recs = recs[:0]
		for _, r := range runs {
			p, err := r.Part(part) // its errors name the file and partition
			if err != nil {
				return err
			}
			recs = append(recs, p...)
		}
		slices.SortFunc(recs, compareUnit)
		if err := fn(part, recs); err != nil {
			return err
		}
	}
	return nil
}

// eachGroup calls fn with the records of each unit hash of recs (of
// partition part, sorted by compareUnit) and the number of documents
// holding it.
func eachGroup(part int, recs []records.BandRecord, fn func(group []records.BandRecord, docs int64) error) error {
	for i := 0; i < len(recs); {
		j, docs := i+1, int64(1)
		for ; j < len(recs) && recs[j].Key == recs[i].Key; j++ {
			switch {
			case recs[j].Doc != recs[j-1].Doc:
				docs++
			case recs[j].Band == recs[j-1].Band:
				return fmt.Errorf("partition %d: unit %d of document %d twice: a unit run file was read twice", part, recs[j].Band, recs[j].Doc)
			}
		}
		if err := fn(recs[i:j], docs); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// addUnit counts a unit, its records of the job group (by document and
// unit index) held by docs documents of the job and u.Holders in all
// (with the earlier jobs'), the first of them u.FirstDoc of job
// firstJob, and appends its rows to rows: those of its first maxBucket
// documents of the job.
func (res *Result) addUnit(group []records.BandRecord, docs int64, u records.Unit, firstJob, jobName string, maxBucket int, rows []records.Paragraph) []records.Paragraph {
	first := group[0]
	res.Repeated++
	res.Occurrences += int64(len(group))
	listed := int64(0) // documents listed so far
	for k, r := range group {
		_, n := paragraph.FromPlace(r.FPHi)
		res.RepeatedBytes += int64(n)
		if r.Doc != u.FirstDoc {
			res.ExtraBytes += int64(n)
		}
		if k == 0 || r.Doc != group[k-1].Doc {
			listed++
		}
		if listed > int64(maxBucket) {
			res.RowsNotListed++
			continue
		}
		off, _ := paragraph.FromPlace(r.FPHi)
		rows = append(rows, records.Paragraph{
			UnitHash: r.Key, Doc: r.Doc, UnitIndex: r.Band, ByteOffset: int64(off), ByteLength: int32(n),
			Holders: u.Holders, FirstDoc: u.FirstDoc, FirstJob: firstJob,
		})
	}
	if docs > int64(maxBucket) {
		res.Bounded++
	}
	off, n := paragraph.FromPlace(first.FPHi)
	top := manifest.TopUnit{Hash: first.Key, Docs: u.Holders, Occurrences: int64(len(group)),
		FirstDoc: first.Doc, Offset: int64(off), Length: int64(n)}
	if firstJob != jobName {
		top.FirstJob = firstJob
	}
	res.Top = AddTop(res.Top, top)
	return rows
}

// AddTop adds u to top, the units held by the most documents (then by
// hash), and keeps the first TopUnits.
func AddTop(top []manifest.TopUnit, u manifest.TopUnit) []manifest.TopUnit {
	less := func(a, b manifest.TopUnit) int {
		return cmp.Or(cmp.Compare(b.Docs, a.Docs), cmp.Compare(a.Hash, b.Hash))
	}
	if len(top) == TopUnits && less(u, top[len(top)-1]) >= 0 {
		return top
	}
	i, _ := slices.BinarySearchFunc(top, u, less)
	top = slices.Insert(top, i, u)
	return top[:min(len(top), TopUnits)]
}

// fillIDs sets the id of every row's document, read from the docs/ files
// of their chunks (each checked against what its map task recorded).
func fillIDs(ctx context.Context, st storage.Opener, docs []runFile, rows []records.Paragraph) error {
	want := make([]int64, len(rows))
	for i, r := range rows {
		want[i] = r.Doc
	}
	slices.Sort(want)
	want = slices.Compact(want)
	ids := make([]string, len(want))
	found := make([]bool, len(want))
	for _, df := range docs {
		lo, _ := slices.BinarySearch(want, job.Ordinal(df.Chunk, 0))
		hi, _ := slices.BinarySearch(want, job.Ordinal(df.Chunk+1, 0))
		if lo == hi {
			continue
		}
		err := pqfile.Stream(ctx, st, df.File.Name, &df.File, 4096, func(batch []records.DocRecord) error {
			for _, d := range batch {
				if k, ok := slices.BinarySearch(want[lo:hi], d.Doc); ok {
					ids[lo+k], found[lo+k] = d.ID, true
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("the ids of chunk %d's documents: %w", df.Chunk, err)
		}
	}
	for k, ok := range found {
		if !ok {
			return fmt.Errorf("document %d is in no docs/ file of the task's input", want[k])
		}
	}
	for i := range rows {
		k, _ := slices.BinarySearch(want, rows[i].Doc)
		rows[i].ID = ids[k]
	}
	return nil
}
