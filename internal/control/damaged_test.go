package control

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/pkg/formats"
)

// textRow is a row of a Parquet input.
type textRow struct {
	ID   string `parquet:"id"`
	Text string `parquet:"text"`
}

// TestDamagedParquetInput runs a job on a Parquet file whose data pages
// are damaged (its footer intact), so that the reader loses the rows of
// its row group: the job does not end quietly with no documents, but
// counts the lost rows and bytes as damaged and warns.
func TestDamagedParquetInput(t *testing.T) {
	var rows []textRow
	for i := range 200 {
		rows = append(rows, textRow{ID: fmt.Sprint(i), Text: fmt.Sprintf("document %d says %s", i, strings.Repeat(fmt.Sprintf("word%d ", i%7), 20))})
	}
	var buf bytes.Buffer
	if err := parquet.Write(&buf, rows); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	dir := t.TempDir()
	path := filepath.Join(dir, "damaged.parquet")
	// The first damaged byte (in the pages, not the footer) that makes the
	// reader lose rows rather than read them or refuse the file.
	lost := int64(0)
	for i := 4; i < len(good)/2 && lost == 0; i += 7 {
		bad := bytes.Clone(good)
		bad[i] ^= 0x5a
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		piece := formats.Piece{Path: path, Kind: formats.KindParquet, End: -1}
		formats.Read(context.Background(), piece, formats.Options{}, func(formats.Doc) error { return nil }, func(r formats.Reject) error {
			lost += r.Rows
			return nil
		})
	}
	if lost == 0 {
		t.Fatal("no damaged byte made the reader lose rows")
	}
	m, err := Run(context.Background(), testConfig(t, path, filepath.Join(t.TempDir(), "out"), 1))
	if err != nil {
		t.Fatal(err)
	}
	c := m.Counts
	if c.DamagedRows != lost || c.DamagedRanges != 1 || c.DamagedBytes <= 0 || c.Docs+c.Rejected-1+c.DamagedRows != int64(len(rows)) || !hasWarning(m, "damaged ranges") {
		t.Fatalf("docs %d, rejected %d, damaged ranges %d (%d bytes, %d rows; the reader lost %d), warnings %q",
			c.Docs, c.Rejected, c.DamagedRanges, c.DamagedBytes, c.DamagedRows, lost, m.Warnings)
	}
}

// appendOnFirstMap appends to a file when the first map task starts, as a
// writer still appending to an input does.
type appendOnFirstMap struct {
	noObserver
	path string
	once *sync.Once
	err  *error
}

func (a appendOnFirstMap) TaskStarted(stage string, _ int) {
	if stage != StageMap {
		return
	}
	a.once.Do(func() {
		f, err := os.OpenFile(a.path, os.O_APPEND|os.O_WRONLY, 0)
		if err == nil {
			_, err = f.WriteString(`{"id":"late","text":"a document written after the job was planned"}` + "\n")
			err = errors.Join(err, f.Close())
		}
		*a.err = err
	})
}

// TestInputChangedAfterPlanning appends to an input between planning and
// its map task: the job warns, naming the file, and counts it.
func TestInputChangedAfterPlanning(t *testing.T) {
	in, _ := genCorpus(t, 50, 23, 1)
	files, _ := filepath.Glob(filepath.Join(in, "*"))
	if len(files) != 1 {
		t.Fatalf("corpus files %v, want one", files)
	}
	cfg := testConfig(t, files[0], filepath.Join(t.TempDir(), "out"), 1)
	var appendErr error
	cfg.Tasks = appendOnFirstMap{path: files[0], once: new(sync.Once), err: &appendErr}
	m, err := Run(context.Background(), cfg)
	if err != nil || appendErr != nil {
		t.Fatal(err, appendErr)
	}
	if m.Counts.ChangedFiles != 1 || !slices.Equal(m.ChangedInputs, files) || !hasWarning(m, "changed (size or modification time) after the job was planned: "+files[0]) {
		t.Fatalf("changed files %d %v, warnings %q", m.Counts.ChangedFiles, m.ChangedInputs, m.Warnings)
	}
}
