// Package fileinfo describes a file as its writer wrote it (its name,
// size, rows and checksum, or those of a range of it), which every reader
// of the job's files checks before it trusts one: a truncated, damaged or
// foreign file is never taken as complete. Each file format (Parquet
// files in pqfile, work files in workfile, signature files and text
// stores) checks its own and fails with its own error.
package fileinfo

import (
	"io"

	"github.com/cespare/xxhash/v2"
)

// Info describes a written file, or a range of one (from Offset, Bytes
// long): what a reader checks before use.
type Info struct {
	Name     string `json:"name"`
	Rows     int64  `json:"rows"`
	Checksum uint64 `json:"xxhash"`
	Bytes    int64  `json:"bytes"`
	Offset   int64  `json:"offset,omitempty"`
}

// Summer passes writes through, counting and hashing the bytes: what a
// writer of any file records in its Info.
type Summer struct {
	w io.Writer
	h *xxhash.Digest
	n int64
}

// NewSummer returns a Summer writing to w.
func NewSummer(w io.Writer) *Summer { return &Summer{w: w, h: xxhash.New()} }

// NewCounter returns a Summer writing to w that counts the bytes but does
// not hash them, its Info's Checksum 0: for a file read only by random
// access (a set file), never whole, whose records carry checksums of
// their own and whose reader checks its size and rows.
func NewCounter(w io.Writer) *Summer { return &Summer{w: w} }

// Write writes p through, counting and hashing it.
func (h *Summer) Write(p []byte) (int, error) {
	n, err := h.w.Write(p)
	if h.h != nil {
		h.h.Write(p[:n])
	}
	h.n += int64(n)
	return n, err
}

// Info describes the bytes written so far as file name with rows rows.
func (h *Summer) Info(name string, rows int64) Info {
	var sum uint64
	if h.h != nil {
		sum = h.h.Sum64()
	}
	return Info{Name: name, Rows: rows, Checksum: sum, Bytes: h.n}
}
