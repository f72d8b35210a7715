//go:build !amd64 || purego

package shingle

func hasAVX2() bool { return false }

func scanBlocksAVX2(text, low *byte, runs, high *uint64, n int, zeroDigits uint64) uint64 {
	panic("shingle: AVX2 scanner not available")
}
