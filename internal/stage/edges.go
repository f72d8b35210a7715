package stage

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// Edge files carry candidate pairs from reduce to verify inside the work
// area: fixed 20-byte little-endian records (a, b, band), checked against
// the size, row count and xxhash their writer recorded. Thousands of them
// are read per job, so they skip Parquet's per-file cost.
const edgeRecord = 20

func writeEdges(ctx context.Context, st storage.FS, name string, edges []records.Candidate) (pqfile.Info, error) {
	buf := make([]byte, 0, edgeRecord*len(edges))
	for _, e := range edges {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(e.A))
		buf = binary.LittleEndian.AppendUint64(buf, uint64(e.B))
		buf = binary.LittleEndian.AppendUint32(buf, uint32(e.Band))
	}
	if err := storage.WriteFile(ctx, st, name, buf); err != nil {
		return pqfile.Info{}, err
	}
	return pqfile.Info{Name: name, Rows: int64(len(edges)), Checksum: xxhash.Sum64(buf), Bytes: int64(len(buf))}, nil
}

func readEdges(ctx context.Context, st storage.FS, info pqfile.Info, dst []records.Candidate) ([]records.Candidate, error) {
	buf, err := storage.ReadFile(ctx, st, info.Name)
	if err != nil {
		return nil, err
	}
	if int64(len(buf)) != info.Bytes || int64(len(buf)) != edgeRecord*info.Rows || xxhash.Sum64(buf) != info.Checksum {
		return nil, fmt.Errorf("%s: %d bytes, checksum %x; want %d rows, %d bytes, checksum %x: %w",
			info.Name, len(buf), xxhash.Sum64(buf), info.Rows, info.Bytes, info.Checksum, pqfile.ErrCorrupt)
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
