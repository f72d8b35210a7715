//go:build amd64 && !purego

package shingle

// hasAVX2 reports whether the CPU and OS support AVX2.
func hasAVX2() bool

// scanBlocksAVX2 is scanBlocksGo for n whole 64-byte blocks, with AVX2.
//
//go:noescape
func scanBlocksAVX2(text, low *byte, runs, high *uint64, n int, zeroDigits uint64) uint64
