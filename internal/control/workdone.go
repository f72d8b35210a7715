package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/storage"
)

// workDone is the content of job.WorkDoneFile: what goes with the work
// area once the job is finished.
type workDone struct {
	// Remove are more names of the output to remove (the index, of a job
	// run with --index=false), before the work area.
	Remove []string `json:"remove,omitempty"`
	// CacheStore is the embedded NATS store of an object-store output,
	// kept in the user's cache directory, not in the work area ("" for
	// none).
	CacheStore string `json:"cache_store,omitempty"`
}

// markWorkDone writes job.WorkDoneFile for a job finishing with params
// under cfg, unless the work area is kept (cfg.KeepWork): it must be in
// place before the job's marker (_SUCCESS or _PARTIAL), so that a process
// stopped after the marker leaves a work area that a later command knows
// to remove.
func markWorkDone(ctx context.Context, st *storage.Dir, cfg Config, params job.Params) error {
	if cfg.KeepWork {
		return nil
	}
	var d workDone
	if !params.Index {
		d.Remove = append(d.Remove, job.IndexDir)
	}
	if cfg.NATSURL == "" && cfg.NATSStore == "" && !st.Local() {
		d.CacheStore = natsStore(cfg, st)
	}
	data, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return storage.WriteFile(ctx, st, job.WorkDoneFile, data)
}

// removeDoneWork removes the work area of the finished job in st, and
// what its job.WorkDoneFile lists, the work area last (with the file in
// it): a removal cut short is done again by the next. found is false when
// st holds no such file (no work area, or one kept with --keep-work),
// which leaves st as it is.
func removeDoneWork(ctx context.Context, st *storage.Dir) (found bool, err error) {
	data, err := storage.ReadFile(ctx, st, job.WorkDoneFile)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var d workDone
	if err := json.Unmarshal(data, &d); err != nil {
		return true, fmt.Errorf("%s: %w", job.WorkDoneFile, err)
	}
	var errs []error
	for _, name := range d.Remove {
		if name == job.IndexDir { // the only name markWorkDone writes
			errs = append(errs, st.Remove(ctx, name))
		}
	}
	if d.CacheStore != "" && d.CacheStore == natsStore(Config{}, st) {
		errs = append(errs, os.RemoveAll(d.CacheStore))
	}
	if err := errors.Join(errs...); err != nil {
		return true, err
	}
	return true, st.Remove(ctx, job.WorkDir)
}

// cleanStaleWork removes the work area a finished job in st left (see
// removeDoneWork), saying so on log: a run stopped after the job's marker
// and before its cleanup leaves it, and the next command that finds the
// job finished removes it.
func cleanStaleWork(ctx context.Context, st *storage.Dir, log *slog.Logger) {
	found, err := removeDoneWork(ctx, st)
	switch {
	case err != nil:
		log.Warn("the finished job's work area, left by a run stopped before removing it, could not be removed", "out", st.Root(), "err", err)
	case found:
		log.Info("removed the finished job's work area, left by a run stopped before removing it", "out", st.Root(), "dir", job.WorkDir)
	}
}
