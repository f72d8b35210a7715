package mapper

import (
	"context"
	"testing"

	"github.com/neardup/neardup/internal/corpus"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/worktest"
)

// BenchmarkMap measures the map stage on one chunk of 2,000 generated
// documents (JSONL), with exact verification (shingle sets stored):
// reading, shingling, sketching, band keys and writing the chunk's files.
func BenchmarkMap(b *testing.B) {
	ctx := context.Background()
	pool, err := corpus.BundledPool()
	if err != nil {
		b.Fatal(err)
	}
	g, err := corpus.New(pool, corpus.DefaultConfig(2000, 1))
	if err != nil {
		b.Fatal(err)
	}
	w, err := corpus.Write(g, corpus.WriteOptions{Dir: b.TempDir(), Format: corpus.FormatJSONL, Files: 1})
	if err != nil {
		b.Fatal(err)
	}
	p := job.DefaultParams()
	p.Partitions = 8
	if err := p.Resolve(); err != nil {
		b.Fatal(err)
	}
	chunk := worktest.WholeChunk(0, w.Files...)
	b.SetBytes(chunk.Bytes)
	for b.Loop() {
		st, err := storage.NewDir(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Map(ctx, st, &job.Spec{Params: p}, chunk); err != nil {
			b.Fatal(err)
		}
	}
}
