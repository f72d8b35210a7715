package control

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/neardup/neardup/internal/examples"
	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/index"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/rates"
	"github.com/neardup/neardup/internal/report"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/internal/stages"
	"github.com/neardup/neardup/internal/storage"
	"golang.org/x/sync/errgroup"
)

type coordinator struct {
	cfg   Config
	log   *slog.Logger
	st    *storage.Dir
	kept  *storage.Dir // the kept corpus's directory (--write-kept), or nil
	q     taskQueue
	state stageState
	reset stateReset
	lease confirmer
	spec  *job.Spec
	plan  *job.Plan
	// earlier are the jobs this one is matched against (--against), and
	// fs reads this job's files and, through their mounts, theirs.
	earlier []earlierJob
	fs      storage.FS
	prog    *progress
	idle    idleWatch
	life    string // random, new for every start of the coordinator
}

// confirmer confirms that this coordinator still holds the job's lease.
type confirmer interface {
	Confirm(ctx context.Context) error
}

// execute runs the job's stages in order, then concludes it.
func (c *coordinator) execute(ctx context.Context, started time.Time) (*manifest.Manifest, error) {
	j := &stage.Job{Spec: c.spec, Plan: c.plan, Out: c.st, FS: c.fs, Earlier: earlierMaps(c.earlier),
		Manifest: stage.NewManifest(c.spec, c.plan, started, versions()), Log: c.log, KeepWork: c.cfg.KeepWork,
		WholeBytes: c.cfg.wholeClusterBytes, Kept: c.kept}
	var input int64
	for _, ch := range c.plan.Chunks {
		input += ch.Bytes
	}
	model := newETAModel(c.spec, input)
	if r, from, ok := earlierRatios(ctx, c.earlier, model.stages, input); ok {
		maps.Copy(model.ratio, r)
		c.log.Debug("the ETA takes the stages' costs from an earlier job", "against", from)
	}
	c.prog.start(started, model)
	defer c.prog.finish()
	if err := stage.Drive(ctx, j, stages.Of(c.spec), c); err != nil {
		return nil, errors.Join(err, j.WaitRemovals())
	}
	c.prog.finish()
	man, err := c.conclude(ctx, j, started)
	if err != nil {
		return nil, errors.Join(err, j.WaitRemovals())
	}
	return man, nil
}

// conclude looks at what the stages found (warnings, the job's status),
// then, unless the job was taken over, writes the index, the manifest, the
// report and _SUCCESS (or _PARTIAL).
func (c *coordinator) conclude(ctx context.Context, j *stage.Job, started time.Time) (*manifest.Manifest, error) {
	p, man, stats := c.spec.Params, j.Manifest, j.Clusters
	var warnings []string
	if w := giantClusterWarning(stats, man.Counts.Docs); w != "" {
		warnings = append(warnings, w)
	}
	warnings = append(warnings, boundWarnings(man, stats, p)...)
	warnings = append(warnings, scriptWarnings(man, p)...)
	if w := simhashRecallWarning(p); w != "" {
		warnings = append(warnings, w)
	}
	for _, w := range []string{notRegularWarning(man.SkippedInputs), duplicateIDWarning(man.Counts.DuplicateIDs, man.DuplicateIDExamples),
		keepWarning(j.Mapped.Own, p)} {
		if w != "" {
			warnings = append(warnings, w)
		}
	}
	warnings = append(warnings, lossWarnings(man.Counts, man.ChangedInputs)...)
	for _, w := range warnings {
		c.log.Warn(w)
	}
	man.Warnings = append(man.Warnings, warnings...)
	man.Status = manifest.StatusComplete
	if n := len(man.Failures); n > 0 {
		man.Status = manifest.StatusPartial
		if c.cfg.AllowPartial {
			man.Warnings = append(man.Warnings, fmt.Sprintf("%d map tasks failed; their chunks are missing and the result is partial, accepted with --allow-partial (_PARTIAL, not _SUCCESS)", n))
		} else {
			man.Warnings = append(man.Warnings, fmt.Sprintf("%d map tasks failed; their chunks are missing: run the same command again to retry them (no _SUCCESS until then)", n))
		}
	}
	// A coordinator that lost its job to another while it was frozen or
	// cut off must not conclude it.
	if err := c.lease.Confirm(ctx); err != nil {
		return nil, err
	}
	// Every task is finished: the temporary files of writers that were
	// killed (a worker dying mid-write) can go.
	if n, err := c.st.RemoveTemporaries(ctx, ".", job.NATSDir); err != nil { // not the live server's store
		return nil, err
	} else if n > 0 {
		c.log.Info("removed temporary files left by interrupted writers", "files", n)
	}

	// The index, the rates and the report's example pairs read the
	// outputs and write files of their own: at once, the rates pass being
	// the longest (the 100k benchmark job's index 56 ms, rates 205 ms,
	// example pairs 65 ms, one after the other).
	g, gctx := errgroup.WithContext(ctx)
	// The index is complete once its description is written: before the
	// manifest, so that a finished job always has it (unless --index=false).
	if p.Index {
		g.Go(func() error { return c.writeIndex(gctx, j) })
	}
	// Where the duplicates are (by host, input file, earlier job), from
	// the facts map wrote of each document and duplicates.parquet, one
	// chunk's documents at a time.
	g.Go(func() error {
		t0 := time.Now()
		chunks := make([]rates.Chunk, len(j.Mapped.Own))
		for i, m := range j.Mapped.Own {
			chunks[i] = rates.Chunk{Index: m.Chunk, Facts: m.RatesFile}
		}
		r, err := rates.Tally(gctx, c.st, chunks, man.Against, j.UnitDocFiles)
		if err != nil {
			return err
		}
		man.Rates = r
		c.log.Debug("rates counted", "hosts", r.HostCount, "files", len(r.Files), "seconds", time.Since(t0).Seconds())
		return nil
	})
	// The report's example pairs were chosen as pairs/ was written (the
	// cluster stage's manifest.ExampleChooser).
	g.Go(func() error {
		t1 := time.Now()
		stored := map[int]fileinfo.Info{}
		for _, m := range slices.Concat(j.Earlier, j.Mapped.Own) {
			stored[m.Chunk] = m.SigFile
		}
		if err := examples.WritePairsPage(gctx, c.fs, c.spec, c.plan, stored, man.ExamplePairs, c.log); err != nil {
			return err
		}
		c.log.Info("example pairs written", "file", report.PairsFile, "pairs", len(man.ExamplePairs),
			"page_seconds", time.Since(t1).Seconds())
		return nil
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}

	man.Finished = time.Now().UTC()
	man.Seconds = time.Since(started).Seconds()
	if err := manifest.Write(ctx, c.st, man); err != nil {
		return nil, err
	}
	if err := writeReport(ctx, c.st); err != nil {
		return nil, err
	}
	// The removals the stages started are done before the work area is
	// marked for removal, so that nothing is removing under it. One that
	// failed leaves its files to the work area's removal, as a warning:
	// the job's outputs are complete.
	if err := j.WaitRemovals(); err != nil {
		c.log.Warn("work files no stage reads any more could not be removed; they go with the work area", "err", err)
	}
	if man.Status == manifest.StatusComplete || c.cfg.AllowPartial {
		if err := markWorkDone(ctx, c.st, c.cfg, c.spec.Params); err != nil {
			return nil, err
		}
	}
	marker := ""
	switch {
	case man.Status == manifest.StatusComplete:
		marker = job.SuccessFile
	case c.cfg.AllowPartial:
		marker = job.PartialFile
	default:
		// Kept for the rerun: it retries the failed chunks and, since map
		// tasks then run, redoes the stages after map.
		return man, nil
	}
	// The kept corpus is complete (or partial) when the job is, just
	// before it: the job's marker says the manifest records it.
	if c.kept != nil {
		if err := storage.WriteFile(ctx, c.kept, marker, nil); err != nil {
			return nil, fmt.Errorf("the kept corpus in %s: %w", c.kept.Root(), err)
		}
	}
	if err := storage.WriteFile(ctx, c.st, marker, nil); err != nil {
		return nil, err
	}
	return man, nil
}

// writeReport writes report.html and its charts beside manifest.json.
func writeReport(ctx context.Context, st *storage.Dir) error {
	data, err := storage.ReadFile(ctx, st, job.ManifestFile)
	if err != nil {
		return err
	}
	files, err := report.Build(data)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if err := storage.WriteFile(ctx, st, name, files[name]); err != nil {
			return err
		}
	}
	return nil
}

// writeIndex writes the job's table of the documents it dropped and the
// index's description, which completes the index (see index.Write).
func (c *coordinator) writeIndex(ctx context.Context, j *stage.Job) error {
	ix := index.New(c.spec, j.Mapped.Own)
	ix.BandsLayout, ix.BandFiles = index.BandsLayoutTasks, j.Reduced.BandFiles
	ix.Units = j.UnitTable
	model, err := sketch.ModelFingerprint(c.spec.Params)
	if err != nil {
		return err
	}
	ix.Model = model
	if err := index.WriteDropped(ctx, c.st, ix); err != nil {
		return err
	}
	return index.Write(ctx, c.st, ix)
}
