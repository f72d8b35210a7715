package mapper

import (
	"context"
	"fmt"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/transient"
	"github.com/neardup/neardup/pkg/formats"
	"github.com/neardup/neardup/pkg/records"
)

// StripUnitsName is the name of the stage that cuts the documents into
// units before map (--shingle-after-strip).
const StripUnitsName = "strip-units"

// StripUnitsStage returns the first stage of a job with
// --shingle-after-strip: a task per chunk of the plan, reading it as the
// map task will (the same documents, the same ordinals) and writing only
// its documents' unit records (job.StripUnitRunWorkFile), which the
// strip-count stage counts so that map can sketch each document without
// the units many hold. What the chunk rejects, map records.
func StripUnitsStage() stage.Stage {
	return stage.Stage{
		Name: StripUnitsName,
		Tasks: func(ctx context.Context, j *stage.Job) ([]int, error) {
			if len(j.Earlier) > 0 {
				return nil, fmt.Errorf("--shingle-after-strip does not go with --against: the earlier jobs' documents were sketched with their whole text")
			}
			return chunkTasks(ctx, j)
		},
		Run: func(ctx context.Context, e *stage.Env, t stage.Task) (any, error) {
			if e.Spec.Params.ShingleAfterStrip == 0 {
				return nil, fmt.Errorf("%w: %s task %d: job %s has no --shingle-after-strip", stage.ErrRefused, StripUnitsName, t.Index, e.Spec.Job)
			}
			chunk, err := taskChunk(ctx, e, t)
			if err != nil {
				return nil, err
			}
			r, err := StripUnits(ctx, e.FS, e.Spec, chunk)
			if err != nil {
				return nil, fmt.Errorf("%s chunk %d: %w", StripUnitsName, t.Index, err)
			}
			return r, nil
		},
		Count: countMap,
		Done: func(ctx context.Context, j *stage.Job, out *stage.Outcome) error {
			list, err := stage.DecodeResults[job.MapResult](ctx, out)
			if err != nil {
				return err
			}
			j.StripUnits = list
			return nil
		},
	}
}

// StripUnits reads one chunk as Map does and writes the unit records of
// its documents, by the ordinals Map gives them, in runs of about
// ChunkBytes of text. A record a reader rejects is passed over (Map
// lists it); an input that cannot be read any further ends the chunk's
// documents where Map's end.
func StripUnits(ctx context.Context, st storage.Creator, spec *job.Spec, chunk job.Chunk) (*job.MapResult, error) {
	p := spec.Params
	rule, err := p.Keep.Rule()
	if err != nil {
		return nil, err
	}
	units, err := newUnitCutter(p)
	if err != nil {
		return nil, err
	}
	res := &job.MapResult{Chunk: chunk.Index, InputBytes: chunk.Bytes}
	runs := &bandRuns{st: st, chunk: chunk.Index, res: res,
		units: make([][]records.BandRecord, p.Partitions), unitName: job.StripUnitRunWorkFile}
	ndocs := 0
	for _, piece := range chunk.Pieces {
		o := p.ReadOptions()
		o.Field = rule.FieldFor(piece.Kind)
		emit := func(d formats.Doc) error {
			ord := job.Ordinal(chunk.Index, ndocs)
			ndocs++
			if err := units.add(d.Text, ord, runs.units, res); err != nil {
				return err
			}
			if runs.text += int64(len(d.Text)); runs.text >= p.RunBytes() {
				return runs.flush(ctx)
			}
			return nil
		}
		reject := func(formats.Reject) error { return nil }
		if err := formats.Read(ctx, piece, o, emit, reject); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if p.Strict || transient.Is(err) {
				return nil, fmt.Errorf("chunk %d: reading %s: %w", chunk.Index, piece.Path, err)
			}
		}
	}
	res.Docs = int64(ndocs)
	if err := runs.finish(ctx); err != nil {
		return nil, err
	}
	return res, nil
}
