package workfile

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// Request asks for the record of Doc on behalf of the verify task of
// chunk Dest.
type Request struct {
	Doc  int64
	Dest int32
}

// requestRecord is the size of a request in a request file.
const requestRecord = 12

func appendRequest(buf []byte, r Request) []byte {
	buf = binary.LittleEndian.AppendUint64(buf, uint64(r.Doc))
	return binary.LittleEndian.AppendUint32(buf, uint32(r.Dest))
}

func decodeRequest(b []byte) (Request, int) {
	if len(b) < requestRecord {
		return Request{}, 0
	}
	return Request{Doc: int64(binary.LittleEndian.Uint64(b)), Dest: int32(binary.LittleEndian.Uint32(b[8:]))}, requestRecord
}

// CompareRequest orders requests by (verify chunk, document), the order
// of a request file's runs.
func CompareRequest(x, y Request) int {
	if c := cmp.Compare(x.Dest, y.Dest); c != 0 {
		return c
	}
	return cmp.Compare(x.Doc, y.Doc)
}

// WriteRequests writes the requests of edges, sorted by their first
// document (both documents, for the verify task of the first's chunk), to
// name, one run per chunk of the requested document, each sorted by
// (verify chunk, document) without repeats, and returns each chunk's
// range.
func WriteRequests(ctx context.Context, st storage.Creator, name string, edges []records.Candidate) (map[int]fileinfo.Info, error) {
	src := func(r Request) int { return job.ChunkOf(r.Doc) }
	return WriteRuns(ctx, st, name, EdgeRequests(edges), src, appendRequest)
}

// ReadRequests appends the requests of one range of a request file to dst.
func ReadRequests(ctx context.Context, st storage.Opener, info fileinfo.Info, dst []Request) ([]Request, error) {
	if !holdsRecords(info, requestRecord) {
		return nil, fmt.Errorf("%s: range %d+%d does not hold %d rows: %w", info.Name, info.Offset, info.Bytes, info.Rows, ErrCorrupt)
	}
	return ReadRun(ctx, st, info, decodeRequest, dst)
}
