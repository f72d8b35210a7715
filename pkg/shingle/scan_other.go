//go:build !amd64 || purego

package shingle

func hasAVX2() bool { return false }

func scanBlocksAVX2(text, low *byte, runs, high *uint64, n int, zeroDigits uint64) uint64 {
	panic("shingle: AVX2 scanner not available")
}

func runBoundsBMI(runs *uint64, n int, words *uint64) int {
	panic("shingle: BMI run bounds not available")
}

func hashBoundsBMI(low *byte, words *uint64, n int) int {
	panic("shingle: BMI word hashing not available")
}
