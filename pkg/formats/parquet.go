package formats

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// parquetBatch is the number of values read from a page at a time.
const parquetBatch = 256

// readParquet reads a parquet file: one document per row, from a string
// text column, an optional string or integer id column, an optional
// string url column and the optional column Options.Field, all top-level
// and not repeated. Reading goes column
// chunk by column chunk, so other columns are never decoded.
func (r *pieceReader) readParquet(f File) (err error) {
	// parquet-go may panic on corrupt files; the panic is not ours to pass
	// on to the pipeline.
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: parquet reader failed: %v", r.path, p)
		}
	}()
	if err := checkParquetFooter(f, f.Size()); err != nil {
		return fmt.Errorf("%s: not a readable parquet file: %w", r.path, err)
	}
	pf, err := parquet.OpenFile(f, f.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return fmt.Errorf("%s: not a readable parquet file: %w", r.path, err)
	}
	schema := pf.Schema()
	text, ok := parquetColumn(schema, r.o.TextField)
	if !ok {
		return fmt.Errorf("%s: no text column %q (columns: %s)", r.path, r.o.TextField, columnNames(schema))
	}
	if err := checkColumn(text, r.o.TextField, parquet.ByteArray); err != nil {
		return fmt.Errorf("%s: %w", r.path, err)
	}
	id, hasID := parquetColumn(schema, r.o.IDField)
	if hasID {
		if err := checkColumn(id, r.o.IDField, parquet.ByteArray, parquet.Int32, parquet.Int64); err != nil {
			return fmt.Errorf("%s: %w", r.path, err)
		}
	}
	url, hasURL := parquetColumn(schema, "url")
	hasURL = hasURL && checkColumn(url, "url", parquet.ByteArray) == nil
	var field parquet.LeafColumn
	hasField, repeated := false, Value{}
	if r.o.Field != "" {
		field, hasField = parquetColumn(schema, r.o.Field)
	}
	if hasField && field.MaxRepetitionLevel > 0 {
		// Not one value a row: its values are not read, and no row has
		// one to rank by.
		hasField, repeated = false, Value{Kind: ValueOther, Str: "a repeated column"}
	}

	var row int64
	for g, rg := range pf.RowGroups() {
		chunks := rg.ColumnChunks()
		group := parquetGroup{text: newColumnCursor(chunks[text.ColumnIndex]), fixed: repeated}
		if hasID {
			group.id = newColumnCursor(chunks[id.ColumnIndex])
		}
		if hasURL {
			group.url = newColumnCursor(chunks[url.ColumnIndex])
		}
		if hasField {
			group.field, group.value = newColumnCursor(chunks[field.ColumnIndex]), newParquetValuer(field)
		}
		err := r.readRowGroup(&group, row, rg.NumRows())
		group.close()
		var lost *rowsLost
		if errors.As(err, &lost) {
			n := row + rg.NumRows() - lost.row
			err = r.reject(Reject{
				File: r.path, Offset: lost.row, Rows: n, Skipped: groupBytes(pf, g) * n / max(rg.NumRows(), 1),
				Reason: fmt.Sprintf("corrupt parquet row group %d: %v; rows %d to %d not read", g, lost.err, lost.row, row+rg.NumRows()-1),
			})
		}
		if err != nil {
			return err
		}
		row += rg.NumRows()
	}
	return nil
}

// groupBytes is the size of row group g in the file, compressed.
func groupBytes(pf *parquet.File, g int) int64 {
	groups := pf.Metadata().RowGroups
	if g >= len(groups) {
		return 0
	}
	if n := groups[g].TotalCompressedSize; n > 0 {
		return n
	}
	return groups[g].TotalByteSize
}

// rowsLost is the error of a row group whose pages cannot be read from row
// on.
type rowsLost struct {
	row int64
	err error
}

func (e *rowsLost) Error() string { return fmt.Sprintf("row %d: %v", e.row, e.err) }

// parquetGroup holds the column cursors of one row group.
type parquetGroup struct {
	text, id, url, field *columnCursor // id, url and field are nil when absent
	value                parquetValuer // field's
	fixed                Value         // every row's value when field is nil
}

// close releases the pages of all cursors.
func (g *parquetGroup) close() {
	for _, c := range []*columnCursor{g.text, g.id, g.url, g.field} {
		if c != nil {
			c.close()
		}
	}
}

// readRowGroup reads the n rows of a row group whose first row is first.
func (r *pieceReader) readRowGroup(g *parquetGroup, first, n int64) error {
	for row := first; row < first+n; row++ {
		if err := r.tick(row); err != nil {
			return err
		}
		text, err := g.text.next()
		if err != nil {
			return &rowsLost{row: row, err: fmt.Errorf("column %q: %w", r.o.TextField, err)}
		}
		d := Doc{Offset: row, ID: r.path + ":" + strconv.FormatInt(row, 10), Value: g.fixed}
		if g.id != nil {
			v, err := g.id.next()
			if err != nil {
				return &rowsLost{row: row, err: fmt.Errorf("column %q: %w", r.o.IDField, err)}
			}
			switch {
			case v.IsNull() || v.Kind() == parquet.ByteArray && len(v.ByteArray()) == 0:
			case v.Kind() == parquet.ByteArray:
				d.ID = string(v.ByteArray())
			case v.Kind() == parquet.Int32:
				d.ID = strconv.FormatInt(int64(v.Int32()), 10)
			default:
				d.ID = strconv.FormatInt(v.Int64(), 10)
			}
		}
		if g.url != nil {
			v, err := g.url.next()
			if err != nil {
				return &rowsLost{row: row, err: fmt.Errorf("column %q: %w", "url", err)}
			}
			if !v.IsNull() {
				d.URL = string(v.ByteArray())
			}
		}
		if g.field != nil {
			v, err := g.field.next()
			if err != nil {
				return &rowsLost{row: row, err: fmt.Errorf("column %q: %w", r.o.Field, err)}
			}
			d.Value = g.value(v)
		}
		if text.IsNull() {
			err = r.rejectf(row, 0, "null text in column %q", r.o.TextField)
		} else {
			d.Text = text.ByteArray()
			err = r.doc(d)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// columnCursor walks the values of one column chunk, one per row. The
// value it returns stays valid until the next call.
type columnCursor struct {
	pages  parquet.Pages
	page   parquet.Page // the page values come from; released when done
	values parquet.ValueReader
	buf    []parquet.Value
	batch  []parquet.Value // the unread values of buf
}

func newColumnCursor(c parquet.ColumnChunk) *columnCursor {
	return &columnCursor{pages: c.Pages(), buf: make([]parquet.Value, parquetBatch)}
}

// next returns the value of the next row.
func (c *columnCursor) next() (parquet.Value, error) {
	for len(c.batch) == 0 {
		if c.values != nil {
			n, err := c.values.ReadValues(c.buf)
			c.batch = c.buf[:n]
			switch {
			case err == io.EOF:
				c.values = nil
			case err != nil:
				return parquet.Value{}, err
			}
			continue
		}
		c.release()
		page, err := c.pages.ReadPage()
		if err == io.EOF {
			return parquet.Value{}, errors.New("fewer values than rows")
		}
		if err != nil {
			return parquet.Value{}, err
		}
		c.page, c.values = page, page.Values()
	}
	v := c.batch[0]
	c.batch = c.batch[1:]
	return v, nil
}

// release gives the current page back to the reader's buffer pool.
func (c *columnCursor) release() {
	if c.page != nil {
		parquet.Release(c.page)
		c.page = nil
	}
}

// close releases the cursor's page and pages reader.
func (c *columnCursor) close() {
	c.release()
	c.pages.Close()
}

// checkParquetFooter checks that the footer length a parquet file ends with
// fits in the file, which parquet.OpenFile trusts for an allocation.
func checkParquetFooter(f io.ReaderAt, size int64) error {
	var tail [8]byte
	if size < 12 {
		return fmt.Errorf("file of %d bytes is too short", size)
	}
	if _, err := f.ReadAt(tail[:], size-8); err != nil {
		return err
	}
	if n := int64(binary.LittleEndian.Uint32(tail[:4])); n > size-12 {
		return fmt.Errorf("footer length %d exceeds the file size %d", n, size)
	}
	return nil
}

// parquetColumn looks up a top-level leaf column by name.
func parquetColumn(schema *parquet.Schema, name string) (parquet.LeafColumn, bool) {
	return schema.Lookup(name)
}

// checkColumn checks that a column holds one value per row of one of the
// kinds.
func checkColumn(col parquet.LeafColumn, name string, kinds ...parquet.Kind) error {
	if col.MaxRepetitionLevel > 0 {
		return fmt.Errorf("column %q is repeated; want one value per row", name)
	}
	k := col.Node.Type().Kind()
	for _, want := range kinds {
		if k == want {
			return nil
		}
	}
	return fmt.Errorf("column %q has type %s; want %v", name, k, kinds)
}

// columnNames lists the leaf columns of a schema for messages.
func columnNames(schema *parquet.Schema) string {
	var names []string
	for _, path := range schema.Columns() {
		names = append(names, strings.Join(path, "."))
	}
	return strings.Join(names, ", ")
}
