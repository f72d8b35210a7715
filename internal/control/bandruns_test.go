package control

import (
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/neardup/neardup/internal/job"
)

// TestBandRuns runs a job on one gzipped JSONL file, which is one map task
// whatever its size, with a chunk size of the whole file and with one a
// tenth of it: the small one writes its band records in runs (bounded
// memory), and the results are byte-identical.
func TestBandRuns(t *testing.T) {
	plain, _ := genCorpus(t, 600, 41, 1)
	files, _ := filepath.Glob(filepath.Join(plain, "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("want one file, got %v", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	in := t.TempDir()
	f, err := os.Create(filepath.Join(in, "crawl.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	zw.Write(data)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	var outs []string
	for _, chunk := range []int64{int64(len(data)) * 2, int64(len(data)) / 10} {
		out := filepath.Join(t.TempDir(), "out")
		cfg := testConfig(t, in, out, 2)
		cfg.Params.ChunkBytes = chunk
		cfg.KeepWork = true // and the band run files with it
		man, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if man.Chunks != 1 {
			t.Fatalf("%d chunks, want 1 (a compressed file is read whole)", man.Chunks)
		}
		files, _ := filepath.Glob(filepath.Join(out, filepath.FromSlash(job.BandRunsDir), "chunk-000000-run*.bnd"))
		runs := len(files) - 1
		t.Logf("chunk bytes %d: %d band run files after the first", chunk, runs)
		if small := chunk < int64(len(data)); small != (runs > 0) {
			t.Fatalf("chunk bytes %d of %d: %d later runs", chunk, len(data), runs)
		}
		outs = append(outs, out)
	}
	sameFiles(t, outs[0], outs[1], "pairs/*.parquet", "candidates/*.parquet", "clusters.parquet", "duplicates.parquet", "exact.parquet", "docs/*.parquet")
}
