// Package pqfile writes and reads whole Parquet files of typed rows through
// a store, recording and checking a checksum so that a truncated or foreign
// file is never taken as complete.
package pqfile

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/buildinfo"
	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/storage"
)

// maxRowsPerGroup bounds the rows a writer holds in memory.
const maxRowsPerGroup = 1 << 20

// Options describe a file to write.
type Options struct {
	// SortedBy names the columns the rows are already sorted by; the
	// order is declared in the file's metadata.
	SortedBy []string
	// Raw stores pages uncompressed: for hashes and signatures, which
	// do not compress, it saves the time of trying.
	Raw bool
	// RowGroupRows bounds the rows of a row group, which a writer holds
	// in memory (default 1<<20); it must be a multiple of 64 rows.
	RowGroupRows int
	// Dense compresses at zstd's default level instead of its fastest:
	// for files whose rows repeat at a distance the fastest level does
	// not look back to, as pairs/ and candidates/ do for a template
	// family (the templated corpus: 8.3 against 15.9 MB of candidates/,
	// 18.7 against 21.5 MB of pairs/).
	Dense bool
	// Dict names columns to store dictionary-encoded: columns of long
	// values that repeat, such as the urls of pairs (a document is in
	// many), which then cost an index each, not their bytes, to write,
	// compress and read. (Short ones, ids, compress better as they are.)
	Dict []string
}

// fastZstd is zstd at its fastest level, the codec of every file not
// Dense or Raw: against its default level, the 100k benchmark job's
// outputs grow 0.23% and its CPU falls 3% (docs/performance.md,
// 2026-11-29).
var fastZstd = zstdCodec{level: zstd.SpeedFastest}

// denseZstd is zstd at its default level, the codec of Dense files.
var denseZstd = zstdCodec{level: zstd.SpeedDefault}

// Sorted is shorthand for Options{SortedBy: cols}.
func Sorted(cols ...string) Options { return Options{SortedBy: cols} }

// Write writes rows to name.
func Write[T any](ctx context.Context, s storage.Creator, name string, rows []T, o Options) (fileinfo.Info, error) {
	w, err := NewWriter[T](ctx, s, name, o)
	if err != nil {
		return fileinfo.Info{}, err
	}
	if err := w.Write(rows); err != nil {
		w.Abort()
		return fileinfo.Info{}, err
	}
	return w.Close()
}

// writeBatch is how many rows a Writer hands to parquet-go at a time. The
// library splits every call into runs of 64 rows and decides where pages
// end between runs, so batches of a multiple of 64 rows (dividing
// maxRowsPerGroup) make a file written in pieces byte-identical to one
// written in a single call.
const writeBatch = 64 * 64

// Writer writes a Parquet file of rows given a batch at a time, holding at
// most one row group (and writeBatch rows) in memory: its file is
// byte-identical to Write of all the rows at once.
type Writer[T any] struct {
	ctx  context.Context
	name string
	w    storage.Writer
	hw   *fileinfo.Summer
	pw   *parquet.GenericWriter[T]
	buf  []T
	rows int64
}

// NewWriter starts writing name; nothing is visible under it until Close.
func NewWriter[T any](ctx context.Context, s storage.Creator, name string, o Options) (*Writer[T], error) {
	groupRows := o.RowGroupRows
	if groupRows == 0 {
		groupRows = maxRowsPerGroup
	}
	if groupRows < 0 || groupRows%64 != 0 {
		return nil, fmt.Errorf("pqfile: %s: row groups of %d rows: not a positive multiple of 64", name, groupRows)
	}
	dict, err := dictTags[T](o.Dict)
	if err != nil {
		return nil, fmt.Errorf("pqfile: %s: %w", name, err)
	}
	w, err := s.Create(ctx, name)
	if err != nil {
		return nil, err
	}
	hw := fileinfo.NewSummer(w)
	opts := []parquet.WriterOption{
		parquet.Compression(&fastZstd),
		parquet.MaxRowsPerRowGroup(int64(groupRows)),
		&parquet.WriterConfig{CreatedBy: buildinfo.Read().CreatedBy()},
	}
	switch {
	case o.Raw:
		opts[0] = parquet.Compression(&parquet.Uncompressed)
	case o.Dense:
		opts[0] = parquet.Compression(&denseZstd)
	}
	opts = append(opts, dict...)
	if len(o.SortedBy) > 0 {
		cols := make([]parquet.SortingColumn, len(o.SortedBy))
		for i, c := range o.SortedBy {
			cols[i] = parquet.Ascending(c)
		}
		opts = append(opts, parquet.SortingWriterConfig(parquet.SortingColumns(cols...)))
	}
	return &Writer[T]{ctx: ctx, name: name, w: w, hw: hw, pw: parquet.NewGenericWriter[T](hw, opts...)}, nil
}

// dictTags are the writer options that store the columns cols of T (by
// name, fields of T itself) dictionary-encoded: parquet-go takes a
// column's encoding from its field's tag, which they replace.
func dictTags[T any](cols []string) ([]parquet.WriterOption, error) {
	t := reflect.TypeFor[T]()
	var opts []parquet.WriterOption
	for _, c := range cols {
		f, ok := fieldOf(t, c)
		if !ok {
			return nil, fmt.Errorf("no column %q to store dictionary-encoded in %v", c, t)
		}
		tag := reflect.StructTag(fmt.Sprintf("parquet:%q", f.Tag.Get("parquet")+",dict"))
		opts = append(opts, parquet.StructTag(tag, f.Name))
	}
	return opts, nil
}

// fieldOf returns the field of struct t whose parquet tag names column c.
func fieldOf(t reflect.Type, c string) (reflect.StructField, bool) {
	if t.Kind() != reflect.Struct {
		return reflect.StructField{}, false
	}
	for f := range t.Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("parquet"), ","); name == c {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// Write adds rows to the file.
func (w *Writer[T]) Write(rows []T) error {
	w.rows += int64(len(rows))
	if len(w.buf) > 0 {
		n := min(len(rows), writeBatch-len(w.buf))
		w.buf = append(w.buf, rows[:n]...)
		rows = rows[n:]
		if len(w.buf) < writeBatch {
			return nil
		}
		if err := w.flush(w.buf); err != nil {
			return err
		}
		w.buf = w.buf[:0]
	}
	// Whole batches go straight through; the rest waits for more rows.
	whole := len(rows) / writeBatch * writeBatch
	for start := 0; start < whole; start += maxRowsPerGroup {
		if err := w.flush(rows[start:min(start+maxRowsPerGroup, whole)]); err != nil {
			return err
		}
	}
	if rest := rows[whole:]; len(rest) > 0 {
		if w.buf == nil {
			w.buf = make([]T, 0, writeBatch)
		}
		w.buf = append(w.buf, rest...)
	}
	return nil
}

func (w *Writer[T]) flush(rows []T) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	if _, err := w.pw.Write(rows); err != nil {
		return fmt.Errorf("pqfile: write %s: %w", w.name, err)
	}
	return nil
}

// EndRowGroup ends the row group being written: the rows written since
// the last one form a row group of their own (none if there were none).
func (w *Writer[T]) EndRowGroup() error {
	if len(w.buf) > 0 {
		if err := w.flush(w.buf); err != nil {
			return err
		}
		w.buf = w.buf[:0]
	}
	if err := w.pw.Flush(); err != nil {
		return fmt.Errorf("pqfile: write %s: %w", w.name, err)
	}
	return nil
}

// Close writes the rest of the file and commits it.
func (w *Writer[T]) Close() (fileinfo.Info, error) {
	if len(w.buf) > 0 {
		if err := w.flush(w.buf); err != nil {
			w.w.Abort()
			return fileinfo.Info{}, err
		}
		w.buf = w.buf[:0]
	}
	if err := w.pw.Close(); err != nil {
		w.w.Abort()
		return fileinfo.Info{}, fmt.Errorf("pqfile: close %s: %w", w.name, err)
	}
	if err := w.w.Commit(); err != nil {
		return fileinfo.Info{}, err
	}
	return w.hw.Info(w.name, w.rows), nil
}

// Abort discards the file.
func (w *Writer[T]) Abort() error { return w.w.Abort() }

// ErrCorrupt marks a file that does not match what its writer recorded.
var ErrCorrupt = errors.New("file does not match its recorded checksum or row count")

// Reader reads the rows of one file in batches.
type Reader[T any] struct {
	name  string
	f     storage.File
	pf    *parquet.File
	r     *parquet.GenericReader[T]
	want  *fileinfo.Info
	total int64
}

// Open opens a file written by Write. When want is not nil, the file's size
// and checksum are checked first (one sequential pass) and its row count at
// the end.
func Open[T any](ctx context.Context, s storage.Opener, name string, want *fileinfo.Info) (*Reader[T], error) {
	f, pf, err := openFile(ctx, s, name, want)
	if err != nil {
		return nil, err
	}
	return &Reader[T]{name: name, f: f, pf: pf, r: parquet.NewGenericReader[T](pf, formerNames[T](pf)...), want: want}, nil
}

// formerNames are the options that read a column of T under its former
// name, from a file an earlier build wrote before the column was renamed:
// the field's `formerly` tag names it (records.DocRecord's byte_offset was
// offset). Without them parquet-go would read such a column as missing,
// zero in every row, and say nothing.
func formerNames[T any](pf *parquet.File) []parquet.ReaderOption {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct {
		return nil
	}
	has := map[string]bool{}
	for _, f := range pf.Schema().Fields() {
		has[f.Name()] = true
	}
	var opts []parquet.ReaderOption
	for f := range t.Fields() {
		old := f.Tag.Get("formerly")
		name, rest, _ := strings.Cut(f.Tag.Get("parquet"), ",")
		if old == "" || has[name] || !has[old] {
			continue
		}
		if rest != "" {
			old += "," + rest
		}
		opts = append(opts, parquet.StructTag(reflect.StructTag(fmt.Sprintf("parquet:%q", old)), f.Name))
	}
	return opts
}

// openFile opens name as a Parquet file, checking its size and checksum
// against want first when want is not nil.
func openFile(ctx context.Context, s storage.Opener, name string, want *fileinfo.Info) (storage.File, *parquet.File, error) {
	f, err := s.Open(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	if want != nil {
		h := xxhash.New()
		n, err := io.Copy(h, f)
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("pqfile: read %s: %w", name, err)
		}
		if sum := h.Sum64(); sum != want.Checksum || n != want.Bytes {
			f.Close()
			return nil, nil, fmt.Errorf("pqfile: %s: checksum %x (%d bytes), want %x (%d bytes): %w",
				name, sum, n, want.Checksum, want.Bytes, ErrCorrupt)
		}
	}
	if err := checkFooter(f); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("pqfile: open %s: %w: %w", name, err, ErrCorrupt)
	}
	var pf *parquet.File
	err = guard(func() (err error) {
		pf, err = parquet.OpenFile(f, f.Size())
		return err
	})
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("pqfile: open %s: %w", name, err)
	}
	return f, pf, nil
}

// Read fills buf with the next rows; it returns io.EOF after the last row.
func (r *Reader[T]) Read(buf []T) (int, error) {
	var n int
	err := guard(func() (err error) {
		n, err = r.r.Read(buf)
		return err
	})
	r.total += int64(n)
	if errors.Is(err, io.EOF) {
		if r.want != nil && r.total != r.want.Rows {
			return n, fmt.Errorf("pqfile: %s: %d rows, want %d: %w", r.name, r.total, r.want.Rows, ErrCorrupt)
		}
		return n, io.EOF
	}
	if err != nil {
		return n, fmt.Errorf("pqfile: read %s: %w", r.name, err)
	}
	return n, nil
}

// SeekToRow positions the reader at row n, the first row the next Read
// returns (parquet-go skips the pages before it). The rows passed over
// count as read: a reader that seeks checks no row count at its end
// unless it reads through to it.
func (r *Reader[T]) SeekToRow(n int64) error {
	err := guard(func() error { return r.r.SeekToRow(n) })
	if err != nil {
		return fmt.Errorf("pqfile: %s: row %d: %w", r.name, n, err)
	}
	r.total = n
	return nil
}

// checkFooter checks that the footer's length, in a Parquet file's last 8
// bytes, fits in the file: parquet-go allocates what it claims before it
// reads it (up to 4 GiB for a file of a few bytes).
func checkFooter(f storage.File) error {
	size := f.Size()
	if size < 12 { // the magic, the footer's length, the magic
		return fmt.Errorf("%d bytes, too short for a Parquet file", size)
	}
	var tail [8]byte
	if _, err := f.ReadAt(tail[:], size-8); err != nil {
		return err
	}
	if footer := int64(binary.LittleEndian.Uint32(tail[:])); footer > size-12 {
		return fmt.Errorf("a footer of %d bytes in %d", footer, size)
	}
	return nil
}

// guard returns what call returns, or an error wrapping ErrCorrupt if
// parquet-go panics in it: it may on bytes it did not write that pass the
// checks of a forged description (workfile's fuzz tests found one in its
// page index), and a damaged file must fail its reader, not its process.
func guard(call func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("parquet-go failed on it: %v: %w", p, ErrCorrupt)
		}
	}()
	return call()
}

// Close releases the file.
func (r *Reader[T]) Close() error {
	r.r.Close()
	return r.f.Close()
}

// Stream reads a file in batches of rows, calling fn for each batch; the
// batch slice is reused between calls.
func Stream[T any](ctx context.Context, s storage.Opener, name string, want *fileinfo.Info, batch int, fn func([]T) error) error {
	r, err := Open[T](ctx, s, name, want)
	if err != nil {
		return err
	}
	defer r.Close()
	buf := make([]T, batch)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := r.Read(buf)
		if n > 0 {
			if ferr := fn(buf[:n]); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// Read reads every row of a file written by Write, checked against want
// when it is not nil.
func Read[T any](ctx context.Context, s storage.Opener, name string, want *fileinfo.Info) ([]T, error) {
	var rows []T
	err := Stream(ctx, s, name, want, 4096, func(b []T) error {
		rows = append(rows, b...)
		return nil
	})
	return rows, err
}
