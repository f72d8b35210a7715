package kept

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/storage"
)

// Marker is what MarkerFile holds: whose corpus the directory is.
type Marker struct {
	// Job is the job's output, as the writer named it.
	Job string `json:"job"`
	// Epoch is the epoch of the job whose write-kept stage writes the
	// corpus (job.Spec.Epoch); empty for `coordinator write-kept`.
	Epoch string `json:"epoch,omitempty"`
}

// Claim opens dir for a corpus written for m: an empty (or new) directory,
// one whose MarkerFile says it is m's corpus being written by the same
// epoch of a job (a job resumed: what its tasks wrote stays), or, with
// overwrite, one holding a corpus write-kept wrote (checkOwn), which it
// empties. Any other directory with files is refused (ErrNotEmpty). The
// directory's _SUCCESS and _PARTIAL go first: a corpus being written is
// never complete. Then MarkerFile is written, before any output.
func Claim(ctx context.Context, dir string, m Marker, overwrite bool) (*storage.Dir, error) {
	dst, err := storage.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	if err := claim(ctx, dir, dst, m, overwrite); err != nil {
		dst.Close()
		return nil, err
	}
	return dst, nil
}

// claim empties dst as Claim says and writes m as its marker.
func claim(ctx context.Context, dir string, dst *storage.Dir, m Marker, overwrite bool) error {
	names, err := dst.List(ctx, "")
	if err != nil {
		return err
	}
	if len(names) > 0 {
		// A marker that cannot be read is no match: the directory is
		// then refused, or emptied with overwrite.
		var had Marker
		same := storage.ReadJSON(ctx, dst, MarkerFile, &had) == nil && m.Epoch != "" && had == m
		switch {
		case same:
			for _, marker := range []string{SuccessFile, PartialFile} {
				if err := dst.Remove(ctx, marker); err != nil {
					return err
				}
			}
		case !overwrite:
			return fmt.Errorf("%s: %w (%d files; pass --overwrite to replace a corpus write-kept wrote)", dir, ErrNotEmpty, len(names))
		default:
			if err := emptyOwn(ctx, dir, dst, names); err != nil {
				return err
			}
		}
	}
	return storage.WriteJSON(ctx, dst, MarkerFile, m, false)
}

// emptyOwn empties dst, which holds names, when they are write-kept's
// files (checkOwn); any other file is left where it is and refused.
func emptyOwn(ctx context.Context, dir string, dst *storage.Dir, names []string) error {
	if err := checkOwn(dir, names); err != nil {
		return err
	}
	// The markers of completion go first: a corpus half replaced is
	// never complete. The marker of write-kept's stays.
	for _, marker := range []string{SuccessFile, PartialFile} {
		if err := dst.Remove(ctx, marker); err != nil {
			return err
		}
	}
	for _, n := range names {
		if n == MarkerFile {
			continue
		}
		if err := dst.Remove(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// WriteSummary writes sum as the corpus's SummaryFile.
func WriteSummary(ctx context.Context, dst storage.Creator, sum *Summary) error {
	data, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return err
	}
	return storage.WriteFile(ctx, dst, SummaryFile, append(data, '\n'))
}

// JobPlaces are the places a corpus must keep out of (CheckPlacement):
// the job at out, its inputs and the INPUTs the operator named.
func JobPlaces(out string, inputs []job.Input, named []string) []Place {
	places := []Place{{"the job", out}}
	for i, in := range inputs {
		places = append(places, Place{fmt.Sprintf("input %d of the job", i), in.Path})
	}
	for _, in := range named {
		places = append(places, Place{"an INPUT", in})
	}
	return places
}

// ownOutput matches the names of the corpus's files (OutputPattern).
var ownOutput = regexp.MustCompile(`^` + OutputPattern + `$`)

// Complete completes a corpus that tasks wrote into dst (the job's
// write-kept stage), once every task is done: it removes the corpus's
// files that sum does not list (written by an earlier run of the job,
// before its stage started over) and the temporary files of writers that
// were killed, then writes sum (SummaryFile). Its marker of completion is
// the caller's, written when the job's is.
func Complete(ctx context.Context, dst *storage.Dir, sum *Summary) error {
	listed := map[string]bool{}
	for _, f := range sum.Files {
		for _, o := range f.Outputs {
			listed[o] = true
		}
	}
	names, err := dst.List(ctx, "")
	if err != nil {
		return err
	}
	for _, n := range names {
		if ownOutput.MatchString(n) && !listed[n] {
			if err := dst.Remove(ctx, n); err != nil {
				return err
			}
		}
	}
	if _, err := dst.RemoveTemporaries(ctx, "."); err != nil {
		return err
	}
	return WriteSummary(ctx, dst, sum)
}
