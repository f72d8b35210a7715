package stage

import (
	"context"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// A dataset whose tasks wrote no file (no record rejected, no pair
// found, no document with shingles) still holds one file, empty, with
// the dataset's schema, so that every query over it runs: read_parquet of
// a glob that matches nothing fails. That file takes the name the first
// chunk (and first partition) would give it, so a dataset has files of
// one naming scheme only.

// rejectOptions are the options of every rejects/ file.
func rejectOptions() pqfile.Options { return pqfile.Options{} }

// bandOptions are the options of every bands/ file.
func bandOptions() pqfile.Options {
	return pqfile.Options{SortedBy: []string{"band", "key", "doc"}, Raw: true}
}

// pairOptions are the options of every pairs/ file.
func pairOptions() pqfile.Options {
	return pqfile.Options{SortedBy: []string{"a", "b"}, RowGroupRows: pairsGroupRows, Dict: []string{"a_url", "b_url"}}
}

// CompleteMapOutputs gives rejects/ its empty file when no map task of
// maps wrote one and planning rejected no file (planned: see
// WritePlannedRejects), as above. When some did, it removes an empty
// file an earlier run left there (before retried chunks brought rows),
// unless that name is a file of this run's own task. (Every reduce task
// writes its bands/ file, rows or none.)
func CompleteMapOutputs(ctx context.Context, st storage.FS, maps []job.MapResult, planned bool) error {
	rejects, ownReject := planned, false
	for _, m := range maps {
		rejects = rejects || m.RejectFile != nil
		if m.Chunk == 0 {
			ownReject = m.RejectFile != nil
		}
	}
	return completeDataset[records.RejectRecord](ctx, st, job.RejectFile(0), rejectOptions(), rejects, ownReject)
}

// completeDataset writes name, empty, when its dataset has no file
// (written false); otherwise it removes name unless a task wrote it
// (own).
func completeDataset[T any](ctx context.Context, st storage.FS, name string, o pqfile.Options, written, own bool) error {
	switch {
	case own:
		return nil
	case written:
		return st.Remove(ctx, name)
	}
	return writeEmpty[T](ctx, st, name, o)
}

// writeEmpty writes name as a file of no rows of T.
func writeEmpty[T any](ctx context.Context, st storage.Creator, name string, o pqfile.Options) error {
	_, err := pqfile.Write[T](ctx, st, name, nil, o)
	return err
}

// WritePlannedRejects writes job.PlannedRejectFile, listing the files
// planning found under the inputs that are not regular files (see
// job.Skipped), and tells whether it did: a plan without any writes
// nothing.
func WritePlannedRejects(ctx context.Context, st storage.Creator, plan *job.Plan) (bool, error) {
	var rows []records.RejectRecord
	for _, sk := range plan.Skipped {
		if sk.Rejected {
			rows = append(rows, records.RejectRecord{Chunk: -1, File: sk.Path, Offset: -1, Reason: sk.Reason})
		}
	}
	if len(rows) == 0 {
		return false, nil
	}
	_, err := pqfile.Write(ctx, st, job.PlannedRejectFile, rows, rejectOptions())
	return err == nil, err
}
