package workfile

import (
	"cmp"

	"github.com/neardup/neardup/pkg/records"
)

// The verified files (their layout is in the package doc) are written by
// VerifiedWriter (verifiedwrite.go) and read by verifiedReader
// (verifiedread.go); their pairs' values are encoded and decoded in
// verifiedvalues.go. This file holds what those share.

// VerifiedPairsMagic and VerifiedMembersMagic begin and end a verified
// file of pairs and of group members (their layout is in the package
// doc): the reader of one kind refuses the other.
const (
	VerifiedPairsMagic   = "NDVPAIR1"
	VerifiedMembersMagic = "NDVMEMB1"
)

// verifiedHeader is the size of a block's header, verifiedTrailer the
// size of a file's trailer.
const (
	verifiedHeader  = 16
	verifiedTrailer = 7*8 + 8 // seven numbers, the magic
)

// verifiedBlockRows bounds the rows of a block (at most 77 bytes each):
// a reader holds one block.
const verifiedBlockRows = 1 << 16

// maxZstdRatio bounds the bytes a byte of a zstd frame decodes to: a
// block of one repeated byte stores 128 KiB in 4 bytes. A table whose
// strings claim more is corrupt, before anything is allocated for them.
const maxZstdRatio = 1 << 15

// stringsWindowMargin is what the decoder of a table's strings may take
// beyond their recorded size: it counts the frame's window in it (the
// writer's is at most 8 MiB, declared even for a few bytes of strings).
// What it allocates for them is their recorded size.
const stringsWindowMargin = 64 << 20

// docRef is a document a verified row names.
type docRef struct {
	ord     int64
	id, url string
}

// ComparePair orders pairs by (a, b), the order of a verified file's rows
// and of a pairs/ file.
func ComparePair(a, b records.Pair) int {
	if c := cmp.Compare(a.A, b.A); c != 0 {
		return c
	}
	return cmp.Compare(a.B, b.B)
}
