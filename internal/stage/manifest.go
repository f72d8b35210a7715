package stage

import (
	"time"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/pkg/bands"
)

// NewManifest starts the manifest of a job that began at started: its
// parameters, inputs, the versions it runs with and the empty lists that
// manifest.json writes as []. Its stages fill in the rest (Drive).
func NewManifest(spec *job.Spec, plan *job.Plan, started time.Time, versions map[string]string) *manifest.Manifest {
	p := spec.Params
	bp := p.BandParams()
	m := &manifest.Manifest{
		Job: spec.Job, Epoch: spec.Epoch, Started: started.UTC(), Versions: versions, Params: p, Derived: spec.Derived,
		Inputs: plan.Inputs, SkippedInputs: append([]job.Skipped{}, plan.Skipped...),
		Chunks: len(plan.Chunks), Failures: []manifest.Failure{}, Warnings: []string{}, Scripts: []job.ScriptSummary{}, ExamplePairs: []manifest.Example{},
		BoundedBuckets: []job.BoundedBucket{}, BoundedClusters: []manifest.BoundedCluster{},
		SimilarityEdges: job.HistEdges(), ClusterSizeEdges: ClusterSizeEdges(), RejectReasons: []manifest.ReasonCount{},
	}
	if p.Method == job.MethodMinHash {
		m.Curve = &manifest.CurveSummary{
			ApproxThreshold: bands.ApproxThreshold(bp),
			Steepest:        bands.Steepest(bp),
			PAtThreshold:    bands.Probability(p.Threshold, bp),
			PAtThreshold05:  bands.Probability(min(p.Threshold+0.05, 1), bp),
		}
	}
	return m
}
