package mapper

import (
	"context"

	"github.com/neardup/neardup/internal/stage"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// rejectOptions are the options of every rejects/ file.
func rejectOptions() pqfile.Options { return pqfile.Options{} }

// CompleteMapOutputs gives rejects/ its empty file when no map task of
// maps wrote one and planning rejected no file (planned: see
// WritePlannedRejects), as stage.CompleteDataset says. When some did, it removes an empty
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
	return stage.CompleteDataset[records.RejectRecord](ctx, st, job.RejectFile(0), rejectOptions(), rejects, ownReject)
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
