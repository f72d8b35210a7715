package stage

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
)

// BandKey is a band key to look up in a band file; Tag is the caller's
// (which document asked).
type BandKey struct {
	Band int32
	Key  int64
	Tag  int32
}

// CompareBandKeys orders band keys as band files are sorted: by band, then
// key.
func CompareBandKeys(a, b BandKey) int {
	if c := cmp.Compare(a.Band, b.Band); c != 0 {
		return c
	}
	return cmp.Compare(a.Key, b.Key)
}

// LookupBands finds, in the band file info, the records under the keys of
// want (sorted by CompareBandKeys) and calls hit with the asking key's
// tag and the record's document, once per key and record. It reads the
// file's footer and its band and key columns, and its doc column only if
// some key is there: a file is sorted by (band, key, doc) in one page per
// column, so that is the least it can read. It returns the bytes read.
//
// Unlike readBandFile it cannot check the whole file's checksum (it does
// not read the whole file): it checks the size and the row count.
func LookupBands(ctx context.Context, st storage.Opener, info pqfile.Info, want []BandKey, hit func(tag int32, doc int64)) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	f, err := st.Open(ctx, info.Name)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if f.Size() != info.Bytes {
		return 0, fmt.Errorf("%s has %d bytes, its writer wrote %d: %w", info.Name, f.Size(), info.Bytes, pqfile.ErrCorrupt)
	}
	cr := &countingReaderAt{r: f}
	pf, err := parquet.OpenFile(cr, f.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return cr.n.Load(), fmt.Errorf("%s: %w", info.Name, err)
	}
	if pf.NumRows() != info.Rows {
		return cr.n.Load(), fmt.Errorf("%s: %d rows, want %d: %w", info.Name, pf.NumRows(), info.Rows, pqfile.ErrCorrupt)
	}
	column := func(rg parquet.RowGroup, name string, n int, set func(i int, v int64)) error {
		leaf, ok := pf.Schema().Lookup(name)
		if !ok {
			return fmt.Errorf("%s: no column %q: %w", info.Name, name, pqfile.ErrCorrupt)
		}
		got, err := readIntColumn(rg.ColumnChunks()[leaf.ColumnIndex], n, set)
		if err != nil {
			return fmt.Errorf("%s: column %s: %w", info.Name, name, err)
		}
		if got != n {
			return fmt.Errorf("%s: column %s has %d values, want %d: %w", info.Name, name, got, n, pqfile.ErrCorrupt)
		}
		return nil
	}
	type match struct {
		row int
		tag int32
	}
	var (
		rows    []BandKey
		matches []match
		docs    []int64
	)
	for _, rg := range pf.RowGroups() {
		n := int(rg.NumRows())
		rows = append(rows[:0], make([]BandKey, n)...)
		if err := column(rg, "band", n, func(i int, v int64) { rows[i].Band = int32(v) }); err != nil {
			return cr.n.Load(), err
		}
		if err := column(rg, "key", n, func(i int, v int64) { rows[i].Key = v }); err != nil {
			return cr.n.Load(), err
		}
		// Both sorted: a merge of the wanted keys with the rows.
		matches = matches[:0]
		for i, j := 0, 0; i < len(want) && j < len(rows); {
			switch c := CompareBandKeys(want[i], rows[j]); {
			case c < 0:
				i++
			case c > 0:
				j++
			default:
				// Every row of the key, for every wanted copy of it.
				for k := j; k < len(rows) && CompareBandKeys(want[i], rows[k]) == 0; k++ {
					matches = append(matches, match{row: k, tag: want[i].Tag})
				}
				i++
			}
		}
		if len(matches) == 0 {
			continue
		}
		docs = append(docs[:0], make([]int64, n)...)
		if err := column(rg, "doc", n, func(i int, v int64) { docs[i] = v }); err != nil {
			return cr.n.Load(), err
		}
		for _, m := range matches {
			hit(m.tag, docs[m.row])
		}
	}
	return cr.n.Load(), nil
}

// countingReaderAt counts the bytes read through it.
type countingReaderAt struct {
	r io.ReaderAt
	n atomic.Int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}
