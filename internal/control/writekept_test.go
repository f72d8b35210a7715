package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/corpus"
	"github.com/neardup/neardup/internal/dataroot"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/kept"
	"github.com/neardup/neardup/internal/kepttest"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/s3test"
	"github.com/neardup/neardup/internal/storage"
)

// keptInputs writes the inputs of the kept-corpus tests: uncompressed
// JSONL files the job cuts into several chunks each, a WET file of one
// gzip member per record, and small files (JSONL, text) that share a
// chunk.
func keptInputs(t *testing.T) string {
	t.Helper()
	in := t.TempDir()
	pool, err := corpus.BundledPool()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		format corpus.Format
		n      int
		files  int
		gzip   bool
		name   string
	}{{"jsonl", 1200, 2, false, "big"}, {"wet", 300, 1, true, "crawl"}, {"jsonl", 40, 4, true, "small"}} {
		g, err := corpus.New(pool, corpus.DefaultConfig(c.n, uint64(c.n)))
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(in, c.name)
		if _, err := corpus.Write(g, corpus.WriteOptions{Dir: dir, Format: c.format, Files: c.files, Gzip: c.gzip}); err != nil {
			t.Fatal(err)
		}
	}
	// A text file that is a copy of a document of the first JSONL file:
	// it is dropped.
	big, _ := filepath.Glob(filepath.Join(in, "big", "*.jsonl"))
	data, err := os.ReadFile(big[0])
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Text string }
	json.Unmarshal(data[:bytes.IndexByte(data, '\n')], &doc)
	if err := os.WriteFile(filepath.Join(in, "small", "zz-copy.txt"), []byte(doc.Text), 0o644); err != nil {
		t.Fatal(err)
	}
	return in
}

// keptFiles returns the files of a kept corpus's directory (kepttest).
func keptFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files, err := kepttest.Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestWriteKept runs jobs that write their kept corpus (--write-kept)
// with 1 and 3 workers, in the inputs' formats and as Parquet: the corpus
// holds the documents but the duplicates, its files are byte-identical
// whatever the workers, and the same as `coordinator write-kept` writes of
// the finished job; the manifest records it, and its _SUCCESS is there.
func TestWriteKept(t *testing.T) {
	in := keptInputs(t)
	ctx := context.Background()
	for _, format := range []string{kept.FormatAuto, kept.FormatParquet} {
		t.Run(format, func(t *testing.T) {
			var first map[string][]byte
			for _, workers := range []int{1, 3} {
				out := filepath.Join(t.TempDir(), "out")
				dir := filepath.Join(t.TempDir(), "kept")
				cfg := testConfig(t, in, out, workers)
				cfg.WriteKept, cfg.KeptFormat = dir, format
				man, err := Run(ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				checkKeptManifest(t, man, dir)
				files := keptFiles(t, dir)
				if first == nil {
					first = files
				} else if err := kepttest.Same(first, files); err != nil {
					t.Errorf("%d workers: %v", workers, err)
				}
				if workers > 1 {
					continue
				}
				// The command write-kept writes the same corpus.
				sa := filepath.Join(t.TempDir(), "standalone")
				roots, err := dataroot.Resolve([]string{in})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := kept.Write(ctx, kept.Options{Job: out, Dir: sa, Format: format, Roots: []kept.Roots{roots}}); err != nil {
					t.Fatal(err)
				}
				if err := kepttest.Same(files, keptFiles(t, sa)); err != nil {
					t.Errorf("the job's corpus and write-kept's: %v", err)
				}
			}
		})
	}
}

// checkKeptManifest checks the manifest's record of the kept corpus in
// dir: its counts (the documents but the duplicates), its files and
// their sizes, more than one task, its markers.
func checkKeptManifest(t *testing.T, man *manifest.Manifest, dir string) {
	t.Helper()
	k, c := man.Kept, man.Counts
	if k == nil {
		t.Fatal("the manifest records no kept corpus")
	}
	if k.Docs != c.Docs || k.Duplicates != c.Duplicates || k.Dropped != c.Duplicates || k.Kept != c.Docs-c.Duplicates || c.Duplicates == 0 {
		t.Errorf("kept corpus: docs %d, kept %d, dropped %d, duplicates %d; the job: docs %d, duplicates %d", k.Docs, k.Kept, k.Dropped, k.Duplicates, c.Docs, c.Duplicates)
	}
	var bytes int64
	for _, f := range k.Files {
		var size int64
		for _, o := range f.Outputs {
			st, err := os.Stat(filepath.Join(dir, o))
			if err != nil {
				t.Fatal(err)
			}
			size += st.Size()
		}
		if size != f.Bytes {
			t.Errorf("%s: %d bytes of outputs, the manifest says %d", f.Input, size, f.Bytes)
		}
		bytes += size
	}
	if bytes != k.Bytes || len(k.Files) != len(man.Inputs) {
		t.Errorf("the manifest's kept corpus: %d bytes in %d files, the outputs %d bytes of %d inputs", k.Bytes, len(k.Files), bytes, len(man.Inputs))
	}
	tasks := 0
	for _, s := range man.Stages {
		if s.Name == "write-kept" {
			tasks = s.Tasks
		}
	}
	if tasks < 2 {
		t.Errorf("the write-kept stage ran %d tasks, want several", tasks)
	}
	t.Logf("kept %d of %d documents, %d bytes of %d inputs, in %d tasks", k.Kept, k.Docs, k.Bytes, len(k.Files), tasks)
	for _, name := range []string{kept.SuccessFile, kept.SummaryFile, kept.MarkerFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
}

// TestWriteKeptRefused checks the kept corpus's directory and format
// that a job refuses before it touches its output: inside the output or
// an input, around the output, a format that cannot write an input, none
// at all; and a directory that holds files, refused as not empty (exit 3)
// unless it holds a corpus write-kept wrote and --overwrite is given.
func TestWriteKeptRefused(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in")
	genDir, _ := genCorpus(t, 200, 3, 2)
	if err := os.CopyFS(in, os.DirFS(genDir)); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	base := t.TempDir()
	out := filepath.Join(base, "jobs", "out")
	tests := []struct {
		name      string
		dir       string
		format    string
		want      string
		untouched bool // refused before the output is made
	}{
		{"in the output", filepath.Join(out, "kept"), "", "cannot be written into the job", true},
		{"the output", out, "", "cannot be written into the job", true},
		{"around the output", filepath.Join(base, "jobs"), "", "holds the job", true},
		{"in an input directory", filepath.Join(in, "kept"), "", "cannot be written into an INPUT", true},
		{"around an input", base, "", "holds", true},
		{"WARC of JSONL", filepath.Join(base, "k1"), "warc", "cannot be written as warc: only WARC and WET inputs", true},
		{"no such format", filepath.Join(base, "k2"), "csv", `not "csv"`, true},
		{"a format without a directory", "", "parquet", "--kept-format goes with --write-kept", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(t, in, out, 1)
			cfg.WriteKept, cfg.KeptFormat = tt.dir, tt.format
			cfg.Log = slog.New(slog.DiscardHandler)
			_, err := Run(ctx, cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Run: %v, want an error saying %q", err, tt.want)
			}
			if _, serr := os.Stat(out); tt.untouched && !os.IsNotExist(serr) {
				t.Errorf("the refused job made its output: %v", serr)
			}
		})
	}
	t.Run("a directory of other files", func(t *testing.T) {
		dir := filepath.Join(base, "other")
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
		cfg := testConfig(t, in, filepath.Join(base, "o2"), 1)
		cfg.WriteKept, cfg.Overwrite = dir, true
		if _, err := Run(ctx, cfg); !errors.Is(err, kept.ErrNotEmpty) || !strings.Contains(err.Error(), "notes.txt") {
			t.Fatalf("Run: %v, want ErrNotEmpty naming notes.txt", err)
		}
		if data, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(data) != "mine" {
			t.Errorf("notes.txt: %q, %v", data, err)
		}
	})
	t.Run("another job's corpus", func(t *testing.T) {
		dir := filepath.Join(base, "k3")
		cfg := testConfig(t, in, filepath.Join(base, "o3"), 1)
		cfg.WriteKept = dir
		if _, err := Run(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		cfg.Out = filepath.Join(base, "o4")
		if _, err := Run(ctx, cfg); !errors.Is(err, kept.ErrNotEmpty) {
			t.Fatalf("a second job into the first's corpus: %v, want ErrNotEmpty", err)
		}
		cfg.Overwrite = true
		if _, err := Run(ctx, cfg); err != nil {
			t.Fatalf("with --overwrite: %v", err)
		}
		var m kept.Marker
		data, _ := os.ReadFile(filepath.Join(dir, kept.MarkerFile))
		json.Unmarshal(data, &m)
		if m.Job != cfg.Out {
			t.Errorf("the corpus is %s's, want %s's", m.Job, cfg.Out)
		}
	})
}

// TestKeptRoots checks that a worker refuses, for good, a job whose kept
// corpus lies outside its data roots.
func TestKeptRoots(t *testing.T) {
	root := t.TempDir()
	roots, err := dataroot.Resolve([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	spec := job.Spec{Job: "j", Kept: &job.KeptOutput{Dir: filepath.Join(t.TempDir(), "kept"), Format: kept.FormatAuto}}
	if _, err := openKept(context.Background(), spec, roots); err == nil || !strings.Contains(err.Error(), "outside the worker's data roots") {
		t.Fatalf("openKept: %v", err)
	}
	spec.Kept.Dir = filepath.Join(root, "kept")
	d, err := openKept(context.Background(), spec, roots)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
}

// TestWriteKeptAgainst writes the kept corpus of a job matched against an
// earlier one (--against, as a series' member is): its documents but its
// duplicates, near-duplicates of the earlier job's documents among them,
// numbered after the earlier job's chunks; the same corpus as write-kept
// writes of it.
func TestWriteKeptAgainst(t *testing.T) {
	ctx := context.Background()
	all, _ := genCorpus(t, 1200, 21, 4)
	files, _ := filepath.Glob(filepath.Join(all, "*.jsonl"))
	first, second := t.TempDir(), t.TempDir()
	for i, f := range files {
		dst := first
		if i >= 2 {
			dst = second
		}
		if err := os.Rename(f, filepath.Join(dst, filepath.Base(f))); err != nil {
			t.Fatal(err)
		}
	}
	earlier := filepath.Join(t.TempDir(), "w1")
	if _, err := Run(ctx, testConfig(t, first, earlier, 2)); err != nil {
		t.Fatal(err)
	}
	out, dir := filepath.Join(t.TempDir(), "w2"), filepath.Join(t.TempDir(), "kept")
	cfg := testConfig(t, second, out, 2)
	cfg.Against, cfg.WriteKept = []string{earlier}, dir
	man, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkKeptManifest(t, man, dir)
	if man.Counts.PairsAgainst == 0 || man.FirstChunk == 0 {
		t.Fatalf("the job found %d pairs with the earlier one's documents, its chunks from %d: the test wants some", man.Counts.PairsAgainst, man.FirstChunk)
	}
	sa := filepath.Join(t.TempDir(), "standalone")
	roots, err := dataroot.Resolve([]string{second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kept.Write(ctx, kept.Options{Job: out, Dir: sa, Roots: []kept.Roots{roots}}); err != nil {
		t.Fatal(err)
	}
	if err := kepttest.Same(keptFiles(t, dir), keptFiles(t, sa)); err != nil {
		t.Errorf("the job's corpus and write-kept's: %v", err)
	}
}

// TestWriteKeptObjectStorage writes the kept corpus of a job on S3 (a test
// server on loopback) into the bucket: the same files, byte for byte, as
// the same job on local files writes into a directory (kept.json but the
// inputs' names).
func TestWriteKeptObjectStorage(t *testing.T) {
	ctx := context.Background()
	in, _ := genCorpus(t, 400, 31, 3)
	ref, refDir := filepath.Join(t.TempDir(), "ref"), filepath.Join(t.TempDir(), "kept")
	cfg := testConfig(t, in, ref, 2)
	cfg.WriteKept = refDir
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	s3test.Start(t, "crawl").PutDir(t, in, "crawl", "in")
	cfg = testConfig(t, "s3://crawl/in", "s3://crawl/out", 2)
	cfg.NATSStore, cfg.WriteKept = filepath.Join(t.TempDir(), "nats"), "s3://crawl/kept"
	man, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if man.Kept == nil || man.Kept.Dir != "s3://crawl/kept" {
		t.Fatalf("the manifest's kept corpus: %+v", man.Kept)
	}
	st, err := storage.Open(ctx, "s3://crawl/kept")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	names, err := st.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	got := t.TempDir()
	for _, name := range names {
		data, err := storage.ReadFile(ctx, st, name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(got, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// kept.json names the inputs, here objects.
	want, have := keptFiles(t, refDir), keptFiles(t, got)
	if _, ok := have[kept.SummaryFile]; !ok {
		t.Errorf("no %s in the bucket", kept.SummaryFile)
	}
	delete(want, kept.SummaryFile)
	delete(have, kept.SummaryFile)
	if err := kepttest.Same(want, have); err != nil {
		t.Errorf("the corpus in the bucket and the local one: %v", err)
	}
}
