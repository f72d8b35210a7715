package control

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/corpus"
	"github.com/neardup/neardup/internal/index"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
)

// TestCompactIndexes runs a series of three weekly jobs, the third twice:
// against the first two jobs' outputs, and against their indexes
// compacted into one (coordinator index compact). Both must list the same
// pairs (with the same similarity, estimate and bands), and the compacted
// index must hold every document of the two, in few files. A second
// compaction into the same place is refused without Overwrite; one that
// names a job twice is refused.
func TestCompactIndexes(t *testing.T) {
	files, run := seriesFixture(t, 1500, 3, 128<<10)
	ctx := context.Background()
	base := t.TempDir()
	week1 := run("week1", files[0])
	week2 := run("week2", files[1], week1)
	compacted := filepath.Join(base, "compacted")
	ix, err := CompactIndexes(ctx, CompactConfig{Out: compacted, Indexes: []string{week1, week2}})
	if err != nil {
		t.Fatal(err)
	}
	var docs int64
	for _, out := range []string{week1, week2} {
		d, err := storage.Open(ctx, out)
		if err != nil {
			t.Fatal(err)
		}
		src, err := index.Load(ctx, d)
		d.Close()
		if err != nil {
			t.Fatal(err)
		}
		docs += src.Docs
	}
	if ix.Docs != docs || len(ix.BandFiles) != 1 || ix.Against != nil {
		t.Fatalf("compacted index: %d docs (want %d), %d band files (want 1), against %v (want none)", ix.Docs, docs, len(ix.BandFiles), ix.Against)
	}
	if len(ix.Compacted) != 2 || ix.Compacted[0].Out != week1 || ix.Compacted[1].Out != week2 ||
		ix.Compacted[0].Docs+ix.Compacted[1].Docs != docs || ix.Compacted[1].FirstChunk != ix.Compacted[0].Chunks {
		t.Fatalf("compacted index: compacted = %+v, want week1 and week2 with their chunk ranges", ix.Compacted)
	}

	bySeries := run("week3", files[2], week1, week2)
	byCompacted := run("week3c", files[2], compacted)
	key := func(out string) []string {
		var keys []string
		for _, p := range readPairs(t, out) {
			keys = append(keys, fmt.Sprintf("%s %s %.6f %.6f %d %d %s", p.AID, p.BID, p.Similarity, p.Estimate, p.BandsCollided, p.FirstBand, deref(p.AJob)))
		}
		slices.Sort(keys)
		return keys
	}
	want, got := key(bySeries), key(byCompacted)
	if len(want) == 0 {
		t.Fatal("the third week has no pairs: the test shows nothing")
	}
	if !slices.Equal(got, want) {
		t.Fatalf("against the compacted index: %d pairs, against the series: %d\nfirst: %q\nwant:  %q", len(got), len(want), got[:min(3, len(got))], want[:min(3, len(want))])
	}
	// Each pair against the compacted index names its document's own
	// job in a_job (as the series does: the key above), and the
	// compacted index in a_out.
	earlier := 0
	for _, p := range readPairs(t, byCompacted) {
		if p.AJob == nil {
			continue
		}
		earlier++
		if p.AOut == nil || *p.AOut != compacted || *p.AJob == ix.Job {
			t.Fatalf("pair %s %s against the compacted index: a_job %s, a_out %v", p.AID, p.BID, *p.AJob, deref(p.AOut))
		}
	}
	if earlier == 0 {
		t.Fatal("no pair of the third week names a document of the compacted index")
	}

	// A compacted source holds its jobs: the third week, run against
	// week1 and week2, is not against anything once compacted with them.
	again, err := CompactIndexes(ctx, CompactConfig{Out: filepath.Join(base, "again"), Indexes: []string{compacted, bySeries}})
	if err != nil {
		t.Fatal(err)
	}
	if again.Against != nil || len(again.Compacted) != 3 {
		t.Fatalf("compacting the compacted index with week3: against %+v (want none), holds %d jobs (want 3)", again.Against, len(again.Compacted))
	}

	if _, err := CompactIndexes(ctx, CompactConfig{Out: compacted, Indexes: []string{week1, week2}}); !errors.Is(err, ErrHasIndex) {
		t.Fatalf("compacting again without overwrite: %v, want %v", err, ErrHasIndex)
	}
	if _, err := CompactIndexes(ctx, CompactConfig{Out: filepath.Join(base, "twice"), Indexes: []string{week1, week1}}); err == nil {
		t.Fatal("compacting one job twice was not refused")
	}
}

// seriesFixture writes a corpus of docs documents in files JSONL files and
// returns them, with a function that runs a job of chunks of chunkBytes
// on input into a temporary directory's name, against the outputs
// against (their partitions), and returns its output.
func seriesFixture(t *testing.T, docs, files int, chunkBytes int64) ([]string, func(name, input string, against ...string) string) {
	t.Helper()
	pool, err := corpus.BundledPool()
	if err != nil {
		t.Fatal(err)
	}
	g, err := corpus.New(pool, corpus.AccuracyConfig(docs, 5))
	if err != nil {
		t.Fatal(err)
	}
	w, err := corpus.Write(g, corpus.WriteOptions{Dir: t.TempDir(), Format: corpus.Format("jsonl"), Files: files})
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	return w.Files, func(name string, input string, against ...string) string {
		t.Helper()
		out := filepath.Join(base, name)
		cfg := testConfig(t, input, out, 2)
		cfg.Against = against
		cfg.Params.ChunkBytes = chunkBytes
		cfg.Params.Partitions = 0 // later jobs take the first's
		if _, err := Run(context.Background(), cfg); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return out
	}
}

// TestCompactDamage compacts two finished jobs whose files were damaged
// after they finished: a bit flipped in a text store, a bit flipped in a
// documents file, two chunks' files swapped on disk, their entries
// swapped in index.json, and files swapped with their recorded checksums
// swapped too. Each compaction must fail with an error naming the file,
// and leave no index at --out (no index.json, no copies); one that
// replaces an index (Overwrite) leaves none either. The undamaged
// sources compact (issue 31: the damaged files were copied under the
// old checksums and the compaction succeeded).
func TestCompactDamage(t *testing.T) {
	files, run := seriesFixture(t, 600, 2, 64<<10)
	ctx := context.Background()
	week1 := run("week1", files[0])
	week2 := run("week2", files[1], week1)
	load := func(out string) *index.Index {
		t.Helper()
		d, err := storage.Open(ctx, out)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		ix, err := index.Load(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		return ix
	}
	chunks := load(week2).Chunks
	if len(chunks) < 2 {
		t.Fatalf("week2 has %d chunks: the test needs two to swap", len(chunks))
	}
	second := chunks[1].Chunk
	flip := func(t *testing.T, file string) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 0x10
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	swapFiles := func(t *testing.T, a, b string) {
		if err := os.Rename(a, a+".x"); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(b, a); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(a+".x", b); err != nil {
			t.Fatal(err)
		}
	}
	rewrite := func(t *testing.T, out string, edit func(ix *index.Index)) {
		d, err := storage.Open(ctx, out)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		ix := load(out)
		edit(ix)
		if err := index.Write(ctx, d, ix); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name   string
		damage func(t *testing.T, src string) // on a copy of week2
		says   string                         // what the error says of the file
	}{
		{"bit-flipped text store", func(t *testing.T, src string) {
			flip(t, filepath.Join(src, job.TextFile(load(src).Chunks[1].Chunk)))
		}, job.TextFile(second) + ": checksum"},
		{"bit-flipped docs file", func(t *testing.T, src string) {
			flip(t, filepath.Join(src, job.DocFile(load(src).Chunks[1].Chunk)))
		}, job.DocFile(second) + ": checksum"},
		{"chunks swapped on disk", func(t *testing.T, src string) {
			ix := load(src)
			c0, c1 := ix.Chunks[0].Chunk, ix.Chunks[1].Chunk
			swapFiles(t, filepath.Join(src, job.DocFile(c0)), filepath.Join(src, job.DocFile(c1)))
			swapFiles(t, filepath.Join(src, job.TextFile(c0)), filepath.Join(src, job.TextFile(c1)))
		}, ": checksum"},
		{"chunks swapped in index.json", func(t *testing.T, src string) {
			rewrite(t, src, func(ix *index.Index) {
				ix.Chunks[0].DocFile, ix.Chunks[1].DocFile = ix.Chunks[1].DocFile, ix.Chunks[0].DocFile
				ix.Chunks[0].SigFile, ix.Chunks[1].SigFile = ix.Chunks[1].SigFile, ix.Chunks[0].SigFile
				ix.Chunks[0].Docs, ix.Chunks[1].Docs = ix.Chunks[1].Docs, ix.Chunks[0].Docs
			})
		}, "not its own"},
		{"chunks swapped on disk and in their checksums", func(t *testing.T, src string) {
			ix := load(src)
			c0, c1 := ix.Chunks[0].Chunk, ix.Chunks[1].Chunk
			swapFiles(t, filepath.Join(src, job.DocFile(c0)), filepath.Join(src, job.DocFile(c1)))
			swapFiles(t, filepath.Join(src, job.TextFile(c0)), filepath.Join(src, job.TextFile(c1)))
			rewrite(t, src, func(ix *index.Index) {
				a, b := &ix.Chunks[0], &ix.Chunks[1]
				a.DocFile, b.DocFile = b.DocFile, a.DocFile
				a.SigFile, b.SigFile = b.SigFile, a.SigFile
				a.DocFile.Name, b.DocFile.Name = b.DocFile.Name, a.DocFile.Name
				a.SigFile.Name, b.SigFile.Name = b.SigFile.Name, a.SigFile.Name
				a.Docs, b.Docs = b.Docs, a.Docs
			})
		}, "not document"},
	}
	for _, tt := range tests {
		for _, overwrite := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s overwrite=%v", tt.name, overwrite), func(t *testing.T) {
				src := filepath.Join(t.TempDir(), "week2")
				if err := os.CopyFS(src, os.DirFS(week2)); err != nil {
					t.Fatal(err)
				}
				out := filepath.Join(t.TempDir(), "compacted")
				if overwrite {
					if _, err := CompactIndexes(ctx, CompactConfig{Out: out, Indexes: []string{week1, src}}); err != nil {
						t.Fatal(err)
					}
				}
				tt.damage(t, src)
				_, err := CompactIndexes(ctx, CompactConfig{Out: out, Indexes: []string{week1, src}, Overwrite: overwrite})
				if err == nil || !errors.Is(err, pqfile.ErrCorrupt) || !strings.Contains(err.Error(), src) || !strings.Contains(err.Error(), tt.says) {
					t.Fatalf("compacting a damaged source: %v; want an error naming %s and saying %q", err, src, tt.says)
				}
				d, err := storage.Open(ctx, out)
				if err != nil {
					t.Fatal(err)
				}
				defer d.Close()
				if _, err := index.Load(ctx, d); !errors.Is(err, index.ErrNoIndex) && !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("after the failed compaction, --out holds an index (load: %v)", err)
				}
				if !overwrite {
					var left []string
					filepath.WalkDir(out, func(p string, e fs.DirEntry, err error) error {
						if err == nil && !e.IsDir() && filepath.Base(p) != job.LockFile {
							left = append(left, p)
						}
						return nil
					})
					if len(left) > 0 {
						t.Errorf("the failed compaction left %q", left)
					}
				}
			})
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
