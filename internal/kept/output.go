package kept

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

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
		var had Marker
		err := storage.ReadJSON(ctx, dst, MarkerFile, &had)
		same := err == nil && m.Epoch != "" && had == m
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: %w", dir, err)
		}
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

// CheckDir refuses dir as the directory of the corpus of the job at out
// reading inputs when it is, lies under or holds the job or one of the
// inputs: writing there, or emptying it with --overwrite, would change
// what the corpus is made of.
func CheckDir(dir, out string, inputs []job.Input) error {
	return checkPlacement(dir, jobPlaces(out, inputs, nil))
}

// jobPlaces are the places a corpus must keep out of: the job at out,
// its inputs and the INPUTs the operator named.
func jobPlaces(out string, inputs []job.Input, named []string) []place {
	places := []place{{"the job", out}}
	for i, in := range inputs {
		places = append(places, place{fmt.Sprintf("input %d of the job", i), in.Path})
	}
	for _, in := range named {
		places = append(places, place{"an INPUT", in})
	}
	return places
}
