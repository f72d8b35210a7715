package verify

import (
	"context"
	"fmt"

	"github.com/neardup/neardup/internal/stage"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
)

// Stage returns the verify stage, which checks the candidate pairs: one
// task per chunk with candidate edges, reading the signatures the gather stage sent it, or
// (gather off) every chunk's signature file (see Verify).
func Stage() stage.Stage {
	return stage.Stage{
		Name: "verify",
		Tasks: func(_ context.Context, j *stage.Job) ([]int, error) {
			return j.Reduced.VerifyChunks, nil
		},
		Run: func(ctx context.Context, e *stage.Env, t stage.Task) (any, error) {
			in, err := stage.ReadTaskInputs[stage.EdgeInput](ctx, e.FS, job.InputsEdges, t.Index)
			if err != nil {
				return nil, err
			}
			src := SigSource{}
			if e.Spec.Params.Gather == job.GatherOn {
				g, err := stage.ReadTaskInputs[stage.GatheredInput](ctx, e.FS, job.InputsGathered, t.Index)
				if err != nil {
					return nil, err
				}
				src.Gathers = stage.GatherResults(g, t.Index)
			} else if src.Maps, err = e.Cache.Maps(ctx); err != nil {
				return nil, err
			}
			return Verify(ctx, e.FS, e.Spec, t.Index, stage.ReduceResults(in, t.Index), src)
		},
		Done: func(ctx context.Context, j *stage.Job, out *stage.Outcome) error {
			list, err := stage.DecodeResults[job.VerifyResult](ctx, out)
			if err != nil {
				return err
			}
			foldVerifies(j.Manifest, list)
			j.Verified = list
			// The documents gathered for verification (about 1 KB a
			// document of the job) go before the cluster stage writes
			// its own work files, not at the end of the job: the work
			// area's peak is the lower for it. A rerun that verifies
			// again gathers again. The set files (GatherSets) stay with
			// the work area: a rerun that verifies again (a partial
			// job's, once its failed map tasks have run) reads every
			// chunk's, and map does not run again for the chunks it did.
			// They go, in the background, when every map task succeeded
			// (as the band run files do after reduce): no stage after
			// verify reads them, and a rerun of the job that verifies
			// again runs map again.
			if !j.KeepWork {
				for _, dir := range []string{job.GatherDir, job.RequestsDir} {
					if err := stage.Retried(ctx, func() error { return j.Out.Remove(ctx, dir) }); err != nil {
						return fmt.Errorf("removing %s: %w", dir, err)
					}
				}
				if len(j.Manifest.Failures) == 0 {
					j.RemoveLater(ctx, job.SetsDir)
				}
			}
			return nil
		},
	}
}

// foldVerifies adds what the verify tasks found to the manifest.
func foldVerifies(m *manifest.Manifest, list []job.VerifyResult) {
	m.VerifiedHist = make([]int64, job.HistBins)
	m.RejectedHist = make([]int64, job.HistBins)
	for _, r := range list {
		m.Counts.UniquePairs += r.Checked
		m.Counts.Prefiltered += r.Prefiltered
		m.Counts.ExactChecked += r.Exact
		m.Counts.Verified += r.Verified
		m.Counts.SigPassed += r.SigPassed
		m.Counts.SigPassedExact += r.SigPassedExact
		for i := range job.HistBins {
			m.VerifiedHist[i] += r.VerifiedHist[i]
			m.RejectedHist[i] += r.RejectedHist[i]
		}
	}
}
