package corpus

import (
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestWriteParquet writes a corpus as Parquet tables and reads every
// document back, in order, from the id, url and text columns.
func TestWriteParquet(t *testing.T) {
	g, err := New(testPool(t), DefaultConfig(50, 9))
	if err != nil {
		t.Fatal(err)
	}
	w, err := Write(g, WriteOptions{Dir: t.TempDir(), Format: FormatParquet, Files: 2, Name: "table"})
	if err != nil {
		t.Fatal(err)
	}
	var got []parquetDoc
	for i, path := range w.Files {
		if want := []string{"table-0000.parquet", "table-0001.parquet"}[i]; filepath.Base(path) != want {
			t.Errorf("file %d is %s, want %s", i, filepath.Base(path), want)
		}
		rows, err := parquet.ReadFile[parquetDoc](path)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, rows...)
	}
	if len(got) != g.Len() {
		t.Fatalf("%d rows, want %d", len(got), g.Len())
	}
	for i, r := range got {
		if d := g.Doc(i); r.ID != d.ID || r.URL != d.URL || r.Text != d.Text {
			t.Fatalf("row %d is %+v, want %+v", i, r, d)
		}
	}
}
