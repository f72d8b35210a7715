package workfile

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

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
	if err := readAt(r.f, head, 0); err != nil {
		return fmt.Errorf("verified file %s at offset 0: %w", r.name, err)
	}
	trAt := size - verifiedTrailer
	if err := readAt(r.f, tr, trAt); err != nil {
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
	if err := readAt(r.f, table, tableAt); err != nil {
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
	// The strings decode into a buffer of their recorded size, which
	// readTable bounded by their stored size: a frame that claims more
	// fails before anything is allocated for it.
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxMemory(uint64(r.strsRaw)+stringsWindowMargin), zstd.WithDecodeAllCapLimit(true))
	if err != nil {
		return nil, nil, err
	}
	defer dec.Close()
	raw, err := dec.DecodeAll(stored, make([]byte, 0, r.strsRaw))
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
