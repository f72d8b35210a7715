package corpus

import "testing"

func BenchmarkWriteJSONLGzip(b *testing.B) {
	g := testGenerator(b, 20000, 1)
	for b.Loop() {
		if _, err := Write(g, WriteOptions{Dir: b.TempDir(), Format: FormatJSONL, Gzip: true, Files: 2}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDoc(b *testing.B) {
	g := testGenerator(b, 100000, 1)
	i := 0
	for b.Loop() {
		_ = g.Doc(i % g.Len())
		i++
	}
}
