package workfile

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// edgeRecord is the size of an edge in an edge file (see the package
// doc): a few edge files are read per verify task, so they skip
// Parquet's per-file cost.
const edgeRecord = 20

// WriteEdges writes edges, sorted by the chunk of their first document,
// to name, and returns each chunk's range.
func WriteEdges(ctx context.Context, st storage.Creator, name string, edges []records.Candidate) (map[int]fileinfo.Info, error) {
	return WriteEdgeRuns(ctx, st, name, edges, job.ChunkOf)
}

// WriteEdgeRuns writes edges, sorted by key of their first document, to name
// as one run per key, and returns each key's range.
func WriteEdgeRuns(ctx context.Context, st storage.Creator, name string, edges []records.Candidate, key func(int64) int) (map[int]fileinfo.Info, error) {
	return WriteRuns(ctx, st, name, edges, func(e records.Candidate) int { return key(e.A) }, appendEdge)
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

// ReadEdges appends the edges of one chunk's range to dst.
func ReadEdges(ctx context.Context, st storage.Opener, info fileinfo.Info, dst []records.Candidate) ([]records.Candidate, error) {
	if !holdsRecords(info, edgeRecord) {
		return nil, fmt.Errorf("%s: range %d+%d does not hold %d rows: %w", info.Name, info.Offset, info.Bytes, info.Rows, ErrCorrupt)
	}
	return ReadRun(ctx, st, info, decodeEdge, dst)
}

// WriteRuns writes rows, sorted by key, to name as one run per key, each
// row encoded by enc, and returns each key's range: its offset, size, row
// count and xxhash, which ReadRun checks. The rows are encoded and
// written a block at a time, not held encoded whole (a reduce partition's
// edges are megabytes).
func WriteRuns[T any](ctx context.Context, st storage.Creator, name string, rows []T, key func(T) int, enc func([]byte, T) []byte) (map[int]fileinfo.Info, error) {
	out := map[int]fileinfo.Info{}
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
		out[k] = fileinfo.Info{Name: name, Rows: int64(hi - lo), Checksum: rw.sum.Sum64(), Bytes: rw.off - start, Offset: start}
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

// runBlock is about the bytes WriteRuns encodes before it writes them.
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

// ReadRun appends the rows of one run to dst, each decoded by dec,
// which returns the bytes it used (0 for bytes that are no row).
func ReadRun[T any](ctx context.Context, st storage.Opener, info fileinfo.Info, dec func([]byte) (T, int), dst []T) ([]T, error) {
	f, err := st.Open(ctx, info.Name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if !inFile(info, f.Size()) {
		return nil, fmt.Errorf("%s: range %d+%d of %d rows does not fit its %d bytes: %w", info.Name, info.Offset, info.Bytes, info.Rows, f.Size(), ErrCorrupt)
	}
	buf := make([]byte, info.Bytes)
	if err := readAt(f, buf, info.Offset); err != nil {
		return nil, fmt.Errorf("%s: %w", info.Name, err)
	}
	if sum := xxhash.Sum64(buf); sum != info.Checksum {
		return nil, fmt.Errorf("%s: range %d+%d has checksum %x, want %x: %w", info.Name, info.Offset, info.Bytes, sum, info.Checksum, ErrCorrupt)
	}
	var rows int64
	for b := buf; len(b) > 0; rows++ {
		r, n := dec(b)
		if n <= 0 {
			return nil, fmt.Errorf("%s: range %d+%d: row %d does not decode: %w", info.Name, info.Offset, info.Bytes, rows, ErrCorrupt)
		}
		dst = append(dst, r)
		b = b[n:]
	}
	if rows != info.Rows {
		return nil, fmt.Errorf("%s: range %d+%d holds %d rows, want %d: %w", info.Name, info.Offset, info.Bytes, rows, info.Rows, ErrCorrupt)
	}
	return dst, nil
}

// DecodeRow returns a RowDecoder of the fields of b.
func DecodeRow(b []byte) RowDecoder { return RowDecoder{b: b} }

// AppendString appends s, its length first.
func AppendString(buf []byte, s string) []byte {
	return append(binary.AppendUvarint(buf, uint64(len(s))), s...)
}

// RowDecoder reads the fields appended by binary.AppendVarint and
// appendString; a field that does not decode leaves it failed.
type RowDecoder struct {
	b      []byte
	n      int
	failed bool
}

// Int reads a varint.
func (d *RowDecoder) Int() int64 {
	v, n := binary.Varint(d.b[d.n:])
	if n <= 0 {
		d.failed = true
		return 0
	}
	d.n += n
	return v
}

// String reads a string AppendString appended.
func (d *RowDecoder) String() string {
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

// Used is the bytes read, 0 if a field did not decode.
func (d *RowDecoder) Used() int {
	if d.failed {
		return 0
	}
	return d.n
}

// edgeStream reads one chunk's edge range of an edge file sequentially,
// edgeStreamRecords records a read.
type edgeStream struct {
	f    storage.File
	r    io.Reader
	left int64  // records not yet decoded
	buf  []byte // records read, decoded up to pos
	pos  int
	cur  records.Candidate
}

// edgeStreamRecords is the records an edgeStream reads at once (16 KB).
const edgeStreamRecords = 819

// openEdges opens an edge range, after checking its geometry and, in a
// first pass, its checksum: a damaged range fails before any of its
// records is used.
func openEdges(ctx context.Context, st storage.Opener, info fileinfo.Info) (*edgeStream, error) {
	f, err := st.Open(ctx, info.Name)
	if err != nil {
		return nil, err
	}
	if !inFile(info, f.Size()) || !holdsRecords(info, edgeRecord) {
		f.Close()
		return nil, fmt.Errorf("%s: range %d+%d of %d rows does not fit its %d bytes: %w", info.Name, info.Offset, info.Bytes, info.Rows, f.Size(), ErrCorrupt)
	}
	h := xxhash.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, info.Offset, info.Bytes)); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", info.Name, err)
	}
	if sum := h.Sum64(); sum != info.Checksum {
		f.Close()
		return nil, fmt.Errorf("%s: range %d+%d has checksum %x, want %x: %w", info.Name, info.Offset, info.Bytes, sum, info.Checksum, ErrCorrupt)
	}
	return &edgeStream{f: f, r: io.NewSectionReader(f, info.Offset, info.Bytes), left: info.Rows}, nil
}

// next reads the next edge into s.cur; false at the end of the range.
func (s *edgeStream) next() (bool, error) {
	if s.left == 0 {
		return false, nil
	}
	if s.pos == len(s.buf) {
		// The range holds left whole records: read as many as fit.
		n := edgeRecord * int(min(s.left, edgeStreamRecords))
		if cap(s.buf) < n {
			s.buf = make([]byte, n)
		}
		s.buf, s.pos = s.buf[:n], 0
		if _, err := io.ReadFull(s.r, s.buf); err != nil {
			return false, err
		}
	}
	s.cur, _ = decodeEdge(s.buf[s.pos:])
	s.pos += edgeRecord
	s.left--
	return true, nil
}

// EdgeMerger merges the sorted edge ranges of one chunk, from every
// partition, in (a, b, band) order, without holding them: a tree of
// losers over the streams, which takes log2(streams) comparisons an edge
// (5 for 32 partitions), about half a binary heap's, each without a
// branch (see edgeKey): the merge of a template family's pairs, each in
// about 7 partitions, mispredicts most of them otherwise.
//
// It is Merge specialised to edges, kept for its speed on the verify
// stage's hot path: BenchmarkMergeEdges, 6 runs of each interleaved on a
// shared 2-core machine (2026-11-28), gave medians of 27 ns an edge from
// 32 partitions (26-29) against 79 (73-93) for Merge over the same
// streams with CompareEdge (merger=generic), and 15 (13-16) against 30
// (29-40) from 4 (the binary heap it replaced took 97-101 from 32,
// measured then). Edges that compare equal are equal, so it need not be
// stable as Merge is.
type EdgeMerger struct {
	streams []*edgeStream
	keys    []edgeKey // each stream's current edge's; overKey once it is over
	// tree[0] is the stream of the least current edge; tree[n], for n in
	// 1..len(streams)-1, the stream that lost the match at node n, whose
	// children are 2n and 2n+1: node len(streams)+i is stream i.
	tree []int
}

// edgeKey is an edge as one 192-bit number, (a, b, band) from the most
// significant word, each flipped to order as its signed value: keys
// order as CompareEdge orders their edges.
type edgeKey struct{ a, b, band uint64 }

func keyOf(e records.Candidate) edgeKey {
	return edgeKey{uint64(e.A) ^ 1<<63, uint64(e.B) ^ 1<<63, uint64(uint32(e.Band) ^ 1<<31)}
}

// overKey is the key of a stream that is over: above every edge's, whose
// band word is at most 2^32-1.
func overKey() edgeKey { return edgeKey{math.MaxUint64, math.MaxUint64, math.MaxUint64} }

// before reports whether x < y, by subtraction with borrow.
func (x edgeKey) before(y edgeKey) bool { return x.borrow(y) != 0 }

// borrow is 1 if x < y, else 0.
func (x edgeKey) borrow(y edgeKey) uint64 {
	_, c := bits.Sub64(x.band, y.band, 0)
	_, c = bits.Sub64(x.b, y.b, c)
	_, c = bits.Sub64(x.a, y.a, c)
	return c
}

// edge returns the edge of key k.
func (k edgeKey) edge() records.Candidate {
	return records.Candidate{A: int64(k.a ^ 1<<63), B: int64(k.b ^ 1<<63), Band: int32(uint32(k.band) ^ 1<<31)}
}

// MergeEdges opens the ranges, each checked whole before any of its
// edges is used (see openEdges); Close must be called.
func MergeEdges(ctx context.Context, st storage.Opener, infos []fileinfo.Info) (*EdgeMerger, error) {
	m := &EdgeMerger{}
	for _, info := range infos {
		s, err := openEdges(ctx, st, info)
		if err != nil {
			m.Close()
			return nil, err
		}
		ok, err := s.next()
		if err != nil {
			s.f.Close()
			m.Close()
			return nil, fmt.Errorf("%s: %w", info.Name, err)
		}
		if !ok {
			s.f.Close()
			continue
		}
		m.streams = append(m.streams, s)
		m.keys = append(m.keys, keyOf(s.cur))
	}
	m.tree = make([]int, len(m.streams))
	playLosers(m.tree, func(x, y int) bool { return m.keys[x].before(m.keys[y]) })
	return m, nil
}

// Next returns the smallest edge not yet returned; false when none is left.
func (m *EdgeMerger) Next() (records.Candidate, bool, error) {
	if len(m.tree) == 0 {
		return records.Candidate{}, false, nil
	}
	w := m.tree[0]
	key := m.keys[w]
	if key == overKey() {
		return records.Candidate{}, false, nil
	}
	s := m.streams[w]
	ok, err := s.next()
	if err != nil {
		return key.edge(), false, err
	}
	if ok {
		m.keys[w] = keyOf(s.cur)
	} else {
		m.keys[w] = overKey()
		s.f.Close()
		m.streams[w] = nil
	}
	// The stream's next edge plays the matches on its way up; the winner
	// goes on, chosen by a mask rather than a branch.
	for n := (w + len(m.streams)) / 2; n > 0; n /= 2 {
		t := m.tree[n]
		swap := (w ^ t) & -int(m.keys[t].borrow(m.keys[w]))
		m.tree[n], w = t^swap, w^swap
	}
	m.tree[0] = w
	return key.edge(), true, nil
}

// Close closes the ranges still open.
func (m *EdgeMerger) Close() {
	for _, s := range m.streams {
		if s != nil {
			s.f.Close()
		}
	}
	m.streams, m.keys, m.tree = nil, nil, nil
}

// ClaimBand marks an edge that claims document B for the exact-duplicate
// group represented by A, rather than a candidate pair.
const ClaimBand = -1

// CompareEdge orders edges by (a, b, band), so that compacting on (a, b)
// keeps the lowest band.
func CompareEdge(a, b records.Candidate) int {
	if c := cmp.Compare(a.A, b.A); c != 0 {
		return c
	}
	if c := cmp.Compare(a.B, b.B); c != 0 {
		return c
	}
	return cmp.Compare(a.Band, b.Band)
}
