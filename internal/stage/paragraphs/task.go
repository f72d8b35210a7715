package paragraphs

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/neardup/neardup/internal/fileinfo"
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
}

// runFile is a file of a chunk.
type runFile struct {
	Chunk int           `json:"c"`
	File  fileinfo.Info `json:"f"`
}

// Result is what a task found in its partitions (see manifest.Paragraphs)
// and the paragraphs/ file it wrote.
type Result struct {
	First int           `json:"first"`
	Last  int           `json:"last"`
	File  fileinfo.Info `json:"file"`
	// DocBytes is the task's repeated bytes by document
	// (job.UnitDocsWorkFile); none from a worker before it.
	DocBytes      *fileinfo.Info     `json:"doc_bytes,omitempty"`
	Distinct      int64              `json:"distinct"`
	Repeated      int64              `json:"repeated"`
	Occurrences   int64              `json:"occurrences"`
	RepeatedBytes int64              `json:"repeated_bytes"`
	ExtraBytes    int64              `json:"extra_bytes"`
	Bounded       int64              `json:"bounded"`
	RowsNotListed int64              `json:"rows_not_listed"`
	Top           []manifest.TopUnit `json:"top"`
}

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
// runs: memory is about the task's share of the unit records), and writes
// the occurrences of the units held by two documents or more, with their
// documents' ids, to the task's paragraphs/ file. A unit held by more
// than maxBucket documents lists the occurrences of its first maxBucket
// documents only: the rows a task holds are bounded by its records, not
// by the reach of one unit. It is idempotent: run again, it writes the
// same bytes into the same name.
func RunTask(ctx context.Context, st storage.FS, jobName string, maxBucket int, in TaskInput) (*Result, error) {
	res := &Result{First: in.First, Last: in.Last, Top: []manifest.TopUnit{}}
	var rows []records.Paragraph
	var held []job.DocBytes // an occurrence of a repeated unit each
	err := eachUnit(ctx, st, in, func(group []records.BandRecord, docs int64) {
		res.Distinct++
		if docs >= 2 {
			rows = res.addUnit(group, docs, jobName, maxBucket, rows)
			held = appendHeld(held, group)
		}
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
	return res, nil
}

// eachUnit calls fn, in partitions in.First to in.Last one after
// another, with the records of each unit hash (sorted by compareUnit)
// and the number of documents holding it, from the partition's blocks of
// every unit run file (loaded at once, as a reduce task loads its band
// runs: memory is about the task's share of the unit records).
func eachUnit(ctx context.Context, st storage.Opener, in TaskInput, fn func(group []records.BandRecord, docs int64)) error {
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
			fn(recs[i:j], docs)
			i = j
		}
	}
	return nil
}

// addUnit counts a unit held by docs documents, its records group (by
// document and unit index), and appends its rows to rows: those of its
// first maxBucket documents.
func (res *Result) addUnit(group []records.BandRecord, docs int64, jobName string, maxBucket int, rows []records.Paragraph) []records.Paragraph {
	first := group[0]
	res.Repeated++
	res.Occurrences += int64(len(group))
	listed := int64(0) // documents listed so far
	for k, r := range group {
		_, n := paragraph.FromPlace(r.FPHi)
		res.RepeatedBytes += int64(n)
		if r.Doc != first.Doc {
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
			Holders: docs, FirstDoc: first.Doc, FirstJob: jobName,
		})
	}
	if docs > int64(maxBucket) {
		res.Bounded++
	}
	off, n := paragraph.FromPlace(first.FPHi)
	res.Top = AddTop(res.Top, manifest.TopUnit{Hash: first.Key, Docs: docs, Occurrences: int64(len(group)),
		FirstDoc: first.Doc, Offset: int64(off), Length: int64(n)})
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
