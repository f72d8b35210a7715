package index

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"sync/atomic"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
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
func ReadBandTable(ctx context.Context, st storage.Opener, info fileinfo.Info) (*BandTable, error) {
	recs, err := ReadBandFile(ctx, st, info)
	if err != nil {
		return nil, err
	}
	return bandTable(recs), nil
}

// bandTable keeps the band, key and doc columns of records.
func bandTable(recs []records.BandRecord) *BandTable {
	t := &BandTable{Bands: make([]int32, len(recs)), Keys: make([]int64, len(recs)), Docs: make([]int64, len(recs))}
	for i, r := range recs {
		t.Bands[i], t.Keys[i], t.Docs[i] = r.Band, r.Key, r.Doc
	}
	return t
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
// read). It returns the bytes read. With part >= 0 the file is a bands/
// file of several partitions (BandFile) and only the row groups of
// partition part are read.
//
// Unlike ReadBandTable it cannot check the whole file's checksum (it does
// not read the whole file): it checks the size and the row count.
func LookupBands(ctx context.Context, st storage.Opener, info fileinfo.Info, part int, want []BandKey, hit func(tag int32, doc int64)) (int64, error) {
	bf, err := openBandParquet(ctx, st, info)
	if err != nil {
		return 0, err
	}
	defer bf.close()
	groups, err := bf.rowGroups(part)
	if err != nil {
		return bf.cr.n.Load(), err
	}
	type match struct {
		row int
		tag int32
	}
	var (
		t       BandTable // of the row group
		matches []match
	)
	for _, rg := range groups {
		n := int(rg.NumRows())
		t.Bands, t.Keys = slices.Grow(t.Bands[:0], n)[:n], slices.Grow(t.Keys[:0], n)[:n]
		if err := bf.column(rg, "band", n, func(i int, v int64) { t.Bands[i] = int32(v) }); err != nil {
			return bf.cr.n.Load(), err
		}
		if err := bf.column(rg, "key", n, func(i int, v int64) { t.Keys[i] = v }); err != nil {
			return bf.cr.n.Load(), err
		}
		matches = matches[:0]
		t.match(want, func(row int, tag int32) { matches = append(matches, match{row: row, tag: tag}) })
		if len(matches) == 0 {
			continue
		}
		t.Docs = slices.Grow(t.Docs[:0], n)[:n]
		if err := bf.column(rg, "doc", n, func(i int, v int64) { t.Docs[i] = v }); err != nil {
			return bf.cr.n.Load(), err
		}
		for _, m := range matches {
			hit(m.tag, t.Docs[m.row])
		}
	}
	return bf.cr.n.Load(), nil
}

// ReadBandPart reads the records of partition part from a bands/ file of
// several partitions (BandFile): its row groups of the partition
// alone, checked as LookupBands checks. The fingerprint is the file's 64
// bits (FPHi; FPLo is 0).
func ReadBandPart(ctx context.Context, st storage.Opener, info fileinfo.Info, part int) ([]records.BandRecord, error) {
	return readPart(ctx, st, info, part, func(rows []records.BandRecord) []bandColumn { return bandColumns(rows, true) })
}

// readPart reads the rows of partition part from a file of several
// partitions, a row group (or more) each (a bands/ file, or a unit
// table's): its row groups of the partition alone, checked as
// LookupBands checks, their columns set into the rows by cols.
func readPart[T any](ctx context.Context, st storage.Opener, info fileinfo.Info, part int, cols func(rows []T) []bandColumn) ([]T, error) {
	bf, err := openBandParquet(ctx, st, info)
	if err != nil {
		return nil, err
	}
	defer bf.close()
	groups, err := bf.rowGroups(part)
	if err != nil {
		return nil, err
	}
	var recs []T
	for _, rg := range groups {
		base := len(recs)
		n := int(rg.NumRows())
		recs = slices.Grow(recs, n)[:base+n]
		for _, c := range cols(recs[base:]) {
			if err := bf.column(rg, c.name, n, c.set); err != nil {
				return nil, err
			}
		}
	}
	return recs, nil
}

// ReadBandPartTable is ReadBandPart as a BandTable.
func ReadBandPartTable(ctx context.Context, st storage.Opener, info fileinfo.Info, part int) (*BandTable, error) {
	recs, err := ReadBandPart(ctx, st, info, part)
	if err != nil {
		return nil, err
	}
	return bandTable(recs), nil
}

// bandParquet is an open band file.
type bandParquet struct {
	name string
	f    storage.File
	cr   *countingReaderAt
	pf   *parquet.File
}

// openBandParquet opens a band file, checking its size and row count
// against what its writer recorded, and reads its footer.
func openBandParquet(ctx context.Context, st storage.Opener, info fileinfo.Info) (*bandParquet, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := st.Open(ctx, info.Name)
	if err != nil {
		return nil, err
	}
	if f.Size() != info.Bytes {
		f.Close()
		return nil, fmt.Errorf("%s has %d bytes, its writer wrote %d: %w", info.Name, f.Size(), info.Bytes, pqfile.ErrCorrupt)
	}
	cr := &countingReaderAt{r: f}
	pf, err := parquet.OpenFile(cr, f.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", info.Name, err)
	}
	if pf.NumRows() != info.Rows {
		f.Close()
		return nil, fmt.Errorf("%s: %d rows, want %d: %w", info.Name, pf.NumRows(), info.Rows, pqfile.ErrCorrupt)
	}
	return &bandParquet{name: info.Name, f: f, cr: cr, pf: pf}, nil
}

func (b *bandParquet) close() { b.f.Close() }

// rowGroups returns the row groups of partition part (by the statistics
// of the part column, one partition a row group), or all of them when
// part < 0.
func (b *bandParquet) rowGroups(part int) ([]parquet.RowGroup, error) {
	if part < 0 {
		return b.pf.RowGroups(), nil
	}
	leaf, ok := b.pf.Schema().Lookup("part")
	if !ok {
		return nil, fmt.Errorf("%s: no column \"part\": %w", b.name, pqfile.ErrCorrupt)
	}
	var out []parquet.RowGroup
	for i, rg := range b.pf.RowGroups() {
		cc, ok := rg.ColumnChunks()[leaf.ColumnIndex].(*parquet.FileColumnChunk)
		if !ok {
			return nil, fmt.Errorf("%s: row group %d: no statistics of column part: %w", b.name, i, pqfile.ErrCorrupt)
		}
		lo, hi, ok := cc.Bounds()
		if !ok && rg.NumRows() > 0 {
			return nil, fmt.Errorf("%s: row group %d: no statistics of column part: %w", b.name, i, pqfile.ErrCorrupt)
		}
		if !ok || int(hi.Int32()) < part || int(lo.Int32()) > part {
			continue
		}
		if lo.Int32() != hi.Int32() {
			return nil, fmt.Errorf("%s: row group %d holds partitions %d to %d, not one: %w", b.name, i, lo.Int32(), hi.Int32(), pqfile.ErrCorrupt)
		}
		out = append(out, rg)
	}
	return out, nil
}

// column passes the n values of a column of a row group to set.
func (b *bandParquet) column(rg parquet.RowGroup, name string, n int, set func(i int, v int64)) error {
	leaf, ok := b.pf.Schema().Lookup(name)
	if !ok {
		return fmt.Errorf("%s: no column %q: %w", b.name, name, pqfile.ErrCorrupt)
	}
	got, err := readIntColumn(rg.ColumnChunks()[leaf.ColumnIndex], n, set)
	if err != nil {
		return fmt.Errorf("%s: column %s: %w", b.name, name, err)
	}
	if got != n {
		return fmt.Errorf("%s: column %s has %d values, want %d: %w", b.name, name, got, n, pqfile.ErrCorrupt)
	}
	return nil
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
