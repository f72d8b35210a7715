package index

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// Compact writes into st one index holding the documents of the indexes
// srcs, which st mounts: srcs[i] at job.Mount(i). It is how a series of
// jobs (each matched against all earlier ones, so their chunks are
// numbered apart) keeps one index instead of one a job: --against and
// query read it as they read any.
//
// Each chunk's documents file and text store (or signature file, of an
// index before version 3) is copied as it is, under the name it had;
// the band records of every partition, read from every source in either
// layout of bands/, are merged into bands/ files of about
// compactFileBytes, a row group per partition, as a job's reduce tasks
// write them. index.json, written last, names the job name, lists every
// chunk and, as earlier jobs, those the sources were matched against
// that are not among them, and the jobs it holds (Compacted: a source
// that is itself compacted gives its own; outs[i] is srcs[i]'s location).
// The caller checks that the sources are comparable (the same
// parameters, chunks apart).
func Compact(ctx context.Context, st storage.FS, srcs []*Index, outs []string, name string) (*Index, error) {
	if len(srcs) == 0 {
		return nil, fmt.Errorf("compact: no index")
	}
	out := &Index{Version: Version, Job: name, Params: srcs[0].Params, FirstChunk: srcs[0].FirstChunk,
		BandsLayout: BandsLayoutTasks}
	in := map[string]bool{}
	for _, ix := range srcs {
		in[ix.Job] = true
		for _, h := range ix.Compacted { // a compacted source holds these too
			in[h.Job] = true
		}
	}
	for i, ix := range srcs {
		switch {
		case ix.Model == "":
		case out.Model == "":
			out.Model = ix.Model
		case ix.Model != out.Model:
			return nil, fmt.Errorf("compact: index %d (job %s) was made by a build with another document model (%s, not %s)", i, ix.Job, ix.Model, out.Model)
		}
		out.FirstChunk = min(out.FirstChunk, ix.FirstChunk)
		if len(ix.Compacted) > 0 {
			out.Compacted = append(out.Compacted, ix.Compacted...)
		} else {
			out.Compacted = append(out.Compacted, job.Against{Job: ix.Job, Out: outs[i], FirstChunk: ix.FirstChunk, Chunks: ix.End() - ix.FirstChunk, Docs: ix.Docs})
		}
		out.Docs += ix.Docs
		for _, a := range ix.Against {
			if !in[a.Job] && !slices.ContainsFunc(out.Against, func(b job.Against) bool { return b.Job == a.Job }) {
				out.Against = append(out.Against, a)
			}
		}
		for _, ch := range ix.Chunks {
			var err error
			if ch.DocFile, err = copyMounted(ctx, st, i, ch.DocFile); err != nil {
				return nil, err
			}
			if ch.SigFile, err = copyMounted(ctx, st, i, ch.SigFile); err != nil {
				return nil, err
			}
			out.Chunks = append(out.Chunks, ch)
		}
	}
	if out.Model == "" {
		// Signature files only: they hold what was computed, whatever
		// the model; the index is marked with this build's.
		fp, err := sketch.ModelFingerprint(out.Params)
		if err != nil {
			return nil, err
		}
		out.Model = fp
	}
	slices.SortFunc(out.Chunks, func(a, b Chunk) int { return cmp.Compare(a.Chunk, b.Chunk) })
	files, err := compactBands(ctx, st, srcs, out)
	if err != nil {
		return nil, err
	}
	out.BandFiles = files
	if err := Write(ctx, st, out); err != nil {
		return nil, fmt.Errorf("compact: %w", err)
	}
	return out, nil
}

// copyMounted copies the file info names in mount i to the same name in
// st, and returns its description there.
func copyMounted(ctx context.Context, st storage.FS, i int, info fileinfo.Info) (fileinfo.Info, error) {
	f, err := st.Open(ctx, job.InMount(i, info.Name))
	if err != nil {
		return fileinfo.Info{}, fmt.Errorf("compact: %w", err)
	}
	defer f.Close()
	size := info.Bytes
	if size == 0 {
		size = f.Size() - info.Offset
	}
	w, err := st.Create(ctx, info.Name)
	if err != nil {
		return fileinfo.Info{}, fmt.Errorf("compact: %w", err)
	}
	if _, err := io.Copy(w, io.NewSectionReader(f, info.Offset, size)); err != nil {
		w.Abort()
		return fileinfo.Info{}, fmt.Errorf("compact: copying %s: %w", info.Name, err)
	}
	if err := w.Commit(); err != nil {
		return fileinfo.Info{}, fmt.Errorf("compact: %s: %w", info.Name, err)
	}
	info.Offset = 0
	return info, nil
}

// compactBands merges the sources' band records, partition by partition,
// into files of about compactFileBytes (estimated at compactRecordBytes a
// record).
func compactBands(ctx context.Context, st storage.FS, srcs []*Index, out *Index) ([]BandFile, error) {
	parts := out.Params.Partitions
	est := out.Docs * int64(out.Params.Bands) * compactRecordBytes
	n := int(min(int64(parts), max(1, (est+compactFileBytes-1)/compactFileBytes)))
	earlier := &EarlierBands{jobs: srcs}
	var files []BandFile
	for f := range n {
		first, last := f*parts/n, (f+1)*parts/n-1
		bf, err := compactRange(ctx, st, earlier, first, last)
		if err != nil {
			return nil, err
		}
		files = append(files, bf)
	}
	return files, nil
}

// compactFileBytes is about the bytes of a compacted bands/ file: a
// reduce task's band records (see the reduce stage's reduceTaskBytes).
const compactFileBytes = 96 << 20

// compactRecordBytes is about the bytes of a band record in bands/ (16.9
// on the 100k corpus).
const compactRecordBytes = 17

func compactRange(ctx context.Context, st storage.FS, earlier *EarlierBands, first, last int) (BandFile, error) {
	name := job.ReduceBandFile(first, last)
	w, err := pqfile.NewWriter[records.Band](ctx, st, name, BandsOptions())
	if err != nil {
		return BandFile{}, err
	}
	defer w.Abort()
	var rows []records.Band
	for part := first; part <= last; part++ {
		lists, err := earlier.Read(ctx, st, part)
		if err != nil {
			return BandFile{}, fmt.Errorf("compact partition %d: %w", part, err)
		}
		rows = rows[:0]
		for _, l := range lists {
			for _, r := range l.Recs {
				rows = append(rows, records.Band{Part: int32(part), Band: r.Band, Key: r.Key, Doc: r.Doc, FP: r.FPHi})
			}
		}
		slices.SortFunc(rows, func(a, b records.Band) int {
			return cmp.Or(cmp.Compare(a.Band, b.Band), cmp.Compare(a.Key, b.Key), cmp.Compare(a.Doc, b.Doc))
		})
		if err := w.Write(rows); err != nil {
			return BandFile{}, err
		}
		if err := w.EndRowGroup(); err != nil {
			return BandFile{}, err
		}
	}
	info, err := w.Close()
	if err != nil {
		return BandFile{}, err
	}
	return BandFile{File: info, First: first, Last: last}, nil
}
