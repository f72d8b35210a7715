package workfile

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

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

// preallocStrings bounds what a reader allocates for a table's strings
// before decoding them (more grows as they decode), and what their
// decoding may take beyond their recorded size (the decoder counts its
// window in it: the writer's is at most 8 MiB).
const preallocStrings = 64 << 20

// docRef is a document a verified row names.
type docRef struct {
	ord     int64
	id, url string
}

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
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false))
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

// pairKind is what a block's pairs hold once each: the method, and
// whether hamming is null.
type pairKind struct {
	method  string
	hamming bool
}

// row adds a row of documents i and j of the table.
func (b *verifiedBlock) row(i, j int) {
	b.ends = binary.AppendVarint(b.ends, int64(i-b.prevFirst))
	b.ends = binary.AppendVarint(b.ends, int64(j-i))
	b.prevFirst = i
	b.rows++
}

// pairValues adds the values of the pair of the row just added, whose
// numbers are not negative.
func (b *verifiedBlock) pairValues(p records.Pair) {
	kind := pairKind{p.Method, p.Hamming != nil}
	k := slices.Index(b.kinds, kind)
	if k < 0 {
		k = len(b.kinds)
		b.kinds = append(b.kinds, kind)
	}
	est := math.Float64bits(p.Estimate)
	e, ok := b.estimate[est]
	if !ok {
		if b.estimate == nil {
			b.estimate = map[uint64]int{}
		}
		e = len(b.estimates)
		b.estimate[est] = e
		b.estimates = append(b.estimates, est)
	}
	sim := math.Float64bits(p.Similarity)
	n := leadingBytes(sim)
	b.vals = append(b.vals, byte(n|min(k, 15)<<4))
	if k >= 15 {
		b.vals = binary.AppendUvarint(b.vals, uint64(k))
	}
	for i := range n {
		b.vals = append(b.vals, byte(sim>>(56-8*i)))
	}
	b.vals = binary.AppendUvarint(b.vals, uint64(e))
	if p.Hamming != nil {
		b.vals = binary.AppendUvarint(b.vals, uint64(*p.Hamming))
	}
	b.vals = binary.AppendUvarint(b.vals, uint64(p.BandsCollided))
	b.vals = binary.AppendUvarint(b.vals, uint64(p.FirstBand))
}

// leadingBytes is how many bytes of v, from its most significant, hold
// all of its set bits.
func leadingBytes(v uint64) int { return 8 - bits.TrailingZeros64(v)/8 }

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

// verifiedReader reads a verified file: its table, then its blocks in
// order.
type verifiedReader struct {
	name  string
	f     storage.File
	r     *bufio.Reader
	off   int64 // of the next block
	end   int64 // of the blocks
	rows  int64 // read so far
	want  int64
	buf   []byte
	h     *xxhash.Digest // a block's
	file  *xxhash.Digest // the file's, up to the next block
	sum   uint64         // the file's, as its writer recorded it
	table []byte         // the table and trailer, the file's last bytes
	ords  []int64        // the table's documents
	first []int32        // a block's rows' documents, by index
	other []int32
	last  [2]int64 // the last row's documents
	// Where the table's strings are, read by strings.
	strsAt              int64
	strsRaw, strsStored int64
}

// openVerified opens the verified file info describes, of the kind magic
// names, and reads the ordinals of its table, after checking its size,
// magic and table; close must be called.
func openVerified(ctx context.Context, st storage.Opener, info *fileinfo.Info, magic string) (*verifiedReader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := st.Open(ctx, info.Name)
	if err != nil {
		return nil, err
	}
	r := &verifiedReader{name: info.Name, f: f, want: info.Rows, h: xxhash.New(), file: xxhash.New(), sum: info.Checksum, last: [2]int64{math.MinInt64, math.MinInt64}}
	if err := r.readTable(info, magic); err != nil {
		f.Close()
		return nil, err
	}
	r.off = int64(len(magic))
	r.file.WriteString(magic)
	r.r = bufio.NewReaderSize(io.NewSectionReader(f, r.off, r.end-r.off), 256<<10)
	return r, nil
}

// readTable checks the file's size, magic and trailer, and reads its
// table's ordinals.
func (r *verifiedReader) readTable(info *fileinfo.Info, magic string) error {
	size := r.f.Size()
	if size != info.Bytes {
		return r.corrupt(0, "%d bytes, its writer wrote %d", size, info.Bytes)
	}
	if size < int64(len(magic)+verifiedTrailer) {
		return r.corrupt(0, "too short for a verified file")
	}
	head := make([]byte, len(magic))
	tr := make([]byte, verifiedTrailer)
	if _, err := r.f.ReadAt(head, 0); err != nil {
		return fmt.Errorf("verified file %s at offset 0: %w", r.name, err)
	}
	trAt := size - verifiedTrailer
	if _, err := r.f.ReadAt(tr, trAt); err != nil {
		return fmt.Errorf("verified file %s at offset %d: %w", r.name, trAt, err)
	}
	if string(head) != magic || string(tr[8*7:]) != magic {
		return r.corrupt(0, "not a verified file of its kind (%q)", magic)
	}
	tableAt := int64(binary.LittleEndian.Uint64(tr))
	if tableAt < int64(len(magic)) || tableAt > trAt {
		return r.corrupt(trAt, "a table at offset %d", tableAt)
	}
	table := make([]byte, size-tableAt)
	if _, err := r.f.ReadAt(table, tableAt); err != nil {
		return fmt.Errorf("verified file %s at offset %d: %w", r.name, tableAt, err)
	}
	if xxhash.Sum64(table[:len(table)-16]) != binary.LittleEndian.Uint64(tr[8*6:]) {
		return r.corrupt(tableAt, "table checksum mismatch")
	}
	r.table = table
	var v [5]int64 // documents, size of docs, of the strings decoded and stored, rows
	for i := range v {
		v[i] = int64(binary.LittleEndian.Uint64(tr[8+8*i:]))
	}
	docs, docBytes, rows := v[0], v[1], v[4]
	r.end, r.strsRaw, r.strsStored = tableAt, v[2], v[3]
	if docs < 0 || docBytes < docs || docs > math.MaxInt32 || r.strsStored < 0 || tableAt+docBytes+r.strsStored != trAt || rows != info.Rows {
		return r.corrupt(trAt, "a table of %d documents in %d+%d bytes and %d rows, in %d bytes with %d rows", docs, docBytes, r.strsStored, rows, trAt-tableAt, info.Rows)
	}
	// Each document has an id and a url, of a length byte at least; zstd
	// stores at most maxZstdRatio bytes in a byte of its frame.
	if r.strsRaw < 2*docs || r.strsRaw > maxZstdRatio*(r.strsStored+1) {
		return r.corrupt(trAt, "%d bytes of strings for %d documents, stored in %d", r.strsRaw, docs, r.strsStored)
	}
	r.strsAt = tableAt + docBytes
	r.ords = make([]int64, docs)
	p := table[:docBytes]
	var hi int64 // the previous ordinal's high half
	for i := range r.ords {
		d, k1 := binary.Varint(p)
		lo, k2 := binary.Uvarint(p[max(k1, 0):])
		if k1 <= 0 || k2 <= 0 || lo > math.MaxUint32 {
			return r.corrupt(tableAt+int64(len(table[:docBytes])-len(p)), "bad document %d", i)
		}
		hi += d
		r.ords[i], p = hi<<32|int64(lo), p[k1+k2:]
	}
	if len(p) != 0 {
		return r.corrupt(tableAt, "%d bytes after the documents", len(p))
	}
	return nil
}

// strings reads the ids and urls of the table's documents, substrings of
// one string.
func (r *verifiedReader) strings() (ids, urls []string, err error) {
	// The table, read and checked when the file was opened, holds them.
	stored := r.table[r.strsAt-r.end:][:r.strsStored]
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxMemory(uint64(r.strsRaw)+preallocStrings))
	if err != nil {
		return nil, nil, err
	}
	defer dec.Close()
	raw, err := dec.DecodeAll(stored, make([]byte, 0, min(r.strsRaw, preallocStrings)))
	if err != nil || int64(len(raw)) != r.strsRaw {
		// The table's checksum passed: the writer's bytes do not decode.
		return nil, nil, r.corrupt(r.strsAt, "the strings do not decode to %d bytes: %v", r.strsRaw, err)
	}
	all := string(raw)
	n := len(r.ords)
	fields := make([]string, 2*n)
	at := 0
	for i := range fields {
		l, k := binary.Uvarint(raw[at:])
		if k <= 0 || l > uint64(len(all)-at-k) {
			return nil, nil, r.corrupt(r.strsAt, "the strings of document %d of %d do not decode", i%n, n)
		}
		fields[i] = all[at+k : at+k+int(l)]
		at += k + int(l)
	}
	if at != len(all) {
		return nil, nil, r.corrupt(r.strsAt, "%d bytes after the strings", len(all)-at)
	}
	return fields[:n], fields[n:], nil
}

func (r *verifiedReader) close() { r.f.Close() }

func (r *verifiedReader) corrupt(off int64, format string, args ...any) error {
	return fmt.Errorf("verified file %s at offset %d: %s: %w", r.name, off, fmt.Sprintf(format, args...), ErrCorrupt)
}

// readBlock is one checked block of a verified file.
type readBlock struct {
	off    int64 // the block's offset in the file
	rows   int
	valsAt int64 // the values' offset in the file
	vals   []byte
}

// next reads and checks the next block, and decodes its rows' documents
// into r.first and r.other; nil after the last, once the file's rows are
// those its writer recorded.
func (r *verifiedReader) next(ctx context.Context) (*readBlock, error) {
	if r.off == r.end {
		if r.rows != r.want {
			return nil, r.corrupt(r.off, "%d rows, its writer wrote %d", r.rows, r.want)
		}
		r.file.Write(r.table)
		if sum := r.file.Sum64(); sum != r.sum {
			return nil, r.corrupt(0, "checksum %016x, its writer recorded %016x: not the file it wrote", sum, r.sum)
		}
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var hdr [verifiedHeader]byte
	if r.end-r.off < verifiedHeader {
		return nil, r.corrupt(r.off, "a block header cut short")
	}
	if _, err := io.ReadFull(r.r, hdr[:]); err != nil {
		return nil, fmt.Errorf("verified file %s at offset %d: %w", r.name, r.off, err)
	}
	size := int64(binary.LittleEndian.Uint32(hdr[8:]))
	rows := int64(binary.LittleEndian.Uint32(hdr[12:]))
	if size > r.end-r.off-verifiedHeader {
		return nil, r.corrupt(r.off, "a block of %d bytes past the blocks' end", size)
	}
	if int64(cap(r.buf)) < size {
		r.buf = make([]byte, size)
	}
	buf := r.buf[:size]
	if _, err := io.ReadFull(r.r, buf); err != nil {
		return nil, fmt.Errorf("verified file %s at offset %d: %w", r.name, r.off, err)
	}
	r.h.Reset()
	r.h.Write(hdr[8:])
	r.h.Write(buf)
	if r.h.Sum64() != binary.LittleEndian.Uint64(hdr[:]) {
		return nil, r.corrupt(r.off, "block checksum mismatch")
	}
	r.file.Write(hdr[:])
	r.file.Write(buf)
	b := &readBlock{off: r.off, rows: int(rows)}
	r.off += verifiedHeader + size
	r.rows += rows
	if rows == 0 || r.rows > r.want {
		return nil, r.corrupt(b.off, "a block of %d rows after %d of the file's %d", rows, r.rows-rows, r.want)
	}
	n, k := binary.Uvarint(buf)
	if k <= 0 || n > uint64(len(buf)-k) {
		return nil, r.corrupt(b.off+verifiedHeader, "bad size of the rows")
	}
	ends := buf[k : k+int(n)]
	b.vals, b.valsAt = buf[k+int(n):], b.off+verifiedHeader+int64(k)+int64(n)
	if err := r.rowEnds(ends, b); err != nil {
		return nil, err
	}
	return b, nil
}

// rowEnds decodes the indexes of the rows' documents into r.first and
// r.other; the rows must come in (first, second) order, without repeats,
// as the writer writes them.
func (r *verifiedReader) rowEnds(ends []byte, b *readBlock) error {
	r.first, r.other = r.first[:0], r.other[:0]
	docs := int64(len(r.ords))
	p := ends
	var i int64
	for range b.rows {
		d, k1 := binary.Varint(p)
		e, k2 := binary.Varint(p[max(k1, 0):])
		i += d
		if k1 <= 0 || k2 <= 0 || i < 0 || i >= docs || i+e < 0 || i+e >= docs {
			return r.corrupt(b.off+verifiedHeader+int64(len(ends)-len(p)), "bad row %d of the block", len(r.first))
		}
		row := [2]int64{r.ords[i], r.ords[i+e]}
		if row[0] < r.last[0] || row[0] == r.last[0] && row[1] <= r.last[1] {
			return r.corrupt(b.off, "row %d of the block, (%d, %d) after (%d, %d): not in order", len(r.first), row[0], row[1], r.last[0], r.last[1])
		}
		r.last = row
		p = p[k1+k2:]
		r.first, r.other = append(r.first, int32(i)), append(r.other, int32(i+e))
	}
	if len(p) != 0 {
		return r.corrupt(b.off, "%d bytes after the rows' documents", len(p))
	}
	return nil
}

// eachBlock opens a verified file of the kind magic names and calls fn
// with each of its blocks, once its rows' documents are decoded into
// r.first and r.other; ids and urls are the table's strings, read if
// strs is set.
func eachBlock(ctx context.Context, st storage.Opener, info *fileinfo.Info, magic string, strs bool, fn func(r *verifiedReader, b *readBlock, ids, urls []string) error) error {
	r, err := openVerified(ctx, st, info, magic)
	if err != nil {
		return err
	}
	defer r.close()
	var ids, urls []string
	if strs {
		if ids, urls, err = r.strings(); err != nil {
			return err
		}
	}
	for {
		b, err := r.next(ctx)
		if err != nil || b == nil {
			return err
		}
		if err := fn(r, b, ids, urls); err != nil {
			return err
		}
	}
}

// ReadVerifiedEnds calls fn with the documents of every row of the
// verified file of pairs or members (magic) info describes, decoding no
// string.
func ReadVerifiedEnds(ctx context.Context, st storage.Opener, info *fileinfo.Info, magic string, fn func(a, b int64) error) error {
	if isLegacyVerified(info) {
		return readLegacyEnds(ctx, st, info, magic, fn)
	}
	return eachBlock(ctx, st, info, magic, false, func(r *verifiedReader, _ *readBlock, _, _ []string) error {
		for k, i := range r.first {
			if err := fn(r.ords[i], r.ords[r.other[k]]); err != nil {
				return err
			}
		}
		return nil
	})
}

// ReadVerifiedPairs calls fn with the pairs of a verified file, a block
// at a time (the slice is reused).
func ReadVerifiedPairs(ctx context.Context, st storage.Opener, info *fileinfo.Info, fn func([]records.Pair) error) error {
	if isLegacyVerified(info) {
		return readLegacyPairs(ctx, st, info, fn)
	}
	var pairs []records.Pair
	return eachBlock(ctx, st, info, VerifiedPairsMagic, true, func(r *verifiedReader, b *readBlock, ids, urls []string) error {
		pairs = pairs[:0]
		for k, i := range r.first {
			j := r.other[k]
			pairs = append(pairs, records.Pair{A: r.ords[i], B: r.ords[j], AID: ids[i], BID: ids[j], AURL: urls[i], BURL: urls[j]})
		}
		if err := r.pairValues(b, pairs); err != nil {
			return err
		}
		return fn(pairs)
	})
}

// pairValues decodes the values of block b into its pairs.
func (r *verifiedReader) pairValues(b *readBlock, pairs []records.Pair) error {
	d := valueDecoder{p: b.vals}
	kinds := make([]pairKind, d.uvarint(len(b.vals)))
	for i := range kinds {
		kinds[i] = pairKind{d.string(), d.uvarint(2) == 1}
	}
	estimates := make([]float64, d.uvarint(len(b.vals)/8))
	for i := range estimates {
		estimates[i] = math.Float64frombits(d.uint64())
	}
	if d.failed {
		return r.corrupt(b.valsAt, "bad kinds or estimates")
	}
	var hamming []int32 // the block's pairs' Hamming point into it
	for i := range pairs {
		start := b.valsAt + int64(d.at)
		c := d.byte()
		k := int(c >> 4)
		if k == 15 {
			k = d.uvarint(len(kinds))
		}
		n := int(c & 15)
		if n > 8 || k >= len(kinds) {
			d.failed = true
		}
		var sim uint64
		for j := range min(n, 8) {
			sim |= uint64(d.byte()) << (56 - 8*j)
		}
		pr := &pairs[i]
		pr.Similarity = math.Float64frombits(sim)
		if e := d.uvarint(len(estimates)); !d.failed {
			pr.Estimate = estimates[e]
		}
		if !d.failed && kinds[k].hamming {
			if hamming == nil {
				hamming = make([]int32, 0, len(pairs))
			}
			hamming = append(hamming, int32(d.uvarint(math.MaxInt32+1)))
			pr.Hamming = &hamming[len(hamming)-1]
		}
		pr.BandsCollided, pr.FirstBand = int32(d.uvarint(math.MaxInt32+1)), int32(d.uvarint(math.MaxInt32+1))
		if d.failed {
			return r.corrupt(start, "bad values of row %d of the block", i)
		}
		pr.Method = kinds[k].method
	}
	if d.at != len(b.vals) {
		return r.corrupt(b.valsAt+int64(d.at), "%d bytes after the rows", len(b.vals)-d.at)
	}
	return nil
}

// valueDecoder reads the values of a block; a value that does not
// decode, or is out of its range, leaves it failed (and reads as 0).
type valueDecoder struct {
	p      []byte
	at     int
	failed bool
}

func (d *valueDecoder) byte() byte {
	if d.at >= len(d.p) {
		d.failed = true
		return 0
	}
	d.at++
	return d.p[d.at-1]
}

// uvarint reads a uvarint below bound.
func (d *valueDecoder) uvarint(bound int) int {
	v, k := binary.Uvarint(d.p[min(d.at, len(d.p)):])
	if k <= 0 || v >= uint64(bound) {
		d.failed = true
		return 0
	}
	d.at += k
	return int(v)
}

func (d *valueDecoder) uint64() uint64 {
	if len(d.p)-d.at < 8 {
		d.failed = true
		return 0
	}
	d.at += 8
	return binary.LittleEndian.Uint64(d.p[d.at-8:])
}

func (d *valueDecoder) string() string {
	l := d.uvarint(len(d.p) - d.at + 1)
	if d.failed || l > len(d.p)-d.at {
		d.failed = true
		return ""
	}
	d.at += l
	return string(d.p[d.at-l : d.at])
}

// ReadVerifiedMembers calls fn with the group members of a verified
// file, in order.
func ReadVerifiedMembers(ctx context.Context, st storage.Opener, info *fileinfo.Info, fn func(records.ExactMember) error) error {
	if isLegacyVerified(info) {
		return readLegacyMembers(ctx, st, info, fn)
	}
	return eachBlock(ctx, st, info, VerifiedMembersMagic, true, func(r *verifiedReader, b *readBlock, ids, urls []string) error {
		if len(b.vals) != 0 {
			return r.corrupt(b.valsAt, "%d bytes after the rows", len(b.vals))
		}
		for k, g := range r.first {
			m := r.other[k]
			if err := fn(records.ExactMember{Group: r.ords[g], Doc: r.ords[m], GroupID: ids[g], ID: ids[m], GroupURL: urls[g], URL: urls[m]}); err != nil {
				return err
			}
		}
		return nil
	})
}

// ComparePair orders pairs by (a, b), the order of a verified file's rows
// and of a pairs/ file.
func ComparePair(a, b records.Pair) int {
	if c := cmp.Compare(a.A, b.A); c != 0 {
		return c
	}
	return cmp.Compare(a.B, b.B)
}
