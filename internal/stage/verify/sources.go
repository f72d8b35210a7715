package verify

import (
	"context"
	"fmt"
	"slices"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/index"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/sigfile"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/workfile"
)

// SigSource tells a verify task where the signatures of its documents
// are: with the gather stage on (Params.Gather "on"), in the ranges the
// gather tasks wrote for it (Gathers); otherwise in every chunk's
// signature file (Maps), read by random access.
type SigSource struct {
	Gathers []job.GatherResult
	Maps    map[int]job.MapResult
}

// recordSource returns the verification record of a document, and its
// shingle set when the source has it decoded (nil: decode the record's
// Shingles); fork returns another source of the same records for a
// concurrent reader.
type recordSource interface {
	get(ctx context.Context, doc int64) (sigfile.Record, []uint64, error)
	fork() (recordSource, error)
}

// open returns the task's record source and what ends it. Without the
// gather stage, the task first reads the records of every document its
// edges (infos) name, chunk by chunk in slot order, into a scratch file
// as the gather stage would send them: a text store's frame is decoded
// once, not once per window that needs one of its documents.
func (s SigSource) open(ctx context.Context, st storage.Opener, p job.Params, chunk int, infos []fileinfo.Info) (recordSource, func(), error) {
	rs, err := sketch.NewResketcher(p)
	if err != nil {
		return nil, nil, err
	}
	without, err := stage.LoadWithout(ctx, st, p)
	if err != nil {
		return nil, nil, err
	}
	if without != nil {
		rs.Without(without)
	}
	var scr *workfile.Scratch
	switch {
	case p.Gather == job.GatherOn && s.Gathers == nil:
		return nil, nil, fmt.Errorf("the gather stage is on but the verify task has no gather results")
	case p.Gather == job.GatherOn:
		scr, err = workfile.ReadGathered(ctx, st, chunk, s.Gathers)
	case s.Maps == nil:
		return nil, nil, fmt.Errorf("the gather stage is off but the verify task has no map results")
	case p.Gather == job.GatherSets && allSets(s.Maps):
		// Every chunk's records are in its set file, read in place.
		sets := &setRecords{st: st, maps: s.Maps}
		return sets, sets.close, nil
	default:
		scr, err = readDirect(ctx, st, s.Maps, infos)
	}
	if err != nil {
		return nil, nil, err
	}
	return &gatheredRecords{scr: scr, rs: rs}, scr.Remove, nil
}

// allSets reports whether every chunk of maps has a set file (a job
// matched against earlier ones has none for their chunks).
func allSets(maps map[int]job.MapResult) bool {
	for _, m := range maps {
		if m.SetFile == nil {
			return false
		}
	}
	return true
}

// setRecords reads the records of the chunks' set files in place, by
// random access: what map sketched, decoded and nothing more. Each fork
// opens the files it reads.
type setRecords struct {
	st    storage.Opener
	maps  map[int]job.MapResult
	files map[int]setFile
	done  []func()
	forks []*setRecords
}

func (s *setRecords) fork() (recordSource, error) {
	f := &setRecords{st: s.st, maps: s.maps}
	s.forks = append(s.forks, f)
	return f, nil
}

func (s *setRecords) get(ctx context.Context, doc int64) (sigfile.Record, []uint64, error) {
	c := job.ChunkOf(doc)
	r, ok := s.files[c]
	if !ok {
		f, done, err := index.OpenChunkRecords(ctx, s.st, s.maps, c)
		if err != nil {
			return sigfile.Record{}, nil, err
		}
		rr := f.ReusedSetRecords() // loadSig decodes what it keeps
		if rr == nil {
			done()
			return sigfile.Record{}, nil, fmt.Errorf("%s is not a set file", f.Name)
		}
		r = setFile{rr, f.Name}
		if s.files == nil {
			s.files = map[int]setFile{}
		}
		s.files[c], s.done = setFile{r, f.Name}, append(s.done, done)
	}
	rec, present, err := r.Record(job.SlotOf(doc))
	if err != nil {
		return sigfile.Record{}, nil, fmt.Errorf("document %d: %w", doc, err)
	}
	if !present {
		return sigfile.Record{}, nil, fmt.Errorf("%s: document %d has no signature", r.name, doc)
	}
	return rec, nil, nil
}

// setFile is an open set file.
type setFile struct {
	index.RecordReader
	name string
}

// close closes the files of s and its forks.
func (s *setRecords) close() {
	for _, f := range append(s.forks, s) {
		for _, done := range f.done {
			done()
		}
	}
}

// readDirect copies the records of the documents the edges of infos name
// from their chunks' record files to a scratch file, each file read in
// slot order.
func readDirect(ctx context.Context, st storage.Opener, maps map[int]job.MapResult, infos []fileinfo.Info) (*workfile.Scratch, error) {
	merged, err := workfile.MergeEdges(ctx, st, infos)
	if err != nil {
		return nil, err
	}
	defer merged.Close()
	var docs []int64
	for {
		e, more, err := merged.Next()
		if err != nil {
			return nil, err
		}
		if !more {
			break
		}
		docs = append(docs, e.A, e.B)
	}
	slices.Sort(docs)
	docs = slices.Compact(docs)
	// The chunks' ranges of docs, and the scratch's size from them.
	type run struct {
		f        *index.RecordFile
		lo, hi   int
		closeRun func()
	}
	var runs []run
	defer func() {
		for _, r := range runs {
			r.closeRun()
		}
	}()
	var size int64
	for lo := 0; lo < len(docs); {
		c := job.ChunkOf(docs[lo])
		hi := lo
		for hi < len(docs) && job.ChunkOf(docs[hi]) == c {
			hi++
		}
		f, done, err := index.OpenChunkRecords(ctx, st, maps, c)
		if err != nil {
			return nil, err
		}
		runs = append(runs, run{f: f, lo: lo, hi: hi, closeRun: done})
		size += f.GatherSize(docs[lo:hi])
		lo = hi
	}
	return workfile.FillScratch("verify", size, workfile.ScratchMemory, func(scr *workfile.Scratch) error {
		for _, r := range runs {
			if err := r.f.CopyRecords(ctx, docs[r.lo:r.hi], scr); err != nil {
				return err
			}
			r.closeRun()
		}
		return nil
	})
}

// gatheredRecords reads the records gathered for a verify task.
type gatheredRecords struct {
	scr *workfile.Scratch
	rs  *sketch.Resketcher
}

func (g *gatheredRecords) fork() (recordSource, error) {
	rs, err := g.rs.Fork()
	if err != nil {
		return nil, err
	}
	return &gatheredRecords{scr: g.scr, rs: rs}, nil
}

func (g *gatheredRecords) get(ctx context.Context, doc int64) (sigfile.Record, []uint64, error) {
	raw, err := g.scr.Get(ctx, doc)
	if err != nil {
		return sigfile.Record{}, nil, err
	}
	rec, set, err := index.DecodeGatheredEntry(raw, g.rs)
	if err != nil {
		return sigfile.Record{}, nil, fmt.Errorf("gathered document %d: %w", doc, err)
	}
	return rec, set, nil
}
