package pipeline

import (
	"cmp"
	"maps"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/pkg/bands"
)

// Manifest is the job's record, written as manifest.json: see package
// manifest. Run returns it.
type Manifest = manifest.Manifest

// newManifest starts the manifest of a job: its parameters, inputs,
// versions and the empty lists that manifest.json writes as [].
func newManifest(spec *job.Spec, plan *job.Plan, started time.Time) *manifest.Manifest {
	p := spec.Params
	bp := p.BandParams()
	m := &manifest.Manifest{
		Job: spec.Job, Epoch: spec.Epoch, Started: started.UTC(), Versions: versions(), Params: p,
		Inputs: plan.Inputs, SkippedInputs: append([]job.Skipped{}, plan.Skipped...),
		Chunks: len(plan.Chunks), Failures: []manifest.Failure{}, Warnings: []string{}, Scripts: []job.ScriptSummary{}, ExamplePairs: []manifest.Example{},
		BoundedBuckets: []job.BoundedBucket{}, BoundedClusters: []manifest.BoundedCluster{},
		SimilarityEdges: job.HistEdges(), ClusterSizeEdges: stage.ClusterSizeEdges(), RejectReasons: []manifest.ReasonCount{},
	}
	if p.Method == "minhash" {
		m.Curve = &manifest.CurveSummary{
			ApproxThreshold: bands.ApproxThreshold(bp),
			Steepest:        bands.Steepest(bp),
			PAtThreshold:    bands.Probability(p.Threshold, bp),
			PAtThreshold05:  bands.Probability(min(p.Threshold+0.05, 1), bp),
		}
	}
	return m
}

// addMaps adds up the map tasks' counts, rejects by reason, scripts and
// changed inputs.
func addMaps(m *manifest.Manifest, list []job.MapResult, out *stageOutcome) {
	reasons := map[string]int64{}
	scripts := map[string]*job.ScriptStats{}
	changed := map[string]bool{}
	for _, r := range list {
		for name, st := range r.Scripts {
			if scripts[name] == nil {
				scripts[name] = &job.ScriptStats{}
			}
			scripts[name].Merge(st)
			m.Counts.Thin += st.Thin
		}
		for _, f := range r.ChangedFiles {
			changed[f] = true
		}
		for kind, n := range r.RejectReasons {
			reasons[kind] += n
		}
		m.Counts.InputBytes += r.InputBytes
		m.Counts.TextBytes += r.TextBytes
		m.Counts.Docs += r.Docs
		m.Counts.Rejected += r.Rejected
		m.Counts.UnreadFiles += r.UnreadFiles
		m.Counts.UnreadBytes += r.UnreadBytes
		m.Counts.DamagedRanges += r.DamagedRanges
		m.Counts.DamagedBytes += r.DamagedBytes
		m.Counts.DamagedRows += r.DamagedRows
		m.Counts.Empty += r.Empty
		m.Counts.Shingles += r.Shingles
		m.Counts.BandRecords += r.BandRecords
	}
	m.ChangedInputs = slices.Sorted(maps.Keys(changed))
	m.Counts.ChangedFiles = int64(len(changed))
	for kind, n := range reasons {
		m.RejectReasons = append(m.RejectReasons, manifest.ReasonCount{Reason: kind, Count: n})
	}
	slices.SortFunc(m.RejectReasons, func(x, y manifest.ReasonCount) int {
		return cmp.Or(cmp.Compare(y.Count, x.Count), strings.Compare(x.Reason, y.Reason))
	})
	m.Scripts = job.SummariseScripts(scripts)
	m.Counts.FailedChunks = int64(len(out.failures))
	addStage(m, out)
}

// addReduces adds up the reduce tasks' band groups, candidates and
// bounded buckets.
func addReduces(m *manifest.Manifest, list []job.ReduceResult, out *stageOutcome) {
	for _, r := range list {
		m.Counts.BandGroups += r.Groups
		m.Counts.MaxBandGroup = max(m.Counts.MaxBandGroup, r.MaxGroup)
		m.Counts.CandidateRows += r.Candidates
		m.Counts.Candidates += r.Candidates
		m.Counts.BoundedBuckets += r.BoundedBuckets
		m.Counts.NotCompared += r.PairsNotCompared
		for _, b := range r.Bounded {
			m.BoundedBuckets = job.InsertBounded(m.BoundedBuckets, b)
		}
	}
	addStage(m, out)
}

// addGathers counts the signatures the gather tasks sent.
func addGathers(m *manifest.Manifest, list []job.GatherResult, out *stageOutcome) {
	for _, g := range list {
		m.Counts.Gathered += g.Requests
	}
	addStage(m, out)
}

// addVerifies adds up the verify tasks' counts and similarity
// histograms.
func addVerifies(m *manifest.Manifest, list []job.VerifyResult, out *stageOutcome) {
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
	addStage(m, out)
}

// addClusters records what the cluster stage found, and its timing.
func addClusters(m *manifest.Manifest, s *stage.ClusterStats, tasks int, d time.Duration) {
	m.Counts.Clusters = s.Clusters
	m.Counts.ClusteredDocs = s.Clustered
	m.Counts.Duplicates = s.Duplicates
	m.Counts.ExactGroups = s.ExactGroups
	m.Counts.ExactDups = s.ExactDuplicates
	m.Counts.NearDups = s.Duplicates - s.ExactDuplicates
	m.Counts.Pairs = s.PairsListed
	m.Counts.PairsAgainst = s.PairsAgainst
	m.Counts.BoundedClust = s.BoundedClusters
	m.Counts.NotListed = s.PairsNotListed
	m.BoundedClusters = append(m.BoundedClusters, s.Bounded...)
	m.Counts.LargestCluster = s.Largest
	m.ClusterSizeHist = s.SizeHist
	m.LargestClusters = s.Top
	m.Stages = append(m.Stages, manifest.StageTiming{Name: "cluster", Tasks: tasks, Seconds: d.Seconds()})
}

// addStage records a stage's timing and failed tasks.
func addStage(m *manifest.Manifest, out *stageOutcome) {
	m.Stages = append(m.Stages, out.timing)
	m.Failures = append(m.Failures, out.failures...)
}

// into binds one of the add functions to m, for runStage.
func into[T any](m *manifest.Manifest, add func(*manifest.Manifest, []T, *stageOutcome)) func([]T, *stageOutcome) {
	return func(list []T, out *stageOutcome) { add(m, list, out) }
}

// versions lists the versions of Go, neardup and its main dependencies.
func versions() map[string]string {
	v := map[string]string{"go": runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	v["neardup"] = bi.Main.Version
	for _, d := range bi.Deps {
		switch d.Path {
		case "github.com/nats-io/nats.go", "github.com/nats-io/nats-server/v2", "github.com/parquet-go/parquet-go",
			"github.com/cespare/xxhash/v2", "github.com/klauspost/compress":
			v[d.Path] = d.Version
		}
	}
	return v
}
