package pqfile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/storage"
)

// TestReadInt64s reads int64 columns of files of one and several row
// groups, plain and dictionary-encoded, in any order of columns: each
// column's values come back in row order, a row group at a time.
func TestReadInt64s(t *testing.T) {
	type colRow struct {
		A int64  `parquet:"a"`
		S string `parquet:"s"`
		B int64  `parquet:"b"`
	}
	ctx := context.Background()
	d, err := storage.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		rows, groupRows int
		dict            []string
	}{
		{0, 64, nil},
		{10, 64, nil},
		{1000, 128, nil},
		{1000, 128, []string{"b"}},
	} {
		name := fmt.Sprintf("t-%d-%d-%d.parquet", tt.rows, tt.groupRows, len(tt.dict))
		rows := make([]colRow, tt.rows)
		for i := range rows {
			rows[i] = colRow{A: int64(i) << 33, S: "x", B: int64(i % 7)}
		}
		info, err := Write(ctx, d, name, rows, Options{RowGroupRows: tt.groupRows, Dict: tt.dict})
		if err != nil {
			t.Fatal(err)
		}
		var gotB, gotA []int64
		var groups int
		err = ReadInt64s(ctx, d, name, &info, []string{"b", "a"}, func(cols [][]int64) error {
			if len(cols) != 2 || len(cols[0]) != len(cols[1]) || len(cols[0]) > tt.groupRows {
				return fmt.Errorf("columns of %d and %d values", len(cols[0]), len(cols[1]))
			}
			groups++
			gotB, gotA = append(gotB, cols[0]...), append(gotA, cols[1]...)
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var wantA, wantB []int64
		for _, r := range rows {
			wantA, wantB = append(wantA, r.A), append(wantB, r.B)
		}
		if !slices.Equal(gotA, wantA) || !slices.Equal(gotB, wantB) || groups != (tt.rows+tt.groupRows-1)/tt.groupRows {
			t.Errorf("%s: %d and %d values in %d row groups, not the rows written", name, len(gotA), len(gotB), groups)
		}
	}
}

// TestReadInt64sRefuses asks for columns that are not required int64
// columns, and reads a file whose recorded row count is wrong: each is an
// error, the last ErrCorrupt.
func TestReadInt64sRefuses(t *testing.T) {
	type colRow struct {
		A int64  `parquet:"a"`
		S string `parquet:"s"`
		O *int64 `parquet:"o,optional"`
	}
	ctx := context.Background()
	d, err := storage.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	info, err := Write(ctx, d, "f.parquet", []colRow{{A: 1}, {A: 2}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	none := func([][]int64) error { return nil }
	for _, col := range []string{"s", "o", "nope"} {
		if err := ReadInt64s(ctx, d, info.Name, &info, []string{"a", col}, none); err == nil || !strings.Contains(err.Error(), "no required int64 column") {
			t.Errorf("column %s: err = %v", col, err)
		}
	}
	wrong := info
	wrong.Rows = 3
	if err := ReadInt64s(ctx, d, info.Name, &wrong, []string{"a"}, none); !errors.Is(err, ErrCorrupt) {
		t.Errorf("wrong row count: err = %v, want ErrCorrupt", err)
	}
}
