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
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// WriteDropped writes the documents the job dropped to
// job.DroppedIndexFile, a copy of duplicates.parquet (its rows are sorted
// by document, so each chunk's are a run of them), and records in each
// chunk of ix where its rows are: a later job matched against the index
// learns from it which of its documents were never published, and which
// document was kept in their place, reading one chunk's rows at a time.
// It reads the doc column of duplicates.parquet for the chunks' runs and
// copies the file's bytes, which it neither decodes nor encodes again. A
// job that dropped nothing writes no file.
func WriteDropped(ctx context.Context, st storage.FS, ix *Index) error {
	chunkAt := map[int]int{}
	for i := range ix.Chunks {
		ix.Chunks[i].Dropped = &job.DroppedList{}
		chunkAt[ix.Chunks[i].Chunk] = i
	}
	var lists []*job.DroppedList
	var rows int64
	cur := -1 // the chunk of the run being counted
	err := pqfile.Stream(ctx, st, job.DuplicatesFile, nil, 4096, func(docs []droppedDoc) error {
		for _, d := range docs {
			if c := job.ChunkOf(d.Doc); c != cur {
				if c < cur {
					return fmt.Errorf("%s: document %d of chunk %d after chunk %d's: %w", job.DuplicatesFile, d.Doc, c, cur, pqfile.ErrCorrupt)
				}
				i, ok := chunkAt[c]
				if !ok {
					return fmt.Errorf("%s: document of chunk %d, not one of the job's", job.DuplicatesFile, c)
				}
				l := ix.Chunks[i].Dropped
				l.First = rows
				lists, cur = append(lists, l), c
			}
			lists[len(lists)-1].Docs++
			rows++
		}
		return nil
	})
	if err == nil && rows > 0 {
		var info fileinfo.Info
		if info, err = copyFile(ctx, st, job.DuplicatesFile, job.DroppedIndexFile, rows); err == nil {
			for _, l := range lists {
				f := info
				l.File = &f
			}
		}
	}
	if err != nil {
		return fmt.Errorf("index: the documents dropped: %w", err)
	}
	return nil
}

// droppedDoc is what WriteDropped reads of a row of duplicates.parquet
// (records.Duplicate).
type droppedDoc struct {
	Doc int64 `parquet:"doc"`
}

// copyFile copies the bytes of from to a new file to, of rows rows, and
// describes the copy.
func copyFile(ctx context.Context, st storage.FS, from, to string, rows int64) (fileinfo.Info, error) {
	r, err := st.Open(ctx, from)
	if err != nil {
		return fileinfo.Info{}, err
	}
	defer r.Close()
	w, err := st.Create(ctx, to)
	if err != nil {
		return fileinfo.Info{}, err
	}
	sum := fileinfo.NewSummer(w)
	if _, err := io.Copy(sum, io.NewSectionReader(r, 0, r.Size())); err != nil {
		w.Abort()
		return fileinfo.Info{}, fmt.Errorf("copying %s to %s: %w", from, to, err)
	}
	if err := w.Commit(); err != nil {
		return fileinfo.Info{}, err
	}
	return sum.Info(to, rows), nil
}

// droppedWriter writes job.DroppedIndexFile from rows in document order,
// a row group a chunk, filling in each chunk's DroppedList.
type droppedWriter struct {
	ctx   context.Context
	st    storage.FS
	w     *pqfile.Writer[records.Duplicate]
	cur   int // the chunk being written, -1 before the first
	rows  int64
	lists []*job.DroppedList
}

func newDroppedWriter(ctx context.Context, st storage.FS) *droppedWriter {
	return &droppedWriter{ctx: ctx, st: st, cur: -1}
}

// add writes rows, each run of one chunk's after the rows of the chunks
// before it: listOf gives the chunk's list, which takes the run.
func (d *droppedWriter) add(rows []records.Duplicate, listOf func(chunk int) (*job.DroppedList, error)) error {
	for lo := 0; lo < len(rows); {
		c := job.ChunkOf(rows[lo].Doc)
		hi := lo
		for hi < len(rows) && job.ChunkOf(rows[hi].Doc) == c {
			hi++
		}
		if c != d.cur {
			if c < d.cur {
				return fmt.Errorf("document %d of chunk %d after chunk %d's: %w", rows[lo].Doc, c, d.cur, pqfile.ErrCorrupt)
			}
			l, err := listOf(c)
			if err != nil {
				return err
			}
			if d.w == nil {
				if d.w, err = pqfile.NewWriter[records.Duplicate](d.ctx, d.st, job.DroppedIndexFile, pqfile.Sorted("doc")); err != nil {
					return err
				}
			} else if err := d.w.EndRowGroup(); err != nil {
				return err
			}
			l.First, l.Docs = d.rows, 0
			d.lists = append(d.lists, l)
			d.cur = c
		}
		if err := d.w.Write(rows[lo:hi]); err != nil {
			return err
		}
		n := int64(hi - lo)
		d.lists[len(d.lists)-1].Docs += n
		d.rows += n
		lo = hi
	}
	return nil
}

// close commits the file and names it in every list that has rows.
func (d *droppedWriter) close() error {
	if d.w == nil {
		return nil
	}
	info, err := d.w.Close()
	d.w = nil
	if err != nil {
		return err
	}
	for _, l := range d.lists {
		f := info
		l.File = &f
	}
	return nil
}

func (d *droppedWriter) abort() {
	if d.w != nil {
		d.w.Abort()
	}
}

// StreamDropped calls fn with a chunk's list of documents its job
// dropped, in batches: count rows from row first of the file info
// describes (every row of it when count is 0: a list of an earlier build,
// a file of its own). A file read whole is checked against info (size,
// checksum, rows); a range of the job's file is read without the
// whole-file checksum, which would read every chunk's rows for each.
func StreamDropped[T any](ctx context.Context, st storage.Opener, info fileinfo.Info, first, count int64, fn func([]T) error) error {
	if count == 0 {
		return pqfile.Stream(ctx, st, info.Name, &info, 4096, fn)
	}
	if first < 0 || first+count > info.Rows {
		return fmt.Errorf("%s: rows %d to %d of %d: %w", info.Name, first, first+count, info.Rows, pqfile.ErrCorrupt)
	}
	r, err := pqfile.Open[T](ctx, st, info.Name, nil)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.SeekToRow(first); err != nil {
		return err
	}
	buf := make([]T, min(count, 4096))
	for left := count; left > 0; {
		n, err := r.Read(buf[:min(left, int64(len(buf)))])
		if n > 0 {
			if err := fn(buf[:n]); err != nil {
				return err
			}
			left -= int64(n)
		}
		if errors.Is(err, io.EOF) && left > 0 {
			return fmt.Errorf("%s: %d rows short of row %d: %w", info.Name, left, first+count, pqfile.ErrCorrupt)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
	}
	return nil
}

// compactDropped writes the compacted index's DroppedIndexFile from the
// sources' lists (mounted as compaction reads them), a row group a chunk,
// and points out's chunks at it. Each source file is read whole, checked
// against what its index records, and each chunk's rows must be as many
// as its list records. Chunks whose index recorded no list (made before
// it did) keep none.
func compactDropped(ctx context.Context, st storage.FS, srcs []*Index, out *Index, created *[]string) error {
	at := map[int]int{} // chunk -> its index in out.Chunks
	for i, ch := range out.Chunks {
		at[ch.Chunk] = i
	}
	type source struct {
		mount int
		info  fileinfo.Info
		first int // its first chunk
	}
	var files []source
	seen := map[string]bool{}
	want := map[int]int64{} // rows each chunk's list records
	for i, ix := range srcs {
		for _, ch := range ix.Chunks {
			d := ch.Dropped
			if d == nil {
				continue
			}
			want[ch.Chunk] = d.Docs
			if d.File == nil {
				continue
			}
			name := job.InMount(i, d.File.Name)
			if !seen[name] {
				seen[name] = true
				f := *d.File
				f.Name = name
				files = append(files, source{i, f, ch.Chunk})
			}
		}
	}
	slices.SortFunc(files, func(a, b source) int { return cmp.Compare(a.first, b.first) })
	for c := range want {
		out.Chunks[at[c]].Dropped = &job.DroppedList{}
	}
	w := newDroppedWriter(ctx, st)
	listOf := func(c int) (*job.DroppedList, error) {
		i, ok := at[c]
		if !ok || out.Chunks[i].Dropped == nil {
			return nil, fmt.Errorf("document of chunk %d, whose index records no list of documents dropped: %w", c, pqfile.ErrCorrupt)
		}
		return out.Chunks[i].Dropped, nil
	}
	for _, f := range files {
		err := pqfile.Stream(ctx, st, f.info.Name, &f.info, 4096, func(rows []records.Duplicate) error {
			return w.add(rows, listOf)
		})
		if err != nil {
			w.abort()
			return fmt.Errorf("compact: the documents dropped: %w", err)
		}
	}
	if w.w != nil {
		*created = append(*created, job.DroppedIndexFile)
	}
	if err := w.close(); err != nil {
		return fmt.Errorf("compact: the documents dropped: %w", err)
	}
	for c, n := range want {
		if got := out.Chunks[at[c]].Dropped.Docs; got != n {
			return fmt.Errorf("compact: chunk %d: %d documents dropped in its list, %d recorded: %w", c, got, n, pqfile.ErrCorrupt)
		}
	}
	return nil
}
