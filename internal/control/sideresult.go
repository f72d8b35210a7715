package control

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
)

// Task results travel in the job's NATS bucket, whose messages are bounded
// (1 MiB by default). A result larger than sideResultBytes (a reduce
// task's edge and request ranges for thousands of chunks, a map task's
// band files for thousands of partitions) is written to a file in the work
// area instead, and the bucket holds a reference to it with its size and
// checksum.
const sideResultBytes = 256 << 10

// sideResult is the reference a result too large for the bucket leaves
// there.
type sideResult struct {
	ResultFile *fileinfo.Info `json:"result_file"`
}

// storeResult returns what the bucket holds of a task's result: the result
// itself, or, if it has more than limit bytes, a reference to the file it
// was written to.
func storeResult(ctx context.Context, st storage.Creator, t Task, data []byte, limit int) ([]byte, error) {
	if len(data) <= limit {
		return data, nil
	}
	name := job.ResultFile(t.Epoch, t.Stage, t.Index)
	if err := storage.WriteFile(ctx, st, name, data); err != nil {
		return nil, err
	}
	return json.Marshal(sideResult{ResultFile: &fileinfo.Info{Name: name, Bytes: int64(len(data)), Checksum: xxhash.Sum64(data)}})
}

// loadResult returns the result a bucket value stands for, reading it from
// its file if it is a reference, checked against the size and checksum
// the reference records.
func loadResult(ctx context.Context, st storage.Opener, value []byte) ([]byte, error) {
	if !bytes.Contains(value, []byte(`"result_file"`)) {
		return value, nil
	}
	var ref sideResult
	if err := json.Unmarshal(value, &ref); err != nil || ref.ResultFile == nil {
		return value, nil // a result of its own
	}
	data, err := storage.ReadFile(ctx, st, ref.ResultFile.Name)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) != ref.ResultFile.Bytes || xxhash.Sum64(data) != ref.ResultFile.Checksum {
		return nil, fmt.Errorf("%s: %d bytes with checksum %x, want %d with %x: %w", ref.ResultFile.Name, len(data), xxhash.Sum64(data), ref.ResultFile.Bytes, ref.ResultFile.Checksum, pqfile.ErrCorrupt)
	}
	return data, nil
}
