package pqfile

import (
	"context"
	"errors"
	"os"
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
