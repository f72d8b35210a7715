package index

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/textstore"
	"github.com/neardup/neardup/pkg/records"
)

// Compact writes into st one index holding the documents of the indexes
// srcs, which st mounts: srcs[i] at job.Mount(i). It is how a series of
// jobs (each matched against all earlier ones, so their chunks are
// numbered apart) keeps one index instead of one a job: --against and
// query read it as they read any.
//
// Each chunk's documents file and text store (or signature file, of an
// index before version 3) is copied as it is, under the name it had,
// checked against its source index: its files must be the chunk's own
// (by name, rows and the documents they hold) and the bytes copied those
// whose size and checksum it recorded (a damaged source fails, naming
// the file, and what was written is removed again: index.json is never
// written);
// the band records of every partition, read from every source in either
// layout of bands/, are merged into bands/ files of about
// compactFileBytes, a row group per partition, as a job's reduce tasks
// write them; the sources' unit tables (--paragraphs) are merged into
// one (compactUnits). index.json, written last, names the job name, lists every
// chunk and, as earlier jobs, those the sources were matched against
// that are not among them, and the jobs it holds (Compacted: a source
// that is itself compacted gives its own; outs[i] is srcs[i]'s location).
// The caller checks that the sources are comparable (the same
// parameters, chunks apart).
func Compact(ctx context.Context, st storage.FS, srcs []*Index, outs []string, name string) (_ *Index, err error) {
	if len(srcs) == 0 {
		return nil, fmt.Errorf("compact: no index")
	}
	// The files written, removed again if the compaction fails: a
	// failed one leaves no index.json, and no copies either.
	created := &[]string{}
	defer func() {
		if err != nil {
			err = errors.Join(err, removeAll(context.WithoutCancel(ctx), st, *created))
		}
	}()
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
			if err := checkChunkNames(ix, ch); err != nil {
				return nil, fmt.Errorf("compact: %s: %w", outs[i], err)
			}
		}
	}
	// Only now is anything written: a source whose index.json does not
	// hold together fails before.
	for i, ix := range srcs {
		for _, ch := range ix.Chunks {
			var err error
			if ch.DocFile, err = copyMounted(ctx, st, i, outs[i], ch.DocFile, created); err != nil {
				return nil, err
			}
			if ch.SigFile, err = copyMounted(ctx, st, i, outs[i], ch.SigFile, created); err != nil {
				return nil, err
			}
			if err := checkChunkFiles(ctx, st, ch); err != nil {
				return nil, fmt.Errorf("compact: %s: chunk %d: %w", outs[i], ch.Chunk, err)
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
	if err := compactDropped(ctx, st, srcs, out, created); err != nil {
		return nil, err
	}
	files, err := compactBands(ctx, st, srcs, out, created)
	if err != nil {
		return nil, err
	}
	out.BandFiles = files
	if out.Units, err = compactUnits(ctx, st, srcs, out, created); err != nil {
		return nil, err
	}
	if err := Write(ctx, st, out); err != nil {
		return nil, fmt.Errorf("compact: %w", err)
	}
	return out, nil
}

// copyMounted copies the file info names in mount i (the index at out)
// to the same name in st, adding it to created, and returns its
// description there. The bytes copied must be those info records (its
// size and checksum): a damaged file is an error naming it, and its copy
// is not committed.
func copyMounted(ctx context.Context, st storage.FS, i int, out string, info fileinfo.Info, created *[]string) (fileinfo.Info, error) {
	f, err := st.Open(ctx, job.InMount(i, info.Name))
	if err != nil {
		return fileinfo.Info{}, fmt.Errorf("compact: %s: %w", out, err)
	}
	defer f.Close()
	w, err := st.Create(ctx, info.Name)
	if err != nil {
		return fileinfo.Info{}, fmt.Errorf("compact: %w", err)
	}
	sum := fileinfo.NewSummer(w)
	n, err := io.Copy(sum, io.NewSectionReader(f, info.Offset, info.Bytes))
	if err != nil {
		w.Abort()
		return fileinfo.Info{}, fmt.Errorf("compact: copying %s/%s: %w", out, info.Name, err)
	}
	if got := sum.Info(info.Name, info.Rows); got.Checksum != info.Checksum || n != info.Bytes {
		w.Abort()
		where := ""
		if info.Offset != 0 {
			where = fmt.Sprintf(" (the range at offset %d)", info.Offset)
		}
		return fileinfo.Info{}, fmt.Errorf("compact: %s/%s%s: checksum %x (%d bytes), want %x (%d bytes) as its index records: %w",
			out, info.Name, where, got.Checksum, n, info.Checksum, info.Bytes, pqfile.ErrCorrupt)
	}
	if err := w.Commit(); err != nil {
		return fileinfo.Info{}, fmt.Errorf("compact: %s: %w", info.Name, err)
	}
	*created = append(*created, info.Name)
	info.Offset = 0
	return info, nil
}

// checkChunkNames checks that the files ch of the index ix names are
// the chunk's own: its documents file and its text store (or, before
// version 3, its signature file), each of its documents, and its list of
// documents dropped, by name and rows. Two
// chunks' entries swapped in index.json fail here.
func checkChunkNames(ix *Index, ch Chunk) error {
	sig := job.TextFile(ch.Chunk)
	if ix.Version < 3 {
		sig = fmt.Sprintf("%s/sigs/chunk-%06d.sig", job.IndexDir, ch.Chunk)
	}
	type chunkFile struct {
		info fileinfo.Info
		want string // its name
		rows int64
	}
	files := []chunkFile{{ch.DocFile, job.DocFile(ch.Chunk), ch.Docs}, {ch.SigFile, sig, ch.Docs}}
	if d := ch.Dropped; d != nil && d.File != nil {
		if d.File.Name != job.DroppedIndexFile {
			// an earlier build's list: a file of the chunk's own
			files = append(files, chunkFile{*d.File, job.DroppedFile(ch.Chunk), d.Docs})
		} else if d.First < 0 || d.Docs <= 0 || d.First+d.Docs > d.File.Rows {
			return fmt.Errorf("chunk %d: rows %d to %d of %s, which holds %d: %w", ch.Chunk, d.First, d.First+d.Docs, d.File.Name, d.File.Rows, pqfile.ErrCorrupt)
		}
	}
	for _, f := range files {
		if f.info.Name != f.want {
			return fmt.Errorf("chunk %d names %s, not its own %s: %w", ch.Chunk, f.info.Name, f.want, pqfile.ErrCorrupt)
		}
		if f.info.Rows != f.rows {
			return fmt.Errorf("chunk %d: %s of %d rows, not the %d it records: %w", ch.Chunk, f.info.Name, f.info.Rows, f.rows, pqfile.ErrCorrupt)
		}
	}
	return nil
}

// docOrdinal is the column of a documents file that says whose its rows
// are.
type docOrdinal struct {
	Doc int64 `parquet:"doc"`
}

// checkChunkFiles checks that the copies in st of ch's files hold ch's
// documents: every row of its documents file is a document of chunk
// ch.Chunk, in order, and its text store (version 3) has a slot for each.
// Files of two chunks swapped on disk, their checksums in index.json
// swapped too, fail here.
func checkChunkFiles(ctx context.Context, st storage.Opener, ch Chunk) error {
	var n int64
	err := pqfile.Stream(ctx, st, ch.DocFile.Name, nil, 4096, func(rows []docOrdinal) error {
		for _, r := range rows {
			if r.Doc != job.Ordinal(ch.Chunk, int(n)) {
				return fmt.Errorf("%s: row %d is document %d of chunk %d, not document %d of chunk %d: %w",
					ch.DocFile.Name, n, uint32(r.Doc), job.ChunkOf(r.Doc), n, ch.Chunk, pqfile.ErrCorrupt)
			}
			n++
		}
		return nil
	})
	if err != nil {
		return err
	}
	if n != ch.Docs {
		return fmt.Errorf("%s: %d documents, want %d: %w", ch.DocFile.Name, n, ch.Docs, pqfile.ErrCorrupt)
	}
	if ch.SigFile.Name != job.TextFile(ch.Chunk) {
		return nil // a signature file (index versions 1 and 2): checked by its checksum
	}
	f, err := st.Open(ctx, ch.SigFile.Name)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := textstore.NewReader(f, f.Size(), ch.SigFile.Name)
	if err != nil {
		return err
	}
	defer r.Close()
	if int64(r.Len()) != ch.Docs {
		return fmt.Errorf("%s: %d slots, want the chunk's %d documents: %w", ch.SigFile.Name, r.Len(), ch.Docs, pqfile.ErrCorrupt)
	}
	return nil
}

// removeAll removes the files names of st.
func removeAll(ctx context.Context, st storage.FS, names []string) error {
	var errs []error
	for _, name := range names {
		if err := st.Remove(ctx, name); err != nil {
			errs = append(errs, fmt.Errorf("removing the copy %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// compactBands merges the sources' band records, partition by partition,
// into files of about compactFileBytes (estimated at compactRecordBytes a
// record).
func compactBands(ctx context.Context, st storage.FS, srcs []*Index, out *Index, created *[]string) ([]BandFile, error) {
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
		*created = append(*created, bf.File.Name)
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
	var rows []records.Band
	bf, _, err := writeParts(ctx, st, job.ReduceBandFile(first, last), BandsOptions(), first, last, func(part int) ([]records.Band, error) {
		lists, err := earlier.Read(ctx, st, part)
		if err != nil {
			return nil, fmt.Errorf("compact partition %d: %w", part, err)
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
		return rows, nil
	})
	return bf, err
}

// writeParts writes the rows of partitions first to last, each as rows
// gives them, into the file name, a row group per partition, and returns
// it with its rows.
func writeParts[T any](ctx context.Context, st storage.FS, name string, o pqfile.Options, first, last int, rows func(part int) ([]T, error)) (BandFile, int64, error) {
	w, err := pqfile.NewWriter[T](ctx, st, name, o)
	if err != nil {
		return BandFile{}, 0, err
	}
	defer w.Abort()
	var n int64
	for part := first; part <= last; part++ {
		r, err := rows(part)
		if err != nil {
			return BandFile{}, 0, err
		}
		n += int64(len(r))
		if err := w.Write(r); err != nil {
			return BandFile{}, 0, err
		}
		if err := w.EndRowGroup(); err != nil {
			return BandFile{}, 0, err
		}
	}
	info, err := w.Close()
	if err != nil {
		return BandFile{}, 0, err
	}
	return BandFile{File: info, First: first, Last: last}, n, nil
}

// compactUnits merges the sources' unit tables, partition by partition,
// into files of about compactFileBytes (their sources' bytes: the merged
// table is no larger), as a job's paragraph pass merges the earlier
// tables into its own (ChooseUnitTables, of the kind of unit of the table
// counting the most jobs): a unit of several sources has the sum of
// their holders and the least first document. The jobs whose units no
// table chosen counts are listed in the table's NotCounted, with why;
// sources without a unit table give none (nil).
func compactUnits(ctx context.Context, st storage.FS, srcs []*Index, out *Index, created *[]string) (*UnitTable, error) {
	var unit string
	most := -1
	for _, ix := range srcs {
		if ix.Units != nil && len(ix.Units.Jobs) > most {
			unit, most = ix.Units.Unit, len(ix.Units.Jobs)
		}
	}
	if most < 0 {
		return nil, nil
	}
	parts := out.Params.Partitions
	choice := ChooseUnitTables(srcs, unit, parts)
	t := &UnitTable{Unit: unit, Partitions: parts, Jobs: choice.Counted, NotCounted: choice.NotCounted}
	n := int(min(int64(parts), max(1, (choice.Sources.Bytes()+compactFileBytes-1)/compactFileBytes)))
	for f := range n {
		first, last := f*parts/n, (f+1)*parts/n-1
		bf, rows, err := compactUnitRange(ctx, st, choice.Sources, first, last)
		if err != nil {
			return nil, err
		}
		*created = append(*created, bf.File.Name)
		t.Files = append(t.Files, bf)
		t.Units += rows
	}
	return t, nil
}

// compactUnitRange writes partitions first to last of the merged unit
// tables src into one file, a row group per partition.
func compactUnitRange(ctx context.Context, st storage.FS, src UnitSources, first, last int) (BandFile, int64, error) {
	return writeParts(ctx, st, job.UnitTableFile(first, last), UnitOptions(), first, last, func(part int) ([]records.Unit, error) {
		rows, err := src.Read(ctx, st, part)
		if err != nil {
			return nil, fmt.Errorf("compact the unit table's partition %d: %w", part, err)
		}
		return rows, nil
	})
}
