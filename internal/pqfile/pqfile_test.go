package pqfile

import (
	"bytes"
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

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
		info   Info
	}{
		{"truncated", func(p string) error { return os.Truncate(p, info.Bytes-10) }, info},
		{"flipped byte", func(p string) error {
			b, _ := os.ReadFile(p)
			b[len(b)/2] ^= 0xff
			return os.WriteFile(p, b, 0o644)
		}, info},
		{"wrong row count", func(string) error { return nil }, Info{Name: info.Name, Rows: 4, Checksum: info.Checksum, Bytes: info.Bytes}},
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

// TestWriterBatching writes the same rows through a Writer in batches of
// several sizes: the files are byte-identical whatever the batching, and
// identical to what Write makes of them when they fit in one of the
// Writer's own batches; they read back whole.
func TestWriterBatching(t *testing.T) {
	ctx := context.Background()
	d, err := storage.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		rows, groupRows int
		sameAsWrite     bool
	}{
		{rows: writerBatch, sameAsWrite: true},
		{rows: 1000, groupRows: 300, sameAsWrite: true},
		{rows: 5*writerBatch + 17},
		{rows: 3*writerBatch + 1, groupRows: 20_000},
	}
	for _, tt := range tests {
		rows := make([]row, tt.rows)
		for i := range rows {
			rows[i] = row{A: int64(i), S: strings.Repeat("x", i%37)}
		}
		o := Options{SortedBy: []string{"a"}, RowGroupRows: tt.groupRows}
		var first []byte
		for _, batch := range []int{1, 7, 4096, 65_537} {
			w, err := Create[row](ctx, d, "batched.parquet", o)
			if err != nil {
				t.Fatal(err)
			}
			for start := 0; start < len(rows); start += batch {
				if err := w.Write(rows[start:min(start+batch, len(rows))]); err != nil {
					t.Fatal(err)
				}
			}
			info, err := w.Commit()
			if err != nil {
				t.Fatal(err)
			}
			got, _ := storage.ReadFile(ctx, d, "batched.parquet")
			if first == nil {
				first = got
				back, err := Read[row](ctx, d, "batched.parquet", &info)
				if err != nil || !slices.Equal(back, rows) {
					t.Fatalf("%d rows: read back %d rows, %v", tt.rows, len(back), err)
				}
			} else if !bytes.Equal(got, first) {
				t.Errorf("%d rows in groups of %d: batches of %d give another file", tt.rows, tt.groupRows, batch)
			}
		}
		if tt.sameAsWrite {
			if _, err := Write(ctx, d, "whole.parquet", rows, o); err != nil {
				t.Fatal(err)
			}
			if whole, _ := storage.ReadFile(ctx, d, "whole.parquet"); !bytes.Equal(whole, first) {
				t.Errorf("%d rows: the Writer's file differs from Write's", tt.rows)
			}
		}
	}
}
