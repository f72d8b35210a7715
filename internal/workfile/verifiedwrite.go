package workfile

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// VerifiedWriter writes a verified file of one kind (its magic), which
// exists only if it has rows. It holds the file's table of documents
// and one block.
type VerifiedWriter struct {
	st    storage.Creator
	name  string
	magic string

	w    storage.Writer // nil until the first block
	sum  *fileinfo.Summer
	bw   *bufio.Writer
	off  int64 // the bytes written
	rows int64
	last [2]int64 // the last row's documents

	index map[int64]int // a document's index in refs
	refs  []docRef      // the table
	blk   verifiedBlock
}

// NewPairsWriter returns a writer of a verified file of pairs.
func NewPairsWriter(st storage.Creator, name string) *VerifiedWriter {
	return &VerifiedWriter{st: st, name: name, magic: VerifiedPairsMagic, index: map[int64]int{}}
}

// NewMembersWriter returns a writer of a verified file of group members.
func NewMembersWriter(st storage.Creator, name string) *VerifiedWriter {
	return &VerifiedWriter{st: st, name: name, magic: VerifiedMembersMagic, index: map[int64]int{}}
}

// WritePairs adds verified pairs, which sort after those written.
func (w *VerifiedWriter) WritePairs(ctx context.Context, rows []records.Pair) error {
	if w.magic != VerifiedPairsMagic {
		return fmt.Errorf("%s: pairs written to a file of members", w.name)
	}
	for _, p := range rows {
		switch {
		case p.AJob != nil || p.AOut != nil:
			return fmt.Errorf("%s: pair (%d, %d) names an earlier job: a verified pair does not", w.name, p.A, p.B)
		case p.BandsCollided < 0 || p.FirstBand < 0 || p.Hamming != nil && *p.Hamming < 0:
			return fmt.Errorf("%s: pair (%d, %d) has a negative number of bands, first band or Hamming distance", w.name, p.A, p.B)
		}
		if err := w.row(ctx, docRef{p.A, p.AID, p.AURL}, docRef{p.B, p.BID, p.BURL}); err != nil {
			return err
		}
		w.blk.pairValues(p)
	}
	return nil
}

// WriteMembers adds confirmed group members, which sort after those
// written.
func (w *VerifiedWriter) WriteMembers(ctx context.Context, rows []records.ExactMember) error {
	if w.magic != VerifiedMembersMagic {
		return fmt.Errorf("%s: members written to a file of pairs", w.name)
	}
	for _, m := range rows {
		if err := w.row(ctx, docRef{m.Group, m.GroupID, m.GroupURL}, docRef{m.Doc, m.ID, m.URL}); err != nil {
			return err
		}
	}
	return nil
}

// row adds the documents of the next row, after writing the block if it
// is full.
func (w *VerifiedWriter) row(ctx context.Context, a, b docRef) error {
	if w.rows > 0 && (a.ord < w.last[0] || a.ord == w.last[0] && b.ord <= w.last[1]) {
		return fmt.Errorf("%s: row (%d, %d) after (%d, %d): not in order", w.name, a.ord, b.ord, w.last[0], w.last[1])
	}
	if w.blk.rows == verifiedBlockRows {
		if err := w.flush(ctx); err != nil {
			return err
		}
	}
	i, err := w.ref(a)
	if err != nil {
		return err
	}
	j, err := w.ref(b)
	if err != nil {
		return err
	}
	w.blk.row(i, j)
	w.rows++
	w.last = [2]int64{a.ord, b.ord}
	return nil
}

// ref returns the index of document d in the table, adding it if new; a
// document named again must have the same id and url.
func (w *VerifiedWriter) ref(d docRef) (int, error) {
	if i, ok := w.index[d.ord]; ok {
		if r := w.refs[i]; r.id != d.id || r.url != d.url {
			return 0, fmt.Errorf("%s: document %d is named %q (%q) and %q (%q)", w.name, d.ord, r.id, r.url, d.id, d.url)
		}
		return i, nil
	}
	i := len(w.refs)
	if i == math.MaxInt32 {
		// A reader holds a row's documents as int32 indexes.
		return 0, fmt.Errorf("%s: more than %d documents in one verified file", w.name, math.MaxInt32)
	}
	w.index[d.ord] = i
	w.refs = append(w.refs, d)
	return i, nil
}

// write writes p to the file, creating it first.
func (w *VerifiedWriter) write(ctx context.Context, p ...[]byte) error {
	if w.w == nil {
		f, err := w.st.Create(ctx, w.name)
		if err != nil {
			return err
		}
		w.w, w.sum = f, fileinfo.NewSummer(f)
		w.bw = bufio.NewWriterSize(w.sum, 256<<10)
		w.bw.WriteString(w.magic)
		w.off = int64(len(w.magic))
	}
	for _, b := range p {
		w.bw.Write(b)
		w.off += int64(len(b))
	}
	return nil
}

// flush writes the block held.
func (w *VerifiedWriter) flush(ctx context.Context) error {
	if w.blk.rows == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	pieces := w.blk.payload()
	size := len(pieces[0]) - verifiedHeader
	for _, p := range pieces[1:] {
		size += len(p)
	}
	hdr := pieces[0]
	binary.LittleEndian.PutUint32(hdr[8:], uint32(size))
	binary.LittleEndian.PutUint32(hdr[12:], uint32(w.blk.rows))
	h := xxhash.New()
	for i, p := range pieces {
		if i == 0 {
			p = p[8:]
		}
		h.Write(p)
	}
	binary.LittleEndian.PutUint64(hdr, h.Sum64())
	err := w.write(ctx, pieces...)
	w.blk.reset()
	return err
}

// Commit writes the block held and the table, and completes the file:
// nil if it has no rows.
func (w *VerifiedWriter) Commit(ctx context.Context) (*fileinfo.Info, error) {
	if w.rows == 0 {
		return nil, nil
	}
	err := w.flush(ctx)
	if err == nil {
		err = w.writeTable(ctx)
	}
	if err == nil {
		if err = w.bw.Flush(); err != nil {
			err = fmt.Errorf("storage: write %s: %w", w.name, err)
		}
	}
	if err != nil {
		w.Abort()
		return nil, err
	}
	err = w.w.Commit()
	w.w = nil
	if err != nil {
		return nil, err
	}
	info := w.sum.Info(w.name, w.rows)
	return &info, nil
}

// writeTable writes the table of documents and the trailer.
func (w *VerifiedWriter) writeTable(ctx context.Context) error {
	var docs, strs []byte
	var prev int64 // the previous ordinal's high half
	for _, r := range w.refs {
		docs = binary.AppendVarint(docs, r.ord>>32-prev)
		docs = binary.AppendUvarint(docs, uint64(uint32(r.ord)))
		prev = r.ord >> 32
		strs = AppendString(strs, r.id)
	}
	for _, r := range w.refs {
		strs = AppendString(strs, r.url)
	}
	enc, err := tableEncoder(len(strs))
	if err != nil {
		return err
	}
	stored := enc.EncodeAll(strs, nil)
	enc.Close()
	trailer := make([]byte, 0, verifiedTrailer)
	for _, v := range []int64{w.off, int64(len(w.refs)), int64(len(docs)), int64(len(strs)), int64(len(stored)), w.rows} {
		trailer = binary.LittleEndian.AppendUint64(trailer, uint64(v))
	}
	h := xxhash.New()
	h.Write(docs)
	h.Write(stored)
	h.Write(trailer)
	trailer = binary.LittleEndian.AppendUint64(trailer, h.Sum64())
	trailer = append(trailer, w.magic...)
	return w.write(ctx, docs, stored, trailer)
}

// tableEncoder returns the encoder of a table of n bytes: zstd's fastest
// level, with the least power of two above n as its window (from zstd's
// least window to that level's 4 MiB; a window of exactly n bytes
// encodes otherwise) and a history of that size. A table that fits its
// window is one segment, whose header names no window, so its bytes are
// those of the level's default window; but the history is about the
// table's size, not the 8 MiB the default allocates afresh for every
// verified file (a tenth of the 100k benchmark job's allocations).
func tableEncoder(n int) (*zstd.Encoder, error) {
	window := 1 << min(max(bits.Len(uint(n)), bits.Len(zstd.MinWindowSize-1)), 22)
	return zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false),
		zstd.WithWindowSize(window), zstd.WithLowerEncoderMem(true))
}

// Abort discards the file, if it was started.
func (w *VerifiedWriter) Abort() {
	if w.w != nil {
		w.w.Abort()
		w.w = nil
	}
}

// verifiedBlock is a block being encoded.
type verifiedBlock struct {
	prevFirst int // the last row's first document's index
	rows      int
	ends      []byte
	vals      []byte
	head      []byte // the header and the size of ends, made by payload
	// The pairs' kinds and estimates, by index (see pairValues).
	kinds     []pairKind
	estimates []uint64
	estimate  map[uint64]int // an estimate's index
}

// row adds a row of documents i and j of the table.
func (b *verifiedBlock) row(i, j int) {
	b.ends = binary.AppendVarint(b.ends, int64(i-b.prevFirst))
	b.ends = binary.AppendVarint(b.ends, int64(j-i))
	b.prevFirst = i
	b.rows++
}

// payload returns the block with its header, in pieces: the header (its
// checksum and sizes left for the caller) and the size of ends, ends, and
// the values.
func (b *verifiedBlock) payload() [][]byte {
	b.head = append(b.head[:0], make([]byte, verifiedHeader)...)
	b.head = binary.AppendUvarint(b.head, uint64(len(b.ends)))
	pieces := [][]byte{b.head, b.ends}
	if b.kinds != nil {
		var dict []byte
		dict = binary.AppendUvarint(dict, uint64(len(b.kinds)))
		for _, k := range b.kinds {
			dict = AppendString(dict, k.method)
			if k.hamming {
				dict = append(dict, 1)
			} else {
				dict = append(dict, 0)
			}
		}
		dict = binary.AppendUvarint(dict, uint64(len(b.estimates)))
		for _, e := range b.estimates {
			dict = binary.LittleEndian.AppendUint64(dict, e)
		}
		pieces = append(pieces, dict)
	}
	return append(pieces, b.vals)
}

// reset empties the block, keeping its buffers.
func (b *verifiedBlock) reset() {
	clear(b.estimate)
	*b = verifiedBlock{ends: b.ends[:0], vals: b.vals[:0], head: b.head, estimate: b.estimate}
}
