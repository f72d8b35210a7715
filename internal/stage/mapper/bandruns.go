package mapper

import (
	"context"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/workfile"
	"github.com/neardup/neardup/pkg/bands"
	"github.com/neardup/neardup/pkg/records"
)

// bandRuns holds a chunk's band records until about ChunkBytes of text
// (at most job.RunText) has been read, then writes them, sorted, as a
// run: one band run file holding every partition (job.BandRunWorkFile).
// With them go the documents' id records (see idRecord), to an id run
// file (job.IDRunWorkFile).
type bandRuns struct {
	st    storage.Creator
	chunk int
	parts [][]records.BandRecord
	ids   [][]records.BandRecord // by partition, as parts
	// units are the unit records of the paragraph pass, by partition;
	// nil without it.
	units   [][]records.BandRecord
	unitRun int
	// unitName names a unit run file: job.UnitRunWorkFile when nil.
	unitName func(chunk, run int) string
	res      *job.MapResult
	run      int
	idRun    int
	text     int64 // of the documents in parts
	// scratch is the sort's (sortBandRecords).
	scratch []records.BandRecord
}

// idSeed seeds the second hash of a document's id (idRecord).
const idSeed = 0x6e64_6964 // "ndid"

// addID holds the id record of document ord, whose id is id.
func (r *bandRuns) addID(id string, ord int64) {
	rec := idRecord(id, ord)
	part := bands.Partition(uint64(rec.Key), len(r.ids))
	r.ids[part] = append(r.ids[part], rec)
}

// idRecord is a document's id as a band record of band 0: its key a
// 64-bit hash of the id (which partitions it), its FPHi another, seeded
// otherwise. A reduce task counts the documents of its partitions whose
// two hashes equal those of another: documents of one id (see
// countDuplicateIDs); only this pass holds every document's id, in
// memory bounded by a run's.
func idRecord(id string, ord int64) records.BandRecord {
	var d xxhash.Digest
	d.ResetWithSeed(idSeed)
	d.WriteString(id)
	return records.BandRecord{Key: int64(xxhash.Sum64String(id)), Doc: ord, FPHi: int64(d.Sum64())}
}

// flush writes the records held as the next run, then the id records
// as the next id run.
func (r *bandRuns) flush(ctx context.Context) error {
	r.text = 0
	info, err := r.writeRun(ctx, r.parts, job.BandRunWorkFile(r.chunk, r.run))
	if err != nil {
		return err
	}
	if info != nil {
		r.res.BandRunFiles = append(r.res.BandRunFiles, *info)
		r.res.BandRecords += info.Rows
		r.run++
	}
	if info, err = r.writeRun(ctx, r.ids, job.IDRunWorkFile(r.chunk, r.idRun)); err != nil {
		return err
	}
	if info != nil {
		r.res.IDRunFiles = append(r.res.IDRunFiles, *info)
		r.idRun++
	}
	if r.units == nil {
		return nil
	}
	name := job.UnitRunWorkFile
	if r.unitName != nil {
		name = r.unitName
	}
	if info, err = r.writeRun(ctx, r.units, name(r.chunk, r.unitRun)); err != nil {
		return err
	}
	if info != nil {
		r.res.UnitRunFiles = append(r.res.UnitRunFiles, *info)
		r.unitRun++
	}
	return nil
}

// writeRun sorts the records of parts, by partition, writes them to the
// run file name and empties parts; nil when it held none.
func (r *bandRuns) writeRun(ctx context.Context, parts [][]records.BandRecord, name string) (*fileinfo.Info, error) {
	n := 0
	for _, recs := range parts {
		r.scratch = workfile.SortBandRecords(recs, r.scratch)
		n += len(recs)
	}
	if n == 0 {
		return nil, nil
	}
	info, err := workfile.WriteBandRun(ctx, r.st, name, r.chunk, parts)
	if err != nil {
		return nil, err
	}
	for part := range parts {
		parts[part] = parts[part][:0]
	}
	return &info, nil
}

// finish writes the last run.
func (r *bandRuns) finish(ctx context.Context) error { return r.flush(ctx) }
