package formats

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// benchJSONL writes a JSONL file of about size bytes of documents of 1 to
// 8 KB of text with some escapes and non-ASCII letters.
func benchJSONL(b *testing.B, name string, size int, compress func(testing.TB, []byte) []byte) (string, int64) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"the", "near", "duplicate", "document", "finder", "reads", "crawl", "files", "naïve", "café", `"quoted"`, "tab\there", "line\nbreak", "日本語"}
	var sb strings.Builder
	for i := 0; sb.Len() < size; i++ {
		var text strings.Builder
		for n := 1000 + rng.IntN(7000); text.Len() < n; {
			text.WriteString(words[rng.IntN(len(words))])
			text.WriteByte(' ')
		}
		fmt.Fprintf(&sb, `{"id":"doc-%d","url":"https://example.com/%d","text":%q,"lang":"en","score":0.5}`+"\n", i, i, text.String())
	}
	data := []byte(sb.String())
	if compress != nil {
		data = compress(b, data)
	}
	path := writeFile(b, b.TempDir(), name, data)
	return path, int64(sb.Len())
}

// BenchmarkReadJSONL reports the decompressed MB/s of reading JSONL.
func BenchmarkReadJSONL(b *testing.B) {
	for _, bc := range []struct {
		name     string
		compress func(testing.TB, []byte) []byte
	}{
		{"bench.jsonl", nil},
		{"bench.jsonl.gz", func(tb testing.TB, d []byte) []byte { return gzipMembers(tb, string(d)) }},
		{"bench.jsonl.zst", zstdBytes},
	} {
		b.Run(bc.name, func(b *testing.B) {
			path, size := benchJSONL(b, bc.name, 16<<20, bc.compress)
			p := Piece{Path: path, Kind: KindJSONL, End: -1, StartLine: 1}
			emit := func(Doc) error { return nil }
			reject := func(r Reject) error { return fmt.Errorf("unexpected reject %+v", r) }
			b.SetBytes(size)
			b.ResetTimer()
			for b.Loop() {
				if err := Read(context.Background(), p, Options{MaxDocBytes: 1 << 20}, emit, reject); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
