// Package sigfile stores what verification needs of each document of a
// chunk (its id, signature and shingle set) in a file that is read by
// random access: a verify task reads only the documents its candidate pairs
// name, not whole files. Every record and the index carry an xxhash, so a
// damaged or truncated file is an error, never a wrong answer.
//
// Layout: records, then the index (one little-endian uint64 offset per
// document slot, plus the end offset), then a trailer of the slot count,
// the index's xxhash and the magic "NDSIG1\x00\x00". A record is the
// uvarint-prefixed id, url, signature and shingle bytes followed by the record's
// xxhash. An empty slot (a document without a signature) has no bytes.
package sigfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/cespare/xxhash/v2"
)

const magic = "NDSIG2\x00\x00"

// IsSigFile reports whether the last bytes of a file (at least 8) are a
// signature file's trailer.
func IsSigFile(tail []byte) bool {
	return len(tail) >= len(magic) && string(tail[len(tail)-len(magic):]) == magic
}

// ErrCorrupt marks a file whose bytes do not match their checksums.
var ErrCorrupt = errors.New("signature file is corrupt")

// Record is one document's entry.
type Record struct {
	ID       string
	URL      string
	Sig      []byte
	Shingles []byte
}

// Writer writes records slot by slot.
type Writer struct {
	w       io.Writer
	off     uint64
	offsets []uint64
	buf     []byte
	sum     xxhash.Digest
	err     error
}

// NewWriter starts a file on w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

func (w *Writer) write(b []byte) {
	if w.err != nil {
		return
	}
	_, w.err = w.w.Write(b)
	w.off += uint64(len(b))
}

// Add writes the record of the next slot; a nil record leaves it empty.
func (w *Writer) Add(r *Record) error {
	w.offsets = append(w.offsets, w.off)
	if r == nil {
		return w.err
	}
	// The record up to its shingles is gathered in buf; the shingles
	// (most of it) go to w as they are, the checksum taken on the way.
	b := binary.AppendUvarint(w.buf[:0], uint64(len(r.ID)))
	b = append(b, r.ID...)
	b = binary.AppendUvarint(b, uint64(len(r.URL)))
	b = append(b, r.URL...)
	b = binary.AppendUvarint(b, uint64(len(r.Sig)))
	b = append(b, r.Sig...)
	b = binary.AppendUvarint(b, uint64(len(r.Shingles)))
	w.sum.Reset()
	w.sum.Write(b)
	w.sum.Write(r.Shingles)
	w.write(b)
	w.write(r.Shingles)
	w.buf = binary.LittleEndian.AppendUint64(b[:0], w.sum.Sum64())
	w.write(w.buf)
	return w.err
}

// Close writes the index and trailer. It does not close the underlying
// writer.
func (w *Writer) Close() error {
	idx := make([]byte, 0, 8*(len(w.offsets)+1)+24)
	for _, o := range w.offsets {
		idx = binary.LittleEndian.AppendUint64(idx, o)
	}
	idx = binary.LittleEndian.AppendUint64(idx, w.off)
	sum := xxhash.Sum64(idx)
	idx = binary.LittleEndian.AppendUint64(idx, uint64(len(w.offsets)))
	idx = binary.LittleEndian.AppendUint64(idx, sum)
	idx = append(idx, magic...)
	w.write(idx)
	return w.err
}

// Reader reads records by slot.
type Reader struct {
	r       io.ReaderAt
	offsets []uint64
	buf     []byte
}

// NewReader opens a file of the given size, checking its index.
func NewReader(r io.ReaderAt, size int64) (*Reader, error) {
	if size < 32 {
		return nil, fmt.Errorf("%d bytes: %w", size, ErrCorrupt)
	}
	var tr [24]byte
	if _, err := r.ReadAt(tr[:], size-24); err != nil {
		return nil, fmt.Errorf("reading trailer: %w", err)
	}
	if string(tr[16:]) != magic {
		return nil, fmt.Errorf("no trailer: %w", ErrCorrupt)
	}
	n := binary.LittleEndian.Uint64(tr[0:])
	if n > uint64(size)/8 {
		return nil, fmt.Errorf("%d slots in %d bytes: %w", n, size, ErrCorrupt)
	}
	idxLen := int64(8 * (n + 1))
	if idxLen > size-24 {
		return nil, fmt.Errorf("index larger than the file: %w", ErrCorrupt)
	}
	idx := make([]byte, idxLen)
	if _, err := r.ReadAt(idx, size-24-idxLen); err != nil {
		return nil, fmt.Errorf("reading index: %w", err)
	}
	if xxhash.Sum64(idx) != binary.LittleEndian.Uint64(tr[8:]) {
		return nil, fmt.Errorf("index checksum: %w", ErrCorrupt)
	}
	offsets := make([]uint64, n+1)
	for i := range offsets {
		offsets[i] = binary.LittleEndian.Uint64(idx[8*i:])
		if (i > 0 && offsets[i] < offsets[i-1]) || offsets[i] > uint64(size-24-idxLen) {
			return nil, fmt.Errorf("index offsets out of order: %w", ErrCorrupt)
		}
	}
	return &Reader{r: r, offsets: offsets}, nil
}

// Len is the number of slots.
func (r *Reader) Len() int { return len(r.offsets) - 1 }

// Size is the size of a slot's record in bytes, 0 for an empty or
// invalid slot.
func (r *Reader) Size(slot int) int64 {
	if slot < 0 || slot >= r.Len() {
		return 0
	}
	return int64(r.offsets[slot+1] - r.offsets[slot])
}

// Get reads the record of a slot; ok is false for an empty slot. The
// returned slices are fresh.
func (r *Reader) Get(slot int) (rec Record, ok bool, err error) {
	raw, ok, err := r.Raw(slot)
	if !ok || err != nil {
		return Record{}, ok, err
	}
	rec, err = Decode(raw)
	if err != nil {
		return Record{}, false, fmt.Errorf("slot %d: %w", slot, err)
	}
	return rec, true, nil
}

// Raw reads the bytes of a slot's record, checksum included, as Decode
// takes them; ok is false for an empty slot. The slice is fresh.
func (r *Reader) Raw(slot int) (raw []byte, ok bool, err error) { return r.AppendRaw(nil, slot) }

// AppendRaw appends the bytes of a slot's record (Raw) to dst and
// returns the extended slice; ok is false for an empty slot, dst then
// returned as it was.
func (r *Reader) AppendRaw(dst []byte, slot int) (raw []byte, ok bool, err error) {
	if slot < 0 || slot >= r.Len() {
		return dst, false, fmt.Errorf("slot %d of %d", slot, r.Len())
	}
	lo, hi := r.offsets[slot], r.offsets[slot+1]
	if lo == hi {
		return dst, false, nil
	}
	if hi-lo < 8 {
		return dst, false, fmt.Errorf("slot %d: %w", slot, ErrCorrupt)
	}
	n := len(dst)
	dst = slices.Grow(dst, int(hi-lo))[:n+int(hi-lo)]
	if _, err := r.r.ReadAt(dst[n:], int64(lo)); err != nil {
		return dst[:n], false, fmt.Errorf("slot %d: %w", slot, err)
	}
	return dst, true, nil
}

// Decode checks a record's bytes against their checksum and splits them
// into its fields, which share raw's memory.
func Decode(raw []byte) (Record, error) {
	if len(raw) < 8 {
		return Record{}, fmt.Errorf("record of %d bytes: %w", len(raw), ErrCorrupt)
	}
	body := raw[:len(raw)-8]
	if xxhash.Sum64(body) != binary.LittleEndian.Uint64(raw[len(raw)-8:]) {
		return Record{}, fmt.Errorf("record checksum: %w", ErrCorrupt)
	}
	var fields [4][]byte
	for i := range fields {
		l, n := binary.Uvarint(body)
		if n <= 0 || l > uint64(len(body)-n) {
			return Record{}, fmt.Errorf("record field %d: %w", i, ErrCorrupt)
		}
		fields[i], body = body[n:n+int(l)], body[n+int(l):]
	}
	return Record{ID: string(fields[0]), URL: string(fields[1]), Sig: fields[2], Shingles: fields[3]}, nil
}
