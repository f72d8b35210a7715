package stage

import (
	"context"
	"fmt"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/paragraph"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/workfile"
)

// MaxStripUnits bounds the units a task holds to leave out of its
// sketches (--shingle-after-strip): 8 bytes each, 128 MiB in all. A job
// whose repeated units are more is refused (raise the count).
const MaxStripUnits = 16 << 20

// LoadWithout returns, for a job with --shingle-after-strip, what strips
// a text of the units held by that many documents or more (listed by
// the strip-count stage in job.StripSetList); nil for a job without.
func LoadWithout(ctx context.Context, st storage.Opener, p job.Params) (*paragraph.Without, error) {
	if p.ShingleAfterStrip == 0 {
		return nil, nil
	}
	var files []fileinfo.Info
	if err := storage.ReadJSON(ctx, st, job.StripSetList, &files); err != nil {
		return nil, fmt.Errorf("--shingle-after-strip: the repeated units' list: %w", err)
	}
	set, err := workfile.LoadHashes(ctx, st, files, MaxStripUnits)
	if err != nil {
		return nil, fmt.Errorf("--shingle-after-strip: %w", err)
	}
	return paragraph.NewWithout(p.ParagraphUnit, p.ShingleOptions(), set.Has)
}
