package index

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// TestWriteDropped writes the dropped lists of a job of five chunks (one
// dropping none, one of 5,000 rows over several batches) as one file, a
// copy of duplicates.parquet whose row groups of 1,024 rows do not end
// where chunks do, and reads each chunk's rows back by its list alone,
// exactly and in order; a list read whole (an earlier build's file of the
// chunk's own, count 0) is every row; a range past the file's rows fails
// naming it; a job that dropped nothing writes no file.
func TestWriteDropped(t *testing.T) {
	ctx := context.Background()
	st, err := storage.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	counts := map[int]int{3: 2, 4: 0, 5: 5000, 6: 1, 7: 40}
	var dups []records.Duplicate
	ix := &Index{}
	for c := 3; c <= 7; c++ {
		ix.Chunks = append(ix.Chunks, Chunk{Chunk: c})
		for i := range counts[c] {
			dups = append(dups, records.Duplicate{Doc: job.Ordinal(c, 2*i+1), ID: fmt.Sprintf("d%d-%d", c, i)})
		}
	}
	written, err := pqfile.Write(ctx, st, job.DuplicatesFile, dups, pqfile.Options{SortedBy: []string{"doc"}, RowGroupRows: 1024})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteDropped(ctx, st, ix); err != nil {
		t.Fatal(err)
	}
	var got []records.Duplicate
	for _, ch := range ix.Chunks {
		l := ch.Dropped
		if counts[ch.Chunk] == 0 {
			if l == nil || l.File != nil || l.Docs != 0 {
				t.Errorf("chunk %d dropped none: list %+v, want an empty one", ch.Chunk, l)
			}
			continue
		}
		if l == nil || l.File == nil || l.File.Name != job.DroppedIndexFile || l.Docs != int64(counts[ch.Chunk]) {
			t.Fatalf("chunk %d: list %+v, want %d rows of %s", ch.Chunk, l, counts[ch.Chunk], job.DroppedIndexFile)
		}
		var rows []records.Duplicate
		err := StreamDropped(ctx, st, *l.File, l.First, l.Docs, func(b []records.Duplicate) error {
			rows = append(rows, b...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if job.ChunkOf(r.Doc) != ch.Chunk {
				t.Fatalf("chunk %d's rows hold document %d of chunk %d", ch.Chunk, r.Doc, job.ChunkOf(r.Doc))
			}
		}
		got = append(got, rows...)
	}
	if !slices.EqualFunc(got, dups, func(a, b records.Duplicate) bool { return a.Doc == b.Doc && a.ID == b.ID }) {
		t.Errorf("the chunks' rows read by their lists: %d rows, want the %d of %s in order", len(got), len(dups), job.DuplicatesFile)
	}

	info := *ix.Chunks[0].Dropped.File
	if info.Checksum != written.Checksum || info.Bytes != written.Bytes || info.Rows != written.Rows {
		t.Errorf("%s: %+v, not a copy of %s (%+v)", job.DroppedIndexFile, info, job.DuplicatesFile, written)
	}
	var whole int
	if err := StreamDropped(ctx, st, info, 0, 0, func(b []records.Duplicate) error { whole += len(b); return nil }); err != nil || whole != len(dups) {
		t.Errorf("read whole: %d rows, err %v; want %d", whole, err, len(dups))
	}
	err = StreamDropped(ctx, st, info, info.Rows-1, 2, func([]records.Duplicate) error { return nil })
	if err == nil {
		t.Errorf("a range past the file's %d rows read", info.Rows)
	}

	empty, err := storage.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pqfile.Write(ctx, empty, job.DuplicatesFile, []records.Duplicate{}, pqfile.Sorted("doc")); err != nil {
		t.Fatal(err)
	}
	none := &Index{Chunks: []Chunk{{Chunk: 0}}}
	if err := WriteDropped(ctx, empty, none); err != nil {
		t.Fatal(err)
	}
	if names, err := empty.List(ctx, job.IndexDir); err != nil || len(names) != 0 {
		t.Errorf("a job that dropped nothing wrote %q (err %v)", names, err)
	}
}
