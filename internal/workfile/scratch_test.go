package workfile

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/storage"
)

// TestScratchMapped reads records from scratches whose records are in
// local files, mapped into memory once done: a scratch file of its own,
// and the ranges of a local gather file read in place. Every record is
// what was written, whatever its size (none too), and removing the
// scratch releases its file.
func TestScratchMapped(t *testing.T) {
	ctx := context.Background()
	record := func(i int) []byte { return bytes.Repeat([]byte{byte(i), byte(i >> 8)}, (i*37)%3000) }
	const n = 2000

	t.Run("own file", func(t *testing.T) {
		scr, err := FillScratch("test", ScratchMemory+1, ScratchMemory, func(scr *Scratch) error {
			for i := range n {
				if err := scr.Add(int64(3*i), record(i)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if scr.f == nil || scr.mapped == nil {
			t.Fatalf("a scratch of more than %d bytes is not a mapped file (file %v, mapped %v)", ScratchMemory, scr.f != nil, scr.mapped != nil)
		}
		for i := range n {
			got, err := scr.Get(ctx, int64(3*i))
			if err != nil || !bytes.Equal(got, record(i)) {
				t.Fatalf("record %d: %d bytes (%v), want %d", i, len(got), err, len(record(i)))
			}
		}
		// A fault under the mapping (here the file cut short behind it;
		// for a real file, its disk failing) is an error naming the file.
		if err := scr.f.Truncate(0); err != nil {
			t.Fatal(err)
		}
		if got, err := scr.Get(ctx, 3*(n-1)); !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), scr.f.Name()) {
			t.Fatalf("a record past the end of its truncated file: %d bytes, error %v, want EIO naming %s", len(got), err, scr.f.Name())
		}
		name := scr.f.Name()
		scr.Remove()
		if _, err := os.Stat(name); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("scratch file %s after Remove: %v", name, err)
		}
	})

	t.Run("local gather file in place", func(t *testing.T) {
		st, err := storage.NewDir(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		reqs := make([]Request, n)
		for i := range reqs {
			reqs[i] = Request{Doc: int64(i), Dest: int32(i % 3)}
		}
		reqs = SortRequests(reqs)
		w, err := st.Create(ctx, "g")
		if err != nil {
			t.Fatal(err)
		}
		ranges, err := GroupRanges(ctx, "g", reqs, func(i int) ([]byte, error) { return record(int(reqs[i].Doc)), nil },
			func(rec []byte) error { _, err := w.Write(rec); return err })
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		scr, err := ReadGathered(ctx, st, 1, []job.GatherResult{{Chunk: 0, Ranges: map[int]fileinfo.Info{1: ranges[1]}}})
		if err != nil {
			t.Fatal(err)
		}
		defer scr.Remove()
		if !scr.InPlace() || len(scr.views) != 1 || scr.views[0] == nil {
			t.Fatalf("a local gather file is not read in place from its mapping (in place %v, views %d)", scr.InPlace(), len(scr.views))
		}
		if got, want := len(scr.Docs()), (n+1)/3; got != want { // i%3 == 1
			t.Fatalf("%d records for verify chunk 1, want %d", got, want)
		}
		for _, doc := range scr.Docs() {
			got, err := scr.Get(ctx, doc)
			if err != nil || !bytes.Equal(got, record(int(doc))) {
				t.Fatalf("document %d: %d bytes (%v), want %d", doc, len(got), err, len(record(int(doc))))
			}
		}
	})
}

// TestScratchMemory checks where a scratch holds its records: in memory
// up to the memory it is given, whatever its size estimate said, in a
// file from the start when the estimate passes it, and moved to a file
// when the records outgrow it (an estimate too low); every record reads
// back as added.
func TestScratchMemory(t *testing.T) {
	ctx := context.Background()
	record := func(i int) []byte { return bytes.Repeat([]byte{byte(i), byte(i >> 8)}, 1+(i*37)%500) }
	const n = 1000
	total := 0
	for i := range n {
		total += len(record(i))
	}
	for _, tt := range []struct {
		name         string
		size, memory int64
		wantFile     bool
	}{
		{"in memory, estimate right", int64(total), int64(total), false},
		{"in memory, estimate high", 2 * int64(total), 2 * int64(total), false},
		{"in memory, estimate low", 1, int64(total), false},
		{"a file from the start", int64(total), int64(total) - 1, true},
		{"moved to a file when the estimate was low", int64(total) / 4, int64(total) / 2, true},
		{"no memory", 0, 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			scr, err := FillScratch("test", tt.size, tt.memory, func(scr *Scratch) error {
				for i := range n {
					if err := scr.Add(int64(2*i+1), record(i)); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			defer scr.Remove()
			if got := scr.f != nil; got != tt.wantFile {
				t.Fatalf("records in a file %v, want %v", got, tt.wantFile)
			}
			if int64(cap(scr.mem)) > tt.memory {
				t.Errorf("%d bytes of memory for records, more than the %d given", cap(scr.mem), tt.memory)
			}
			for i := range n {
				got, err := scr.Get(ctx, int64(2*i+1))
				if err != nil || !bytes.Equal(got, record(i)) {
					t.Fatalf("record %d: %d bytes (%v), want %d", i, len(got), err, len(record(i)))
				}
			}
		})
	}
}
