package pqfile

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/storage"
)

// Select calls fn with the rows of the file name (checked against want
// when it is not nil, as Open does) whose int64 column key keep accepts,
// in file order: the row's key, and its values of cols in their order,
// one a column (a null one where the row has none). It reads the key
// column of each row group first and the other columns only for the
// groups with a row kept, copying no value of a row it does not keep:
// for a reader that needs a few of a file's rows, several times cheaper
// than Stream, which makes every row a struct. The values are valid only
// during the call.
//
// ok is false, and nothing is read, when the file has no flat column of
// one of those names (a file of an earlier build, whose renamed columns
// Stream reads by their former names): read it by Stream then.
func Select(ctx context.Context, s storage.Opener, name string, want *fileinfo.Info, key string, keep func(int64) bool, cols []string, fn func(key int64, vals []parquet.Value) error) (ok bool, err error) {
	f, pf, err := openFile(ctx, s, name, want)
	if err != nil {
		return false, err
	}
	defer f.Close()
	idx := make([]int, 0, len(cols)+1)
	for i, c := range append([]string{key}, cols...) {
		leaf, found := pf.Schema().Lookup(c)
		if !found || leaf.MaxRepetitionLevel > 0 || i == 0 && (leaf.Node.Type().Kind() != parquet.Int64 || leaf.Node.Optional()) {
			return false, nil
		}
		idx = append(idx, leaf.ColumnIndex)
	}
	var (
		total int64
		keys  []parquet.Value
		sel   []int             // the rows kept of the group, by index
		vals  [][]parquet.Value // by column, the kept rows' values
		row   = make([]parquet.Value, len(cols))
	)
	for _, g := range pf.RowGroups() {
		if err := ctx.Err(); err != nil {
			return true, err
		}
		n := g.NumRows()
		chunks := g.ColumnChunks()
		sel = sel[:0]
		err := guard(func() (err error) {
			keys, err = columnValues(chunks[idx[0]], n, keys[:0], nil)
			return err
		})
		if err != nil {
			return true, fmt.Errorf("pqfile: %s: column %s: %w", name, key, err)
		}
		for r, k := range keys {
			if keep(k.Int64()) {
				sel = append(sel, r)
			}
		}
		total += n
		if len(sel) == 0 {
			continue
		}
		vals = vals[:0]
		for c, ci := range idx[1:] {
			var v []parquet.Value
			err := guard(func() (err error) {
				v, err = columnValues(chunks[ci], n, nil, sel)
				return err
			})
			if err != nil {
				return true, fmt.Errorf("pqfile: %s: column %s: %w", name, cols[c], err)
			}
			vals = append(vals, v)
		}
		for i, r := range sel {
			for c := range cols {
				row[c] = vals[c][i]
			}
			if err := fn(keys[r].Int64(), row); err != nil {
				return true, err
			}
		}
	}
	if want != nil && total != want.Rows {
		return true, fmt.Errorf("pqfile: %s: %d rows, want %d: %w", name, total, want.Rows, ErrCorrupt)
	}
	return true, nil
}

// columnValues appends to dst the values of a column chunk of n rows, one
// a row: every row's (for a column of numbers: their values are not
// copied out of their pages), or with sel (row indexes, increasing) those
// rows' only, each copied out of its page.
func columnValues(chunk parquet.ColumnChunk, n int64, dst []parquet.Value, sel []int) ([]parquet.Value, error) {
	pages := chunk.Pages()
	defer pages.Close()
	buf := make([]parquet.Value, 1024)
	var r int64 // the row of buf[0]
	next := 0   // the next of sel
	for {
		p, err := pages.ReadPage()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		vr := p.Values()
		for {
			k, err := vr.ReadValues(buf)
			for i := range buf[:k] {
				switch {
				case sel == nil:
					dst = append(dst, buf[i])
				case next < len(sel) && int64(sel[next]) == r+int64(i):
					dst = append(dst, buf[i].Clone())
					next++
				}
			}
			r += int64(k)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				parquet.Release(p)
				return nil, err
			}
			if k == 0 {
				parquet.Release(p)
				return nil, fmt.Errorf("a page of %d values read none: %w", p.NumValues(), ErrCorrupt)
			}
		}
		parquet.Release(p)
	}
	if r != n {
		return nil, fmt.Errorf("%d values in a row group of %d rows: %w", r, n, ErrCorrupt)
	}
	return dst, nil
}
