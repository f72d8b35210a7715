package stage

import (
	"bufio"
	"container/heap"
	"context"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// Edge files carry candidate pairs (and exact-group claims) from reduce to
// verify inside the work area: one file per partition, holding fixed
// 20-byte little-endian records (a, b, band) grouped by the chunk of a.
// Each chunk's range is checked against the offset, size, row count and
// xxhash its writer recorded. A few of them are read per verify task, so
// they skip Parquet's per-file cost. The cluster stage's rounds use the
// same records, grouped by partition (see writeRuns).
const edgeRecord = 20

// writeEdges writes edges, sorted by the chunk of their first document,
// to name, and returns each chunk's range.
func writeEdges(ctx context.Context, st storage.Creator, name string, edges []records.Candidate) (map[int]pqfile.Info, error) {
	return writeRuns(ctx, st, name, edges, job.ChunkOf)
}

// writeRuns writes edges, sorted by key of their first document, to name
// as one run per key, and returns each key's range.
func writeRuns(ctx context.Context, st storage.Creator, name string, edges []records.Candidate, key func(int64) int) (map[int]pqfile.Info, error) {
	return writeRunFile(ctx, st, name, edges, func(e records.Candidate) int { return key(e.A) }, appendEdge)
}

func appendEdge(buf []byte, e records.Candidate) []byte {
	buf = binary.LittleEndian.AppendUint64(buf, uint64(e.A))
	buf = binary.LittleEndian.AppendUint64(buf, uint64(e.B))
	return binary.LittleEndian.AppendUint32(buf, uint32(e.Band))
}

func decodeEdge(b []byte) (records.Candidate, int) {
	if len(b) < edgeRecord {
		return records.Candidate{}, 0
	}
	return records.Candidate{
		A:    int64(binary.LittleEndian.Uint64(b)),
		B:    int64(binary.LittleEndian.Uint64(b[8:])),
		Band: int32(binary.LittleEndian.Uint32(b[16:])),
	}, edgeRecord
}

// readEdges appends the edges of one chunk's range to dst.
func readEdges(ctx context.Context, st storage.Opener, info pqfile.Info, dst []records.Candidate) ([]records.Candidate, error) {
	if info.Bytes != edgeRecord*info.Rows {
		return nil, fmt.Errorf("%s: range %d+%d does not hold %d rows: %w", info.Name, info.Offset, info.Bytes, info.Rows, pqfile.ErrCorrupt)
	}
	return readRunFile(ctx, st, info, decodeEdge, dst)
}

// writeRunFile writes rows, sorted by key, to name as one run per key, each
// row encoded by enc, and returns each key's range: its offset, size, row
// count and xxhash, which readRunFile checks. The rows are encoded and
// written a block at a time, not held encoded whole (a reduce partition's
// edges are megabytes).
func writeRunFile[T any](ctx context.Context, st storage.Creator, name string, rows []T, key func(T) int, enc func([]byte, T) []byte) (map[int]pqfile.Info, error) {
	out := map[int]pqfile.Info{}
	if len(rows) == 0 {
		return out, nil
	}
	w, err := st.Create(ctx, name)
	if err != nil {
		return nil, err
	}
	rw := &runWriter{w: w, sum: xxhash.New()}
	for lo := 0; lo < len(rows); {
		k := key(rows[lo])
		if _, dup := out[k]; dup {
			w.Abort()
			return nil, fmt.Errorf("%s: the rows of run %d are not contiguous", name, k)
		}
		hi, start := lo, rw.off
		for ; hi < len(rows) && key(rows[hi]) == k; hi++ {
			rw.buf = enc(rw.buf, rows[hi])
			if len(rw.buf) >= runBlock {
				rw.flush()
			}
		}
		rw.flush()
		out[k] = pqfile.Info{Name: name, Rows: int64(hi - lo), Checksum: rw.sum.Sum64(), Bytes: rw.off - start, Offset: start}
		rw.sum.Reset()
		lo = hi
	}
	if rw.err != nil {
		w.Abort()
		return nil, fmt.Errorf("storage: write %s: %w", name, rw.err)
	}
	if err := w.Commit(); err != nil {
		return nil, err
	}
	return out, nil
}

// runBlock is about the bytes writeRunFile encodes before it writes them.
const runBlock = 64 << 10

// runWriter writes the encoded rows of runs, summing each run's bytes; the
// first error it meets is kept, and the writes after it skipped.
type runWriter struct {
	w   io.Writer
	sum *xxhash.Digest
	buf []byte
	off int64 // the bytes written
	err error
}

// flush writes the encoded rows held.
func (r *runWriter) flush() {
	r.sum.Write(r.buf)
	if r.err == nil {
		_, r.err = r.w.Write(r.buf)
	}
	r.off += int64(len(r.buf))
	r.buf = r.buf[:0]
}

// readRunFile appends the rows of one run to dst, each decoded by dec,
// which returns the bytes it used (0 for bytes that are no row).
func readRunFile[T any](ctx context.Context, st storage.Opener, info pqfile.Info, dec func([]byte) (T, int), dst []T) ([]T, error) {
	f, err := st.Open(ctx, info.Name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info.Offset < 0 || info.Bytes < 0 || info.Offset+info.Bytes > f.Size() {
		return nil, fmt.Errorf("%s: range %d+%d of %d rows does not fit its %d bytes: %w", info.Name, info.Offset, info.Bytes, info.Rows, f.Size(), pqfile.ErrCorrupt)
	}
	buf := make([]byte, info.Bytes)
	if _, err := f.ReadAt(buf, info.Offset); err != nil {
		return nil, fmt.Errorf("%s: %w", info.Name, err)
	}
	if sum := xxhash.Sum64(buf); sum != info.Checksum {
		return nil, fmt.Errorf("%s: range %d+%d has checksum %x, want %x: %w", info.Name, info.Offset, info.Bytes, sum, info.Checksum, pqfile.ErrCorrupt)
	}
	var rows int64
	for b := buf; len(b) > 0; rows++ {
		r, n := dec(b)
		if n <= 0 {
			return nil, fmt.Errorf("%s: range %d+%d: row %d does not decode: %w", info.Name, info.Offset, info.Bytes, rows, pqfile.ErrCorrupt)
		}
		dst = append(dst, r)
		b = b[n:]
	}
	if rows != info.Rows {
		return nil, fmt.Errorf("%s: range %d+%d holds %d rows, want %d: %w", info.Name, info.Offset, info.Bytes, rows, info.Rows, pqfile.ErrCorrupt)
	}
	return dst, nil
}

// appendString appends s, its length first.
func appendString(buf []byte, s string) []byte {
	return append(binary.AppendUvarint(buf, uint64(len(s))), s...)
}

// rowDecoder reads the fields appended by binary.AppendVarint and
// appendString; a field that does not decode leaves it failed.
type rowDecoder struct {
	b      []byte
	n      int
	failed bool
}

func (d *rowDecoder) int() int64 {
	v, n := binary.Varint(d.b[d.n:])
	if n <= 0 {
		d.failed = true
		return 0
	}
	d.n += n
	return v
}

func (d *rowDecoder) string() string {
	l, n := binary.Uvarint(d.b[d.n:])
	if n <= 0 || l > uint64(len(d.b)-d.n-n) {
		d.failed = true
		return ""
	}
	d.n += n
	s := string(d.b[d.n : d.n+int(l)])
	d.n += int(l)
	return s
}

// used is the bytes read, 0 if a field did not decode.
func (d *rowDecoder) used() int {
	if d.failed {
		return 0
	}
	return d.n
}

// edgeStream reads one chunk's edge range of an edge file sequentially.
type edgeStream struct {
	f    storage.File
	r    *bufio.Reader
	left int64 // records not yet read
	cur  records.Candidate
	rec  [edgeRecord]byte
}

// openEdges opens an edge range, after checking its geometry and, in a
// first pass, its checksum: a damaged range fails before any of its
// records is used.
func openEdges(ctx context.Context, st storage.Opener, info pqfile.Info) (*edgeStream, error) {
	f, err := st.Open(ctx, info.Name)
	if err != nil {
		return nil, err
	}
	if info.Offset < 0 || info.Bytes < 0 || info.Offset+info.Bytes > f.Size() || info.Bytes != edgeRecord*info.Rows {
		f.Close()
		return nil, fmt.Errorf("%s: range %d+%d of %d rows does not fit its %d bytes: %w", info.Name, info.Offset, info.Bytes, info.Rows, f.Size(), pqfile.ErrCorrupt)
	}
	h := xxhash.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, info.Offset, info.Bytes)); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", info.Name, err)
	}
	if sum := h.Sum64(); sum != info.Checksum {
		f.Close()
		return nil, fmt.Errorf("%s: range %d+%d has checksum %x, want %x: %w", info.Name, info.Offset, info.Bytes, sum, info.Checksum, pqfile.ErrCorrupt)
	}
	return &edgeStream{f: f, r: bufio.NewReaderSize(io.NewSectionReader(f, info.Offset, info.Bytes), 16<<10), left: info.Rows}, nil
}

// next reads the next edge into s.cur; false at the end of the range.
func (s *edgeStream) next() (bool, error) {
	if s.left == 0 {
		return false, nil
	}
	if _, err := io.ReadFull(s.r, s.rec[:]); err != nil {
		return false, err
	}
	s.left--
	s.cur = records.Candidate{
		A:    int64(binary.LittleEndian.Uint64(s.rec[:])),
		B:    int64(binary.LittleEndian.Uint64(s.rec[8:])),
		Band: int32(binary.LittleEndian.Uint32(s.rec[16:])),
	}
	return true, nil
}

// edgeMerger merges the sorted edge ranges of one chunk, from every
// partition, in (a, b, band) order, without holding them.
type edgeMerger struct {
	h edgeHeap
}

type edgeHeap []*edgeStream

func (h edgeHeap) Len() int           { return len(h) }
func (h edgeHeap) Less(i, j int) bool { return compareEdge(h[i].cur, h[j].cur) < 0 }
func (h edgeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *edgeHeap) Push(x any)        { *h = append(*h, x.(*edgeStream)) }
func (h *edgeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// mergeEdges opens the ranges; close must be called.
func mergeEdges(ctx context.Context, st storage.Opener, infos []pqfile.Info) (*edgeMerger, error) {
	m := &edgeMerger{}
	for _, info := range infos {
		s, err := openEdges(ctx, st, info)
		if err != nil {
			m.close()
			return nil, err
		}
		ok, err := s.next()
		if err != nil {
			s.f.Close()
			m.close()
			return nil, fmt.Errorf("%s: %w", info.Name, err)
		}
		if !ok {
			s.f.Close()
			continue
		}
		m.h = append(m.h, s)
	}
	heap.Init(&m.h)
	return m, nil
}

// next returns the smallest edge not yet returned; false when none is left.
func (m *edgeMerger) next() (records.Candidate, bool, error) {
	if len(m.h) == 0 {
		return records.Candidate{}, false, nil
	}
	s := m.h[0]
	e := s.cur
	ok, err := s.next()
	if err != nil {
		return e, false, err
	}
	if ok {
		heap.Fix(&m.h, 0)
	} else {
		heap.Pop(&m.h)
		s.f.Close()
	}
	return e, true, nil
}

func (m *edgeMerger) close() {
	for _, s := range m.h {
		s.f.Close()
	}
	m.h = nil
}
