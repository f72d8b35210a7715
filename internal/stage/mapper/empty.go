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
// maps wrote one (see above). When some task did, it removes an empty
// file an earlier run left there (before retried chunks brought rows),
// unless that name is a file of this run's own task. (Every reduce task
// writes its bands/ file, rows or none.)
func CompleteMapOutputs(ctx context.Context, st storage.FS, maps []job.MapResult) error {
	var rejects, ownReject bool
	for _, m := range maps {
		rejects = rejects || m.RejectFile != nil
		if m.Chunk == 0 {
			ownReject = m.RejectFile != nil
		}
	}
	return stage.CompleteDataset[records.RejectRecord](ctx, st, job.RejectFile(0), rejectOptions(), rejects, ownReject)
}
