package mapper

import (
	"slices"

	"github.com/neardup/neardup/internal/job"
)

// slimMaps is the map results without their band files, which only the
// reduce tasks read (through reduceInputs): what gather, verify and the
// cluster stage's workers load.
func slimMaps(maps []job.MapResult) []job.MapResult {
	out := slices.Clone(maps)
	for i := range out {
		out[i].BandFiles, out[i].BandRunFiles, out[i].IDRunFiles, out[i].UnitRunFiles = nil, nil, nil, nil
	}
	return out
}
