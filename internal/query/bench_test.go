package query

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/neardup/neardup/internal/job"
)

// BenchmarkQuery queries near-copies of indexed documents (an index of
// 3,000 generated documents, 8 partitions) one at a time and in batches
// of 100, with band tables cached (256 MiB) and without; ns/doc is per
// document, bandB/doc the band file bytes read per document.
func BenchmarkQuery(b *testing.B) {
	f := runJob(b, 3000, 9, func(*job.Params) {})
	r := rand.New(rand.NewPCG(9, 9))
	docs := make([]Doc, 1000)
	for i := range docs {
		src := f.ids[r.IntN(len(f.ids))]
		docs[i] = Doc{ID: src, Text: []byte(nearCopy(r, f.texts[src], 0.03*r.Float64()))}
	}
	ctx := context.Background()
	for _, bc := range []struct {
		batch int
		cache int64
	}{{1, 0}, {100, 0}, {1, 256 << 20}, {100, 256 << 20}} {
		b.Run(fmt.Sprintf("batch=%d/cache=%dMiB", bc.batch, bc.cache>>20), func(b *testing.B) {
			batch := bc.batch
			s, err := Open(ctx, []string{f.out}, Options{CacheBytes: bc.cache})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			i := 0
			var st Stats
			for b.Loop() {
				start := i % len(docs)
				_, qs, err := s.Query(ctx, docs[start:min(start+batch, len(docs))])
				if err != nil {
					b.Fatal(err)
				}
				st.Add(qs)
				i += batch
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(st.Docs), "ns/doc")
			b.ReportMetric(float64(st.BandBytes)/float64(st.Docs), "bandB/doc")
		})
	}
}
