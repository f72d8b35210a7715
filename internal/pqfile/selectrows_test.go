package pqfile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/storage"
)

// selRow is a row for TestSelect: a key, strings (one dictionary-encoded),
// a number and optional values.
type selRow struct {
	Doc    int64    `parquet:"doc"`
	ID     string   `parquet:"id"`
	Host   string   `parquet:"host"`
	Tokens int32    `parquet:"tokens"`
	Num    *float64 `parquet:"num,optional"`
	Str    *string  `parquet:"str,optional"`
}

// TestSelect reads the rows a predicate keeps, in row groups of several
// sizes, columns of several pages, plain and dictionary-encoded: each kept row, and only
// those, with its values as Read gives them, nulls included; a file
// without a column is not read (ok false); a damaged one fails as
// corrupt.
func TestSelect(t *testing.T) {
	ctx := context.Background()
	d, err := storage.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]selRow, 5000)
	for i := range rows {
		rows[i] = selRow{Doc: int64(i)<<32 | int64(i*7), ID: fmt.Sprint("doc-", i, "-", strings.Repeat("x", i%200)), Host: fmt.Sprint("h", i%13), Tokens: int32(i % 1000)}
		if i%3 == 0 {
			rows[i].Num = new(float64(i) / 4)
		}
		if i%5 != 0 {
			rows[i].Str = new(fmt.Sprint("s", i))
		}
	}
	cols := []string{"id", "host", "tokens", "num", "str"}
	for _, tt := range []struct {
		name string
		o    Options
		keep func(i int) bool
	}{
		{"one group, every third", Options{}, func(i int) bool { return i%3 == 1 }},
		{"groups of 704, dictionary, a few", Options{RowGroupRows: 704, Dict: []string{"host"}}, func(i int) bool { return i%997 == 5 }},
		{"groups of 64, none in most", Options{RowGroupRows: 64}, func(i int) bool { return i >= 4000 && i < 4003 }},
		{"every row", Options{RowGroupRows: 1024}, func(int) bool { return true }},
		{"no row", Options{}, func(int) bool { return false }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			info, err := Write(ctx, d, "sel.parquet", rows, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			if err := manyPages(d.Path(info.Name), tt.o.RowGroupRows); err != nil {
				t.Fatal(err)
			}
			kept := map[int64]int{}
			for i, r := range rows {
				if tt.keep(i) {
					kept[r.Doc] = i
				}
			}
			var got []selRow
			ok, err := Select(ctx, d, info.Name, &info, "doc", func(doc int64) bool { _, ok := kept[doc]; return ok }, cols,
				func(doc int64, v []parquet.Value) error {
					r := selRow{Doc: doc, ID: string(v[0].ByteArray()), Host: string(v[1].ByteArray()), Tokens: v[2].Int32()}
					if !v[3].IsNull() {
						r.Num = new(v[3].Double())
					}
					if !v[4].IsNull() {
						r.Str = new(string(v[4].ByteArray()))
					}
					got = append(got, r)
					return nil
				})
			if !ok || err != nil {
				t.Fatalf("Select: ok %v, %v", ok, err)
			}
			if len(got) != len(kept) {
				t.Fatalf("%d rows, want %d", len(got), len(kept))
			}
			last := -1
			for _, g := range got {
				i, ok := kept[g.Doc]
				if !ok || i <= last {
					t.Fatalf("row of doc %d not kept, or out of order", g.Doc)
				}
				last = i
				w := rows[i]
				if g.ID != w.ID || g.Host != w.Host || g.Tokens != w.Tokens || (g.Num == nil) != (w.Num == nil) || g.Num != nil && *g.Num != *w.Num ||
					(g.Str == nil) != (w.Str == nil) || g.Str != nil && *g.Str != *w.Str {
					t.Fatalf("row %d: %+v, want %+v", i, g, w)
				}
			}
		})
	}

	info, err := Write(ctx, d, "sel.parquet", rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := Select(ctx, d, info.Name, &info, "doc", func(int64) bool { return true }, []string{"id", "url"}, nil); ok || err != nil {
		t.Fatalf("a missing column: ok %v, %v; want not ok, no error", ok, err)
	}
	if ok, err := Select(ctx, d, info.Name, &info, "id", func(int64) bool { return true }, nil, nil); ok || err != nil {
		t.Fatalf("a key column of strings: ok %v, %v; want not ok, no error", ok, err)
	}
	b, err := os.ReadFile(d.Path(info.Name))
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/3] ^= 0x55
	if err := os.WriteFile(d.Path(info.Name), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Select(ctx, d, info.Name, &info, "doc", func(int64) bool { return true }, cols, func(int64, []parquet.Value) error { return nil }); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a damaged file: %v, want ErrCorrupt", err)
	}
}

// manyPages checks that the id column of the file's first row group has
// several pages (a file of one row group): what makes a
// reader's count of rows cross pages.
func manyPages(path string, groupRows int) error {
	if groupRows != 0 {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return err
	}
	leaf, _ := pf.Schema().Lookup("id")
	pages := pf.RowGroups()[0].ColumnChunks()[leaf.ColumnIndex].Pages()
	defer pages.Close()
	n := 0
	for {
		p, err := pages.ReadPage()
		if err != nil {
			break
		}
		parquet.Release(p)
		n++
	}
	if n < 2 {
		return fmt.Errorf("the id column has %d page, want several", n)
	}
	return nil
}
