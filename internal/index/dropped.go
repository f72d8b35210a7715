package index

import (
	"context"
	"fmt"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// WriteDropped writes, for each chunk of ix, the list of its documents
// the job dropped (job.DroppedFile: the chunk's rows of
// duplicates.parquet, which is sorted by document), and records it in
// ix: a later job matched against the index learns from it which of its
// documents were never published, and which document was kept in their
// place, without holding them all (one chunk's list at a time). It reads
// duplicates.parquet once, holding one row group.
func WriteDropped(ctx context.Context, st storage.FS, ix *Index) error {
	chunkAt := map[int]int{}
	for i := range ix.Chunks {
		ix.Chunks[i].Dropped = &job.DroppedList{}
		chunkAt[ix.Chunks[i].Chunk] = i
	}
	var w *pqfile.Writer[records.Duplicate]
	cur := -1 // the chunk w writes
	finish := func() error {
		if w == nil {
			return nil
		}
		info, err := w.Close()
		w = nil
		if err != nil {
			return err
		}
		l := ix.Chunks[chunkAt[cur]].Dropped
		l.File, l.Docs = &info, info.Rows
		return nil
	}
	err := pqfile.Stream(ctx, st, job.DuplicatesFile, nil, 4096, func(rows []records.Duplicate) error {
		for lo := 0; lo < len(rows); {
			c := job.ChunkOf(rows[lo].Doc)
			hi := lo
			for hi < len(rows) && job.ChunkOf(rows[hi].Doc) == c {
				hi++
			}
			if c != cur {
				if _, ok := chunkAt[c]; !ok || c < cur {
					return fmt.Errorf("%s: document %d is of chunk %d, not one of the job's after chunk %d", job.DuplicatesFile, rows[lo].Doc, c, cur)
				}
				if err := finish(); err != nil {
					return err
				}
				var err error
				if w, err = pqfile.NewWriter[records.Duplicate](ctx, st, job.DroppedFile(c), pqfile.Sorted("doc")); err != nil {
					return err
				}
				cur = c
			}
			if err := w.Write(rows[lo:hi]); err != nil {
				return err
			}
			lo = hi
		}
		return nil
	})
	if err == nil {
		err = finish()
	}
	if w != nil {
		w.Abort()
	}
	if err != nil {
		return fmt.Errorf("index: the documents dropped: %w", err)
	}
	return nil
}
