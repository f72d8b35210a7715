package index

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// WriteVersion2Bands rewrites the bands/ files of the index ix at st in
// the layout of index versions 1 and 2 (a file per chunk and partition,
// listed in index/parts/), and ix without its list of band files
// (BandsLayout 0): what builds before BandsLayoutTasks wrote, for tests
// of the readers of either layout. It removes the files it replaces.
func WriteVersion2Bands(ctx context.Context, st storage.FS, ix *Index) error {
	if ix.BandsLayout != BandsLayoutTasks {
		return fmt.Errorf("%s: bands layout %d, not %d", job.IndexFile, ix.BandsLayout, BandsLayoutTasks)
	}
	for part := range ix.Params.Partitions {
		byChunk := map[int][]records.BandRecord{}
		for _, f := range BandFilesOf(ix.BandFiles, part) {
			recs, err := ReadBandPart(ctx, st, f.File, part)
			if err != nil {
				return err
			}
			for _, r := range recs {
				byChunk[job.ChunkOf(r.Doc)] = append(byChunk[job.ChunkOf(r.Doc)], r)
			}
		}
		entries := []PartEntry{}
		for _, c := range slices.Sorted(maps.Keys(byChunk)) {
			info, err := pqfile.Write(ctx, st, job.BandFile(part, c), byChunk[c], BandOptions())
			if err != nil {
				return err
			}
			entries = append(entries, PartEntry{Chunk: c, File: &info})
		}
		if err := storage.WriteJSON(ctx, st, job.TaskInputFile(job.InputsReduce, part), entries, false); err != nil {
			return err
		}
	}
	replaced := ix.BandFiles
	ix.BandsLayout, ix.BandFiles = 0, nil
	if err := Write(ctx, st, ix); err != nil {
		return err
	}
	for _, f := range replaced {
		if err := st.Remove(ctx, f.File.Name); err != nil {
			return err
		}
	}
	return nil
}
