package pqfile

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/storage"
)

// SeekSorted positions the reader at or before the first row whose value
// of column, an int64 column in ascending order, is at least v: at the
// start of the page that may hold it (by the file's page index), else of
// its row group (by its statistics), else at the first row. The next
// Read returns rows from there: passing over those below v is the
// caller's part. Past the last row when every value is below v.
func (r *Reader[T]) SeekSorted(column string, v int64) error {
	leaf, ok := r.pf.Schema().Lookup(column)
	if !ok {
		return fmt.Errorf("pqfile: %s: no column %s", r.name, column)
	}
	var row int64
	var err error
	err = guard(func() error {
		row, err = firstRowFrom(r.pf, leaf.ColumnIndex, v)
		return err
	})
	if err != nil {
		return fmt.Errorf("pqfile: %s: seek to %s %d: %w", r.name, column, v, err)
	}
	return r.SeekToRow(row)
}

// firstRowFrom is SeekSorted's row: the first of the page or row group of
// pf that may hold a value of column col at least v.
func firstRowFrom(pf *parquet.File, col int, v int64) (int64, error) {
	var row int64
	for _, g := range pf.RowGroups() {
		cc := g.ColumnChunks()[col]
		if fc, ok := cc.(*parquet.FileColumnChunk); ok {
			if _, hi, ok := fc.Bounds(); ok && hi.Int64() < v {
				row += g.NumRows()
				continue
			}
		}
		ci, err := cc.ColumnIndex()
		if err != nil {
			return row, nil // no page index: the row group's start
		}
		oi, err := cc.OffsetIndex()
		if err != nil || oi.NumPages() != ci.NumPages() {
			return row, nil
		}
		for p := range ci.NumPages() {
			if ci.NullPage(p) || ci.MaxValue(p).Int64() >= v {
				return row + oi.FirstRowIndex(p), nil
			}
		}
		// every page below v, though the statistics said otherwise
		row += g.NumRows()
	}
	return row, nil
}

// ReadSorted calls fn with the rows of name, a file sorted by column,
// whose key (the column's value, by key) is one of keys, which must be
// in increasing order. Each key is found by seeking to the page that may
// hold it (SeekSorted), so a few rows of a large file cost a page each,
// not the file.
func ReadSorted[T any](ctx context.Context, s storage.Opener, name, column string, keys []int64, key func(*T) int64, fn func(T)) error {
	r, err := Open[T](ctx, s, name, nil)
	if err != nil {
		return err
	}
	defer r.Close()
	buf := make([]T, 64)
	for _, k := range keys {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := r.SeekSorted(column, k); err != nil {
			return err
		}
		if err := readUpTo(r, buf, k, key, fn); err != nil {
			return err
		}
	}
	return nil
}

// readUpTo reads rows of r until one with key k or beyond (fn is called
// with the first whose key is k) or the file's end.
func readUpTo[T any](r *Reader[T], buf []T, k int64, key func(*T) int64, fn func(T)) error {
	for {
		n, err := r.Read(buf)
		for i := range buf[:n] {
			switch v := key(&buf[i]); {
			case v == k:
				fn(buf[i])
				return nil
			case v > k:
				return nil
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
