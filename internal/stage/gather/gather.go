package gather

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"time"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/index"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/workfile"
)

// The gather stage moves signatures to the verify tasks that need them
// with sequential reads only. Verify needs, for each candidate pair and
// exact-group claim whose first document is in its chunk, the signature
// and shingle set of both documents; the second is in any chunk. Read by
// random access to every chunk's signature file, that is one disk seek (or
// one object-storage request) per pair once the work area outgrows the
// page cache. Instead:
//
//   - reduce writes, beside its edges, requests: (document, verify chunk)
//     for both documents of every edge, grouped by the document's chunk
//     (RequestFile);
//   - a gather task per chunk reads its chunk's signature file once, in
//     order, and writes the requested records grouped by verify chunk,
//     each group sorted by document (GatherFile), then removes the
//     signature file, which nothing reads after it: the work area holds
//     each signature once. Run again, it checks and describes the file it
//     wrote;
//   - a verify task reads its group of every gather file, sequentially and
//     in chunk order (so in document order), checking it and indexing its
//     records, which it then reads by random access: in place in local
//     gather files, else from a copy in a scratch file on local disk (in
//     memory if small).

// scratchMemory is the bytes of distinct records a gather task holds in
// memory before it moves them to a scratch file. Written to a file, they
// were a third of the stage's writes at 10M documents (6.3 of 21.4 GB:
// 82 MB a task on average), in a page cache already full of the work
// area; in memory, the stage wrote 15.1 GB (docs/performance.md,
// 2026-11-29, session 47).
const scratchMemory = 256 << 20

// Gather reads the signature records of chunk that the verify tasks asked
// for (through every reduce partition's requests) and writes them to
// GatherFile(chunk) grouped by verify task. Its chunk's signature file is
// read once, in order; the distinct records go to a scratch file on local
// disk first (in memory up to scratchMemory), from which the groups are copied, so
// memory holds only the requests (12 bytes each) and their index.
//
// With removeSig, the task then removes the chunk's signature file (when
// the job keeps no index, nothing reads it again).
func Gather(ctx context.Context, st storage.FS, chunk int, reduces []job.ReduceResult, maps map[int]job.MapResult, removeSig bool) (*job.GatherResult, error) {
	start := time.Now()
	res, err := gather(ctx, st, chunk, reduces, maps, removeSig)
	if err != nil {
		return nil, fmt.Errorf("gather chunk %d: %w", chunk, err)
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

func gather(ctx context.Context, st storage.FS, chunk int, reduces []job.ReduceResult, maps map[int]job.MapResult, removeSig bool) (*job.GatherResult, error) {
	var reqs []workfile.Request
	for _, rr := range reduces {
		info, ok := rr.RequestFiles[chunk]
		if !ok {
			continue
		}
		var err error
		if reqs, err = workfile.ReadRequests(ctx, st, info, reqs); err != nil {
			return nil, err
		}
	}
	reqs = workfile.SortRequests(reqs)
	res := &job.GatherResult{Chunk: chunk, Requests: int64(len(reqs)), Ranges: map[int]fileinfo.Info{}}
	if len(reqs) == 0 {
		return res, nil
	}

	// The distinct documents, in file order, to the scratch file.
	docs := make([]int64, len(reqs))
	for i, r := range reqs {
		docs[i] = r.Doc
	}
	slices.Sort(docs)
	docs = slices.Compact(docs)
	res.Records = int64(len(docs))
	sig, closeSig, err := index.OpenChunkRecords(ctx, st, maps, chunk)
	if errors.Is(err, fs.ErrNotExist) {
		// A gather task removes its chunk's signature file once its own
		// file is committed: run again (its result was lost), it
		// describes that file.
		again, aerr := gathered(ctx, st, chunk, reqs, res)
		if aerr != nil {
			return nil, fmt.Errorf("%w; and %w", err, aerr)
		}
		return again, nil
	}
	if err != nil {
		return nil, err
	}
	defer closeSig()
	scr, err := workfile.FillScratch("gather", sig.GatherSize(docs), scratchMemory, func(scr *workfile.Scratch) error { return sig.CopyRecords(ctx, docs, scr) })
	if err != nil {
		return nil, err
	}
	defer scr.Remove()

	// The groups, in (verify chunk, document) order.
	name := job.GatherFile(chunk)
	w, err := st.Create(ctx, name)
	if err != nil {
		return nil, err
	}
	committed := false
	defer func() {
		if !committed {
			w.Abort()
		}
	}()
	bw := bufio.NewWriterSize(w, 1<<20)
	res.Ranges, err = workfile.GroupRanges(ctx, name, reqs,
		func(i int) ([]byte, error) { return scr.Get(ctx, reqs[i].Doc) },
		func(rec []byte) error {
			if _, err := bw.Write(rec); err != nil {
				return fmt.Errorf("writing %s: %w", name, err)
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	if err := bw.Flush(); err != nil {
		return nil, fmt.Errorf("writing %s: %w", name, err)
	}
	if err := w.Commit(); err != nil {
		return nil, err
	}
	committed = true
	// Nothing reads the signature file after its gather task: removing it
	// keeps each signature once in the work area.
	closeSig()
	if !removeSig {
		return res, nil
	}
	if err := st.Remove(ctx, sig.Name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return res, nil
}

// gathered describes the committed gather file of chunk, which must hold
// exactly the records reqs ask for, in order: what a gather task that
// ran before (and removed the signature file) wrote.
func gathered(ctx context.Context, st storage.Opener, chunk int, reqs []workfile.Request, res *job.GatherResult) (*job.GatherResult, error) {
	name := job.GatherFile(chunk)
	f, err := st.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gr := workfile.NewGatheredReader(io.NewSectionReader(f, 0, f.Size()), f.Size())
	corrupt := func(i int, what string) error {
		return fmt.Errorf("%s, record %d: %s: %w", name, i, what, workfile.ErrCorrupt)
	}
	res.Ranges, err = workfile.GroupRanges(ctx, name, reqs, func(i int) ([]byte, error) {
		r, raw, ok, err := gr.Next()
		switch {
		case err != nil:
			return nil, corrupt(i, err.Error())
		case !ok:
			return nil, corrupt(i, "missing")
		case r != reqs[i]:
			return nil, corrupt(i, fmt.Sprintf("document %d for chunk %d, want %d for %d", r.Doc, r.Dest, reqs[i].Doc, reqs[i].Dest))
		}
		if err := index.CheckGathered(raw); err != nil {
			return nil, corrupt(i, err.Error())
		}
		return raw, nil
	}, nil)
	if err != nil {
		return nil, err
	}
	if _, _, ok, err := gr.Next(); ok || err != nil {
		return nil, corrupt(len(reqs), "more records than requests")
	}
	return res, nil
}
