package pqfile

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/neardup/neardup/internal/buildinfo"
	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/storage"
)

type row struct {
	A int64  `parquet:"a"`
	S string `parquet:"s"`
}

func TestWriteReadCheck(t *testing.T) {
	ctx := context.Background()
	d, err := storage.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rows := []row{{1, "x"}, {2, "y"}, {3, "z"}}
	info, err := Write(ctx, d, "t/rows.parquet", rows, Sorted("a"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Rows != 3 || info.Bytes == 0 {
		t.Fatalf("info = %+v", info)
	}
	got, err := Read[row](ctx, d, info.Name, &info)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[2] != rows[2] {
		t.Fatalf("got %v", got)
	}

	tests := []struct {
		name   string
		damage func(path string) error
		info   fileinfo.Info
	}{
		{"truncated", func(p string) error { return os.Truncate(p, info.Bytes-10) }, info},
		{"flipped byte", func(p string) error {
			b, _ := os.ReadFile(p)
			b[len(b)/2] ^= 0xff
			return os.WriteFile(p, b, 0o644)
		}, info},
		{"wrong row count", func(string) error { return nil }, fileinfo.Info{Name: info.Name, Rows: 4, Checksum: info.Checksum, Bytes: info.Bytes}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Write(ctx, d, info.Name, rows, Sorted("a")); err != nil {
				t.Fatal(err)
			}
			if err := tt.damage(d.Path(info.Name)); err != nil {
				t.Fatal(err)
			}
			if _, err := Read[row](ctx, d, info.Name, &tt.info); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Read of a damaged file: err = %v, want ErrCorrupt", err)
			}
		})
	}
}

// TestWriterPiecesIdentical checks that a file written a few rows at a
// time is byte-identical to the same rows written at once, and to
// parquet-go given each row group in one call (how Write wrote before
// Writer existed), across row-group boundaries.
func TestWriterPiecesIdentical(t *testing.T) {
	ctx := context.Background()
	d, err := storage.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 1, 63, 64, 65, writeBatch - 1, writeBatch + 1, 3*writeBatch + 17, maxRowsPerGroup + 4099} {
		rows := make([]row, n)
		rng := rand.New(rand.NewPCG(uint64(n), 1))
		for i := range rows {
			rows[i] = row{A: int64(i), S: strings.Repeat("x", rng.IntN(40))}
		}
		var want bytes.Buffer
		pw := parquet.NewGenericWriter[row](&want, parquet.Compression(&fastZstd), parquet.MaxRowsPerRowGroup(maxRowsPerGroup),
			&parquet.WriterConfig{CreatedBy: buildinfo.Read().CreatedBy()}, parquet.SortingWriterConfig(parquet.SortingColumns(parquet.Ascending("a"))))
		for start := 0; start < n; start += maxRowsPerGroup {
			if _, err := pw.Write(rows[start:min(start+maxRowsPerGroup, n)]); err != nil {
				t.Fatal(err)
			}
		}
		if err := pw.Close(); err != nil {
			t.Fatal(err)
		}
		whole, err := Write(ctx, d, "whole.parquet", rows, Sorted("a"))
		if err != nil {
			t.Fatal(err)
		}
		w, err := NewWriter[row](ctx, d, "pieces.parquet", Sorted("a"))
		if err != nil {
			t.Fatal(err)
		}
		for rest := rows; len(rest) > 0; {
			k := min(len(rest), 1+rng.IntN(3*writeBatch))
			if err := w.Write(rest[:k]); err != nil {
				t.Fatal(err)
			}
			rest = rest[k:]
		}
		pieces, err := w.Close()
		if err != nil {
			t.Fatal(err)
		}
		a, _ := os.ReadFile(d.Path(whole.Name))
		b, _ := os.ReadFile(d.Path(pieces.Name))
		if !bytes.Equal(a, want.Bytes()) || !bytes.Equal(b, want.Bytes()) || whole != (fileinfo.Info{Name: whole.Name, Rows: int64(n), Checksum: pieces.Checksum, Bytes: pieces.Bytes}) {
			t.Errorf("%d rows: Write %d bytes, Writer in pieces %d bytes, parquet-go %d bytes: not identical (%+v, %+v)", n, len(a), len(b), want.Len(), whole, pieces)
		}
	}
}

// TestCreatedBy checks that a file's created_by metadata names the
// binary's build, in the form Parquet readers parse, not an empty version.
func TestCreatedBy(t *testing.T) {
	ctx := context.Background()
	d, err := storage.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Write(ctx, d, "f.parquet", []row{{A: 1, S: "x"}}, Options{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(d.Path("f.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	got, want := f.Metadata().CreatedBy, buildinfo.Read().CreatedBy()
	if got != want || !strings.HasPrefix(got, "neardup version ") || strings.Contains(got, "(build )") {
		t.Errorf("created_by = %q, want %q", got, want)
	}
}

// TestDict writes files with columns named in Options.Dict: those
// columns, and only those, are dictionary-encoded, keep the rest of their
// tags (optional), and read back as written; a name that is no column
// fails before any file is made.
func TestDict(t *testing.T) {
	type dictRow struct {
		A int64   `parquet:"a"`
		S string  `parquet:"s"`
		T *string `parquet:"t,optional"`
		U string  `parquet:"u"`
	}
	ctx := context.Background()
	d, err := storage.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]dictRow, 1000)
	for i := range rows {
		rows[i] = dictRow{A: int64(i), S: fmt.Sprint("s", i%7), U: fmt.Sprint("u", i%5)}
		if i%3 == 0 {
			rows[i].T = new(fmt.Sprint("t", i%2))
		}
	}
	for _, tt := range []struct {
		dict []string
		want map[string]bool // dictionary-encoded, by column
		err  bool
	}{
		{nil, map[string]bool{"a": false, "s": false, "t": false, "u": false}, false},
		{[]string{"s", "t"}, map[string]bool{"a": false, "s": true, "t": true, "u": false}, false},
		{[]string{"S"}, nil, true},
	} {
		name := fmt.Sprintf("dict-%s.parquet", strings.Join(tt.dict, "-"))
		_, err := Write(ctx, d, name, rows, Options{Dict: tt.dict})
		if tt.err {
			if _, serr := os.Stat(d.Path(name)); err == nil || !os.IsNotExist(serr) {
				t.Errorf("Dict %q: err %v, file %v; want an error and no file", tt.dict, err, serr)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := Read[dictRow](ctx, d, name, nil)
		if err != nil || len(got) != len(rows) {
			t.Fatalf("Dict %q: %d rows, %v", tt.dict, len(got), err)
		}
		for i := range rows {
			if got[i].A != rows[i].A || got[i].S != rows[i].S || got[i].U != rows[i].U || (got[i].T == nil) != (rows[i].T == nil) || got[i].T != nil && *got[i].T != *rows[i].T {
				t.Fatalf("Dict %q: row %d = %+v, want %+v", tt.dict, i, got[i], rows[i])
			}
		}
		b, _ := os.ReadFile(d.Path(name))
		f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		if c, ok := f.Schema().Lookup("t"); !ok || !c.Node.Optional() {
			t.Errorf("Dict %q: column t is no longer optional", tt.dict)
		}
		for _, c := range f.Metadata().RowGroups[0].Columns {
			col := c.MetaData.PathInSchema[0]
			if got := slices.Contains(c.MetaData.Encoding, format.RLEDictionary); got != tt.want[col] {
				t.Errorf("Dict %q: column %s dictionary-encoded %v, want %v (%v)", tt.dict, col, got, tt.want[col], c.MetaData.Encoding)
			}
		}
	}
}

// TestParquetPanic reads a file on which parquet-go panics (its page
// index out of range; found by workfile's FuzzLegacyVerified), described
// as if its writer had written it so that it passes the checks: it fails
// as corrupt, with and without a description.
func TestParquetPanic(t *testing.T) {
	ctx := context.Background()
	data, err := os.ReadFile("testdata/page-index-panic.parquet")
	if err != nil {
		t.Fatal(err)
	}
	d, err := storage.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := storage.WriteFile(ctx, d, "p.parquet", data); err != nil {
		t.Fatal(err)
	}
	type pair struct {
		A int64 `parquet:"a"`
		B int64 `parquet:"b"`
	}
	info := &fileinfo.Info{Name: "p.parquet", Rows: 95, Bytes: int64(len(data)), Checksum: xxhash.Sum64(data)}
	for _, want := range []*fileinfo.Info{info, nil} {
		if _, err := Read[pair](ctx, d, "p.parquet", want); !errors.Is(err, ErrCorrupt) {
			t.Errorf("described %v: got %v, want ErrCorrupt", want != nil, err)
		}
	}
}

// TestParquetFooterClaim reads a file of a few bytes whose last 8 claim a
// footer of 4 GiB, described as if its writer had written it: it fails
// as corrupt without allocating for the footer (parquet-go would; found
// by workfile's FuzzLegacyVerified, whose worker it took out of memory).
func TestParquetFooterClaim(t *testing.T) {
	ctx := context.Background()
	data := binary.LittleEndian.AppendUint32([]byte("PAR1 a few bytes "), 0xfffffff0)
	data = append(data, "PAR1"...)
	d, err := storage.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := storage.WriteFile(ctx, d, "f.parquet", data); err != nil {
		t.Fatal(err)
	}
	info := &fileinfo.Info{Name: "f.parquet", Rows: 1, Bytes: int64(len(data)), Checksum: xxhash.Sum64(data)}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = Read[row](ctx, d, "f.parquet", info)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("got %v, want ErrCorrupt", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("reading a file of %d bytes allocated %d bytes", len(data), n)
	}
}

// TestFormerNames reads files of an earlier build, whose columns had the
// names a `formerly` tag records, into the renamed fields, and files with
// the new names as before; a column the file has under neither name reads
// as zero, as any column a file lacks.
func TestFormerNames(t *testing.T) {
	type before struct {
		Doc    int64  `parquet:"doc"`
		Offset int64  `parquet:"offset"`
		Group  *int64 `parquet:"group,optional"`
	}
	type after struct {
		Doc    int64  `parquet:"doc"`
		Offset int64  `parquet:"byte_offset" formerly:"offset"`
		Group  *int64 `parquet:"group_doc,optional" formerly:"group"`
		Gone   int64  `parquet:"gone" formerly:"never"`
	}
	ctx := context.Background()
	d, err := storage.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	g := int64(7)
	if _, err := Write(ctx, d, "before.parquet", []before{{1, 100, &g}, {2, 200, nil}}, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(ctx, d, "after.parquet", []after{{1, 100, &g, 5}, {2, 200, nil, 6}}, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		file string
		want []after
	}{
		{"before.parquet", []after{{1, 100, &g, 0}, {2, 200, nil, 0}}},
		{"after.parquet", []after{{1, 100, &g, 5}, {2, 200, nil, 6}}},
	} {
		got, err := Read[after](ctx, d, tt.file, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(tt.want) {
			t.Fatalf("%s: %d rows, want %d", tt.file, len(got), len(tt.want))
		}
		for i := range got {
			w := tt.want[i]
			if got[i].Doc != w.Doc || got[i].Offset != w.Offset || got[i].Gone != w.Gone || (got[i].Group == nil) != (w.Group == nil) || got[i].Group != nil && *got[i].Group != *w.Group {
				t.Errorf("%s: row %d = %+v, want %+v", tt.file, i, got[i], w)
			}
		}
	}
}

// TestSeekSorted seeks a file of rows sorted by a, in row groups of 256
// rows, to values below, inside, between and past its rows: the next Read
// starts at or before the first row at least v, within a page of it, and
// reading on finds every such row.
func TestSeekSorted(t *testing.T) {
	ctx := context.Background()
	d, rows, info := sortedFile(t, func(i int) string { return strings.Repeat("x", i%50) })
	for _, tt := range []struct {
		v        int64
		maxSkip  int // rows of v's row group before it that the seek may leave
		wantFrom int // index of the first row at least v
	}{
		{-5, 0, 0},
		{0, 0, 0},
		{1, 1, 1},
		{3 * 700, 256, 700},
		{3*700 + 1, 256, 701},
		{3 * 1999, 256, 1999},
		{3*1999 + 1, 0, 2000},
	} {
		r, err := Open[row](ctx, d, info.Name, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.SeekSorted("a", tt.v); err != nil {
			t.Fatal(err)
		}
		var got []row
		buf := make([]row, 100)
		for {
			n, err := r.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				break
			}
		}
		r.Close()
		skipped := len(rows) - len(got)
		if skipped > tt.wantFrom || tt.wantFrom-skipped > tt.maxSkip || !slices.Equal(got, rows[skipped:]) {
			t.Errorf("SeekSorted(%d): read from row %d (%d rows), want from row %d or at most %d before it", tt.v, skipped, len(got), tt.wantFrom, tt.maxSkip)
		}
	}
	r, err := Open[row](ctx, d, info.Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.SeekSorted("b", 0); err == nil || !strings.Contains(err.Error(), "s.parquet") {
		t.Errorf("SeekSorted on no such column: err %v, want one naming the file", err)
	}
}

// sortedFile writes s.parquet: 2,000 rows with a = 0, 3, 6, ... and s
// of row i s(i), sorted by a, in row groups of 256 rows.
func sortedFile(t *testing.T, s func(i int) string) (*storage.Dir, []row, fileinfo.Info) {
	t.Helper()
	d, err := storage.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var rows []row
	for i := range 2000 {
		rows = append(rows, row{A: int64(3 * i), S: s(i)})
	}
	info, err := Write(context.Background(), d, "s.parquet", rows, Options{SortedBy: []string{"a"}, RowGroupRows: 256})
	if err != nil {
		t.Fatal(err)
	}
	return d, rows, info
}

// TestReadSorted finds rows by keys present, absent, repeated and past
// the last row, across row groups.
func TestReadSorted(t *testing.T) {
	ctx := context.Background()
	d, _, info := sortedFile(t, func(i int) string { return fmt.Sprint(i) })
	for _, tt := range []struct {
		keys []int64
		want []string // the s of the rows found, in order
	}{
		{nil, nil},
		{[]int64{0}, []string{"0"}},
		{[]int64{-3, 1, 2, 6000}, nil}, // none there
		{[]int64{3, 4, 768, 2100, 5997}, []string{"1", "256", "700", "1999"}}, // across row groups, to the last row
		{[]int64{3, 3}, []string{"1", "1"}},                                   // a key asked twice is found twice
	} {
		var got []string
		err := ReadSorted(ctx, d, info.Name, "a", tt.keys, func(r *row) int64 { return r.A }, func(r row) { got = append(got, r.S) })
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ReadSorted(%v) = %v, %v; want %v", tt.keys, got, err, tt.want)
		}
	}
	if err := ReadSorted(ctx, d, info.Name, "b", []int64{0}, func(r *row) int64 { return r.A }, func(row) {}); err == nil || !strings.Contains(err.Error(), "s.parquet") {
		t.Errorf("ReadSorted on no such column: err %v, want one naming the file", err)
	}
}
