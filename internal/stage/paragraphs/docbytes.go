package paragraphs

import (
	"cmp"
	"context"
	"slices"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/paragraph"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// appendHeld appends to held the document and bytes of every occurrence
// of a repeated unit, its records group: all of them, those --max-bucket
// leaves out of paragraphs/ too (a record is 16 bytes here against the
// task's 32 of the unit record itself).
func appendHeld(held []job.DocBytes, group []records.BandRecord) []job.DocBytes {
	for _, r := range group {
		_, n := paragraph.FromPlace(r.FPHi)
		held = append(held, job.DocBytes{Doc: r.Doc, Bytes: int64(n)})
	}
	return held
}

// writeDocBytes sums held by document and writes the sums, by document,
// to name.
func writeDocBytes(ctx context.Context, st storage.Creator, name string, held []job.DocBytes) (fileinfo.Info, error) {
	slices.SortFunc(held, func(a, b job.DocBytes) int { return cmp.Compare(a.Doc, b.Doc) })
	sums := held[:0]
	for _, h := range held {
		if n := len(sums); n > 0 && sums[n-1].Doc == h.Doc {
			sums[n-1].Bytes += h.Bytes
			continue
		}
		sums = append(sums, h)
	}
	return pqfile.Write(ctx, st, name, sums, pqfile.Sorted("doc"))
}
