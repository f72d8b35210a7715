package rates

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// writeFacts writes facts files of docs (as map would have, from the
// same documents) into st and returns the chunks with them.
func writeFacts(t *testing.T, st storage.FS, docs map[int][]records.DocRecord) []Chunk {
	t.Helper()
	var out []Chunk
	for _, c := range slices.Sorted(func(yield func(int) bool) {
		for c := range docs {
			if !yield(c) {
				return
			}
		}
	}) {
		w, err := NewFactsWriter(context.Background(), st, job.RatesWorkFile(c))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs[c] {
			if err := w.Add(int64(job.SlotOf(d.Doc)), d.URL, d.File, d.Bytes); err != nil {
				t.Fatal(err)
			}
		}
		info, err := w.Close()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, Chunk{Index: c, Facts: &info})
	}
	return out
}

// TestFactsRoundTrip reads back what FactsWriter wrote: each document's
// slot (gaps included), host as Host reads its URL, file and bytes, in
// order, with names new, repeated, empty, longer than a one-byte length
// and pushed out of the writer's table; and a document before the last
// one's is refused.
func TestFactsRoundTrip(t *testing.T) {
	long := "https://" + strings.Repeat("x", 300) + ".example/p"
	type fact struct {
		slot      int64
		url, file string
		bytes     int64
	}
	in := []fact{
		{0, "https://A.example/1", "a.jsonl", 100},
		{1, "https://a.example:8443/2", "a.jsonl", 0},
		{2, "", "a.jsonl", 10},
		{5, "http://[::1]:80/x", "b.jsonl", 1 << 40},
		{6, long, strings.Repeat("f", 200), 7},
		{7, "https://a.example/3", "", 5},
		{1000, long, "", 1},
		{1001, "mailto:someone@example.org", "", 3},
		{1002, "", "", 3},
		{1003, "https://a.example/4", strings.Repeat("g", 70000), 9}, // past the reader's buffer
		{1004, "https://a.example/5", strings.Repeat("g", 70000), 9},
	}
	// More distinct hosts than the table holds, met again after others
	// pushed them out.
	for i := range 3 * nameSlots {
		in = append(in, fact{int64(2000 + i), fmt.Sprintf("http://h%d.example/%d", i*7919%(nameSlots+100), i), fmt.Sprintf("f%d", i/1000), int64(i)})
	}
	st, err := storage.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	w, err := NewFactsWriter(ctx, st, job.RatesWorkFile(3))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range in {
		if err := w.Add(f.slot, f.url, f.file, f.bytes); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Add(in[len(in)-1].slot, "http://late.example/", "", 1); err == nil {
		t.Fatal("a document in the last one's slot was taken")
	}
	info, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if info.Rows != int64(len(in)) || info.Name != job.RatesWorkFile(3) {
		t.Fatalf("info %+v, want %d rows of %s", info, len(in), job.RatesWorkFile(3))
	}
	var got []fact
	err = readFacts(ctx, st, info, func(slot int64, host, file string, bytes int64) error {
		got = append(got, fact{slot, host, file, bytes})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var want []fact
	for _, f := range in {
		want = append(want, fact{f.slot, Host(f.url), f.file, f.bytes})
	}
	if !slices.Equal(got, want) {
		t.Fatalf("read back\n%+v\nwant\n%+v", got, want)
	}
}

// TestTallyFacts counts jobs from their facts files and from their docs/
// files: the rates, as JSON, are byte-identical, in any number of parts,
// with some chunks' facts and others' docs/ files too.
func TestTallyFacts(t *testing.T) {
	for _, s := range []shape{
		{"one chunk", []int{3}, 500, 40, 2},
		{"many chunks", []int{2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, 150, 300, 7},
		{"more hosts than held", []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 400, 3000, 5},
	} {
		t.Run(s.name, func(t *testing.T) {
			docs, dups := s.make(t)
			st := write(t, docs, dups)
			facts := writeFacts(t, st, docs)
			ctx := context.Background()
			for _, maxHosts := range []int{MaxHosts, 100} {
				for _, parts := range []int{1, 3, 16} {
					want, err := tallyAt(ctx, st, asChunks(s.chunks), againstShapes, nil, maxHosts, parts)
					if err != nil {
						t.Fatal(err)
					}
					mixed := slices.Clone(facts)
					for i := range mixed {
						if i%2 == 1 {
							mixed[i].Facts = nil
						}
					}
					for name, chunks := range map[string][]Chunk{"facts": facts, "mixed": mixed} {
						got, err := tallyAt(ctx, st, chunks, againstShapes, nil, maxHosts, parts)
						if err != nil {
							t.Fatal(err)
						}
						if js, wjs := mustJSON(t, got), mustJSON(t, want); js != wjs {
							t.Errorf("%s, %d hosts held, %d parts:\n%s\nfrom docs/:\n%s", name, maxHosts, parts, js, wjs)
						}
					}
				}
			}
		})
	}
}

// TestFactsDamaged reads facts files that are not what their writer
// recorded: each fails as corrupt (or missing) naming the file, and
// Tally counts that chunk's part again with the chunk's docs/ file (rows
// of the damaged file may have been counted before the damage was
// found): the same rates.
func TestFactsDamaged(t *testing.T) {
	docs := twoChunks()
	dups := []records.Duplicate{dup(5, 1, ""), dup(6, 0, "w46")}
	tests := []struct {
		name   string
		damage func(t *testing.T, path string, info *fileinfo.Info)
		want   error
	}{
		{"a byte changed", func(t *testing.T, path string, info *fileinfo.Info) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)/2] ^= 0x40
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}, ErrCorruptFacts},
		{"truncated", func(t *testing.T, path string, info *fileinfo.Info) {
			if err := os.Truncate(path, info.Bytes-1); err != nil {
				t.Fatal(err)
			}
		}, ErrCorruptFacts},
		{"fewer rows than recorded", func(t *testing.T, path string, info *fileinfo.Info) {
			info.Rows++
		}, ErrCorruptFacts},
		{"a row cut short", func(t *testing.T, path string, info *fileinfo.Info) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			b = b[:len(b)-1]
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			info.Bytes, info.Checksum = int64(len(b)), xxhash.Sum64(b)
		}, ErrCorruptFacts},
		{"a name of an empty slot", func(t *testing.T, path string, info *fileinfo.Info) {
			b := []byte{0, 9, 0, 1, 'f', 7} // slot 0, host: slot 8 (empty), file "f", 7 bytes
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			info.Bytes, info.Checksum, info.Rows = int64(len(b)), xxhash.Sum64(b), 1
		}, ErrCorruptFacts},
		{"missing", func(t *testing.T, path string, info *fileinfo.Info) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}, fs.ErrNotExist},
	}
	want, err := Tally(context.Background(), write(t, docs, dups), asChunks([]int{5, 6}), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := write(t, docs, dups)
			chunks := writeFacts(t, st, docs)
			c := &chunks[len(chunks)-1]
			tt.damage(t, filepath.Join(st.Root(), c.Facts.Name), c.Facts)
			err := readFacts(context.Background(), st, *c.Facts, func(int64, string, string, int64) error { return nil })
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), c.Facts.Name) {
				t.Fatalf("got %v, want %v naming %s", err, tt.want, c.Facts.Name)
			}
			got, err := Tally(context.Background(), st, chunks, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if js, wjs := mustJSON(t, got), mustJSON(t, want); js != wjs {
				t.Fatalf("rates with a damaged facts file:\n%s\nfrom docs/:\n%s", js, wjs)
			}
		})
	}
}

// TestFactsGaps counts a chunk whose map task numbered documents it did
// not write (an error of its reader passed over): the facts say which
// slots, and the rates are those of its docs/ file.
func TestFactsGaps(t *testing.T) {
	docs := map[int][]records.DocRecord{4: {
		doc(4, 0, "https://a.example/1", "a.jsonl", 10),
		doc(4, 3, "https://b.example/1", "a.jsonl", 20),
		doc(4, 4, "https://a.example/2", "b.jsonl", 30),
		doc(4, 9, "", "b.jsonl", 40),
	}}
	dups := []records.Duplicate{dup(4, 3, ""), dup(4, 9, "")}
	st := write(t, docs, dups)
	want, err := Tally(context.Background(), st, asChunks([]int{4}), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Tally(context.Background(), st, writeFacts(t, st, docs), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if js, wjs := mustJSON(t, got), mustJSON(t, want); js != wjs {
		t.Fatalf("from facts with gaps:\n%s\nfrom docs/:\n%s", js, wjs)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
