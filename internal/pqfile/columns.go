package pqfile

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/storage"
)

// ReadInt64s calls fn with the values of the int64 columns cols (required,
// at the top level) of a file written by Write, a row group at a time:
// fn's i-th slice holds column cols[i]'s values of the row group, one a
// row, and is reused after fn returns. When want is not nil the file is
// checked against it (as Open does) and its row count too.
//
// It decodes those columns' pages only, straight into int64s: a reader
// of rows of a struct of those columns (Open) takes every row through
// parquet-go's conversion of values, about 25 times slower for two
// columns of a verify task's pairs.
func ReadInt64s(ctx context.Context, s storage.Opener, name string, want *Info, cols []string, fn func([][]int64) error) error {
	f, pf, err := openFile(ctx, s, name, want)
	if err != nil {
		return err
	}
	defer f.Close()
	index := make([]int, len(cols))
	for i, c := range cols {
		leaf, ok := pf.Schema().Lookup(c)
		if !ok || leaf.MaxDefinitionLevel != 0 || leaf.MaxRepetitionLevel != 0 || leaf.Node.Type().Kind() != parquet.Int64 {
			return fmt.Errorf("pqfile: %s: no required int64 column %q", name, c)
		}
		index[i] = leaf.ColumnIndex
	}
	if want != nil && pf.NumRows() != want.Rows {
		return fmt.Errorf("pqfile: %s: %d rows, want %d: %w", name, pf.NumRows(), want.Rows, ErrCorrupt)
	}
	values := make([][]int64, len(cols))
	for g, rg := range pf.RowGroups() {
		if err := ctx.Err(); err != nil {
			return err
		}
		chunks := rg.ColumnChunks()
		for i, c := range index {
			if values[i], err = readInt64Chunk(chunks[c], values[i][:0]); err != nil {
				return fmt.Errorf("pqfile: read %s: column %s of row group %d: %w", name, cols[i], g, err)
			}
			if int64(len(values[i])) != rg.NumRows() {
				return fmt.Errorf("pqfile: %s: column %s of row group %d has %d values for %d rows: %w", name, cols[i], g, len(values[i]), rg.NumRows(), ErrCorrupt)
			}
		}
		if err := fn(values); err != nil {
			return err
		}
	}
	return nil
}

// readInt64Chunk appends the values of an int64 column chunk to dst.
func readInt64Chunk(c parquet.ColumnChunk, dst []int64) ([]int64, error) {
	pages := c.Pages()
	defer pages.Close()
	var buf []parquet.Value
	for {
		p, err := pages.ReadPage()
		if errors.Is(err, io.EOF) {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
		if p.NumNulls() != 0 {
			parquet.Release(p)
			return dst, fmt.Errorf("%d nulls", p.NumNulls())
		}
		if r, ok := p.Values().(parquet.Int64Reader); ok {
			dst, err = appendInt64s(r, dst, int(p.NumValues()))
		} else {
			// Another encoding (a dictionary's indexes): value by value.
			buf, dst, err = appendValues(p.Values(), buf, dst)
		}
		parquet.Release(p)
		if err != nil {
			return dst, err
		}
	}
}

// appendInt64s appends the n values of r to dst.
func appendInt64s(r parquet.Int64Reader, dst []int64, n int) ([]int64, error) {
	start := len(dst)
	dst = append(dst, make([]int64, n)...)
	for got := 0; got < n; {
		k, err := r.ReadInt64s(dst[start+got:])
		got += k
		if errors.Is(err, io.EOF) {
			return dst[:start+got], nil
		}
		if err != nil {
			return dst, err
		}
		if k == 0 {
			return dst, io.ErrNoProgress
		}
	}
	return dst, nil
}

// appendValues appends the values of r, as int64s, to dst, reading
// through buf.
func appendValues(r parquet.ValueReader, buf []parquet.Value, dst []int64) ([]parquet.Value, []int64, error) {
	if buf == nil {
		buf = make([]parquet.Value, 1024)
	}
	for {
		k, err := r.ReadValues(buf)
		for _, v := range buf[:k] {
			dst = append(dst, v.Int64())
		}
		if errors.Is(err, io.EOF) {
			return buf, dst, nil
		}
		if err != nil {
			return buf, dst, err
		}
		if k == 0 {
			return buf, dst, io.ErrNoProgress
		}
	}
}
