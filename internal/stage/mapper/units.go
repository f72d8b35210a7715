package mapper

import (
	"math"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/paragraph"
	"github.com/neardup/neardup/pkg/bands"
	"github.com/neardup/neardup/pkg/records"
)

// unitCutter cuts a chunk's documents into the paragraph pass's units
// (--paragraphs) and holds a record for each: in the layout of a band
// record, its unit index as the band, its hash as the key (which
// partitions it, as a band key is), its place in the text
// (paragraph.Unit.Place) as FPHi. A document holding one unit twice has
// two records of one key and document, told apart by their index.
type unitCutter struct {
	cut *paragraph.Cutter
}

func newUnitCutter(p job.Params) (*unitCutter, error) {
	c, err := paragraph.NewCutter(p.ParagraphUnit, p.ShingleOptions())
	if err != nil {
		return nil, err
	}
	return &unitCutter{cut: c}, nil
}

// add cuts the text of document ord into units and appends their
// records to parts, by partition. Units past index MaxInt32 (a text of
// two billion lines) are not recorded.
func (u *unitCutter) add(text []byte, ord int64, parts [][]records.BandRecord, res *job.MapResult) error {
	return u.cut.Cut(string(text), func(un paragraph.Unit) error {
		if un.Index > math.MaxInt32 {
			return nil
		}
		part := bands.Partition(un.Hash, len(parts))
		parts[part] = append(parts[part], records.BandRecord{Band: int32(un.Index), Key: int64(un.Hash), Doc: ord, FPHi: un.Place()})
		res.Units++
		res.UnitBytes += int64(un.Length)
		return nil
	})
}
