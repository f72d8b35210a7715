package shingle

import "testing"

func BenchmarkScanBlocks(b *testing.B) {
	for _, blocks := range []int{1, 4, 64} {
		text := make([]byte, blocks*64)
		for i := range text {
			text[i] = "The quick brown fox, 12 jumps."[i%30]
		}
		low := make([]byte, len(text))
		runs := make([]uint64, blocks)
		high := make([]uint64, blocks)
		b.Run("go", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				scanBlocksGo(text, low, runs, high, 0)
			}
		})
		b.Run("avx2", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				scanBlocksAVX2(&text[0], &low[0], &runs[0], &high[0], blocks, 0)
			}
		})
	}
}
