package rates

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/storage"
)

// BenchmarkTallyOutput counts the rates of a finished job's output, the
// directory NEARDUP_RATES_OUT names (for example one made by `coordinator
// --out DIR` on a generated corpus): the pass at the end of a job.
func BenchmarkTallyOutput(b *testing.B) {
	dir := os.Getenv("NEARDUP_RATES_OUT")
	if dir == "" {
		b.Skip("NEARDUP_RATES_OUT names no job output")
	}
	ctx := context.Background()
	st, err := storage.NewDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	m, err := manifest.Read(ctx, st)
	if err != nil {
		b.Fatal(err)
	}
	chunks := ownChunks(b, st)
	b.ResetTimer()
	for range b.N {
		r, err := Tally(ctx, st, chunks, m.Against, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(r.Total.Docs), "ns/doc")
	}
}

// ownChunks lists the chunks of the docs/ files in dir.
func ownChunks(b *testing.B, st *storage.Dir) []Chunk {
	entries, err := os.ReadDir(filepath.Join(st.Root(), job.DocsDir))
	if err != nil {
		b.Fatal(err)
	}
	var chunks []Chunk
	for _, e := range entries {
		var c int
		if _, err := fmt.Sscanf(e.Name(), "chunk-%06d.parquet", &c); err == nil {
			chunks = append(chunks, Chunk{Index: c})
		}
	}
	return chunks
}
