package stage

import (
	"context"
	"encoding/binary"
	"fmt"

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
	return writeRuns(ctx, st, name, edges, job.ChunkOf)
}

// writeRuns writes edges, sorted by key of their first document, to name
// as one run per key, and returns each key's range.
func writeRuns(ctx context.Context, st storage.Creator, name string, edges []records.Candidate, key func(int64) int) (map[int]pqfile.Info, error) {
	out := map[int]pqfile.Info{}
	if len(edges) == 0 {
		return out, nil
	}
	buf := make([]byte, 0, edgeRecord*len(edges))
	for lo := 0; lo < len(edges); {
		c := key(edges[lo].A)
		hi := lo
		start := len(buf)
		for hi < len(edges) && key(edges[hi].A) == c {
			e := edges[hi]
			buf = binary.LittleEndian.AppendUint64(buf, uint64(e.A))
			buf = binary.LittleEndian.AppendUint64(buf, uint64(e.B))
			buf = binary.LittleEndian.AppendUint32(buf, uint32(e.Band))
			hi++
		}
		if _, dup := out[c]; dup {
			return nil, fmt.Errorf("%s: the edges of run %d are not contiguous", name, c)
		}
		out[c] = pqfile.Info{Name: name, Rows: int64(hi - lo), Checksum: xxhash.Sum64(buf[start:]), Bytes: int64(len(buf) - start), Offset: int64(start)}
		lo = hi
	}
	if err := storage.WriteFile(ctx, st, name, buf); err != nil {
		return nil, err
	}
	return out, nil
}

// readEdges appends the edges of one chunk's range to dst.
func readEdges(ctx context.Context, st storage.Opener, info pqfile.Info, dst []records.Candidate) ([]records.Candidate, error) {
	f, err := st.Open(ctx, info.Name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info.Offset < 0 || info.Bytes < 0 || info.Offset+info.Bytes > f.Size() || info.Bytes != edgeRecord*info.Rows {
		return nil, fmt.Errorf("%s: range %d+%d of %d rows does not fit its %d bytes: %w", info.Name, info.Offset, info.Bytes, info.Rows, f.Size(), pqfile.ErrCorrupt)
	}
	buf := make([]byte, info.Bytes)
	if _, err := f.ReadAt(buf, info.Offset); err != nil {
		return nil, fmt.Errorf("%s: %w", info.Name, err)
	}
	if sum := xxhash.Sum64(buf); sum != info.Checksum {
		return nil, fmt.Errorf("%s: range %d+%d has checksum %x, want %x: %w", info.Name, info.Offset, info.Bytes, sum, info.Checksum, pqfile.ErrCorrupt)
	}
	for b := buf; len(b) > 0; b = b[edgeRecord:] {
		dst = append(dst, records.Candidate{
			A:    int64(binary.LittleEndian.Uint64(b)),
			B:    int64(binary.LittleEndian.Uint64(b[8:])),
			Band: int32(binary.LittleEndian.Uint32(b[16:])),
		})
	}
	return dst, nil
}
