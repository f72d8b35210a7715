package stage

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
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

// BandTable holds the band, key and doc columns of a band file's rows,
// in file order: sorted by (band, key, doc).
type BandTable struct {
	Bands []int32
	Keys  []int64
	Docs  []int64
}

// Bytes is the memory the table's columns hold.
func (t *BandTable) Bytes() int64 {
	return int64(cap(t.Bands))*4 + int64(cap(t.Keys)+cap(t.Docs))*8
}

// ReadBandTable reads a whole band file, checked against what its writer
// recorded as every reader of band files does, and keeps its band, key
// and doc columns.
func ReadBandTable(ctx context.Context, st storage.Opener, info pqfile.Info) (*BandTable, error) {
	recs, err := readBandFile(ctx, st, info)
	if err != nil {
		return nil, err
	}
	t := &BandTable{Bands: make([]int32, len(recs)), Keys: make([]int64, len(recs)), Docs: make([]int64, len(recs))}
	for i, r := range recs {
		t.Bands[i], t.Keys[i], t.Docs[i] = r.Band, r.Key, r.Doc
	}
	return t, nil
}

// Lookup calls hit with the tag of each key of want (sorted by
// CompareBandKeys) and the document of each row under it.
func (t *BandTable) Lookup(want []BandKey, hit func(tag int32, doc int64)) {
	t.match(want, func(row int, tag int32) { hit(tag, t.Docs[row]) })
}

// match calls fn with every row under a key of want and the key's tag, by
// binary search: a batch of one document looks up a few keys in
// thousands of rows.
func (t *BandTable) match(want []BandKey, fn func(row int, tag int32)) {
	lo := 0 // want is sorted: each key's rows start at or after the last's
	for _, w := range want {
		at := func(r int) int {
			return CompareBandKeys(BandKey{Band: t.Bands[r], Key: t.Keys[r]}, w)
		}
		lo += sort.Search(len(t.Keys)-lo, func(i int) bool { return at(lo+i) >= 0 })
		for r := lo; r < len(t.Keys) && at(r) == 0; r++ {
			fn(r, w.Tag)
		}
	}
}

// LookupBands finds, in the band file info, the records under the keys of
// want (sorted by CompareBandKeys) and calls hit with the asking key's
// tag and the record's document, once per key and record, without
// holding the file: it reads the footer and the band and key columns,
// and the doc column only if some key is there (a file is sorted by
// (band, key, doc) in one page per column, so that is the least it can
// read). It returns the bytes read.
//
// Unlike ReadBandTable it cannot check the whole file's checksum (it does
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
		t       BandTable // of the row group
		matches []match
	)
	for _, rg := range pf.RowGroups() {
		n := int(rg.NumRows())
		t.Bands, t.Keys = slices.Grow(t.Bands[:0], n)[:n], slices.Grow(t.Keys[:0], n)[:n]
		if err := column(rg, "band", n, func(i int, v int64) { t.Bands[i] = int32(v) }); err != nil {
			return cr.n.Load(), err
		}
		if err := column(rg, "key", n, func(i int, v int64) { t.Keys[i] = v }); err != nil {
			return cr.n.Load(), err
		}
		matches = matches[:0]
		t.match(want, func(row int, tag int32) { matches = append(matches, match{row: row, tag: tag}) })
		if len(matches) == 0 {
			continue
		}
		t.Docs = slices.Grow(t.Docs[:0], n)[:n]
		if err := column(rg, "doc", n, func(i int, v int64) { t.Docs[i] = v }); err != nil {
			return cr.n.Load(), err
		}
		for _, m := range matches {
			hit(m.tag, t.Docs[m.row])
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
