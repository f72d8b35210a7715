package stage

import (
	"context"

	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
)

// A dataset whose tasks wrote no file (no record rejected, no pair
// found, no document with shingles) still holds one file, empty, with
// the dataset's schema, so that every query over it runs: read_parquet of
// a glob that matches nothing fails. That file takes the name the first
// chunk (and first partition) would give it, so a dataset has files of
// one naming scheme only.

// completeDataset writes name, empty, when its dataset has no file
// (written false); otherwise it removes name unless a task wrote it
// (own).
func CompleteDataset[T any](ctx context.Context, st storage.FS, name string, o pqfile.Options, written, own bool) error {
	switch {
	case own:
		return nil
	case written:
		return st.Remove(ctx, name)
	}
	return WriteEmpty[T](ctx, st, name, o)
}

// writeEmpty writes name as a file of no rows of T.
func WriteEmpty[T any](ctx context.Context, st storage.Creator, name string, o pqfile.Options) error {
	_, err := pqfile.Write[T](ctx, st, name, nil, o)
	return err
}
