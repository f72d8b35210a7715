//go:build amd64 && !purego

package shingle

// hasAVX2 reports whether the CPU and OS support AVX2, and the CPU BMI1
// and BMI2.
func hasAVX2() bool

// scanBlocksAVX2 is scanBlocksGo for n whole 64-byte blocks, with AVX2.
//
//go:noescape
func scanBlocksAVX2(text, low *byte, runs, high *uint64, n int, zeroDigits uint64) uint64

// runBoundsBMI is runBoundsGo for runs[:n] (runs[n] must be readable).
//
//go:noescape
func runBoundsBMI(runs *uint64, n int, words *uint64) int

// hashBoundsBMI is hashBoundsGo for words[:n] up to the first run of 16
// bytes or more; it returns the number of words done.
//
//go:noescape
func hashBoundsBMI(low *byte, words *uint64, n int) int
