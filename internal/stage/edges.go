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
// they skip Parquet's per-file cost.
const edgeRecord = 20

// writeEdges writes edges, sorted by the chunk of their first document,
// to name, and returns each chunk's range.
func writeEdges(ctx context.Context, st storage.Creator, name string, edges []records.Candidate) (map[int]pqfile.Info, error) {
	out := map[int]pqfile.Info{}
	if len(edges) == 0 {
		return out, nil
	}
	buf := make([]byte, 0, edgeRecord*len(edges))
	for lo := 0; lo < len(edges); {
		c := job.ChunkOf(edges[lo].A)
		hi := lo
		start := len(buf)
		for hi < len(edges) && job.ChunkOf(edges[hi].A) == c {
			e := edges[hi]
			buf = binary.LittleEndian.AppendUint64(buf, uint64(e.A))
			buf = binary.LittleEndian.AppendUint64(buf, uint64(e.B))
			buf = binary.LittleEndian.AppendUint32(buf, uint32(e.Band))
			hi++
		}
		if _, dup := out[c]; dup {
			return nil, fmt.Errorf("%s: the edges of chunk %d are not contiguous", name, c)
		}
		out[c] = pqfile.Info{Name: name, Rows: int64(hi - lo), Checksum: xxhash.Sum64(buf[start:]), Bytes: int64(len(buf) - start), Offset: int64(start)}
		lo = hi
	}
	if err := storage.WriteFile(ctx, st, name, buf); err != nil {
		return nil, err
	}
	return out, nil
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
