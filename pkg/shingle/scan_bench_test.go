package shingle

import "testing"

// BenchmarkScanBlocks compares the portable and the AVX2 block scanners.
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
		if !hasAVX2() {
			continue
		}
		b.Run("avx2", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				scanBlocksAVX2(&text[0], &low[0], &runs[0], &high[0], blocks, 0)
			}
		})
	}
}

// BenchmarkRunBounds compares the portable and the BMI run-bounds loops on
// English text.
func BenchmarkRunBounds(b *testing.B) {
	text := []byte(readTestdata(b, "Isaac.Newton-Opticks.txt")[:64*1024])
	s, _ := NewShingler(Options{})
	s.scan(text)
	runs := s.runs
	words := make([]uint64, len(text))
	n := runBoundsGo(runs, words)
	b.Run("go", func(b *testing.B) {
		for b.Loop() {
			runBoundsGo(runs, words)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/word")
	})
	if !hasAVX2() {
		return
	}
	b.Run("bmi", func(b *testing.B) {
		for b.Loop() {
			runBoundsBMI(&runs[0], len(runs)-1, &words[0])
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/word")
	})
}
