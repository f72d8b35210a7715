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
	"github.com/neardup/neardup/internal/report"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/pkg/bands"
)

// Manifest is the job's record: parameters, inputs, counts, timings and
// versions. It is written as manifest.json.
type Manifest struct {
	// Status is StatusComplete when every input record was processed or
	// listed as rejected (and _SUCCESS is written), StatusPartial when
	// map tasks failed for good and their chunks are missing.
	Status   string            `json:"status"`
	Job      string            `json:"job"`
	Epoch    string            `json:"epoch"`
	Started  time.Time         `json:"started"`
	Finished time.Time         `json:"finished"`
	Seconds  float64           `json:"seconds"`
	Versions map[string]string `json:"versions"`
	Params   job.Params        `json:"params"`
	Curve    *CurveSummary     `json:"curve,omitempty"` // MinHash only
	Inputs   []job.Input       `json:"inputs"`
	// ChangedInputs are the input files whose size or modification time
	// changed between planning and reading, sorted.
	ChangedInputs []string `json:"changed_inputs,omitempty"`
	// SkippedInputs are the files under input directories, prefixes or
	// patterns that were not read because their kind is unknown.
	SkippedInputs []job.Skipped `json:"skipped_inputs"`
	Chunks        int           `json:"chunks"`
	Counts        Counts        `json:"counts"`
	Stages        []StageTiming `json:"stages"`
	Failures      []Failure     `json:"failures"`
	// RejectReasons counts the rejected records by the kind of their
	// reason (see stage.RejectKind; rejects/ holds each one's whole
	// reason), most frequent first.
	RejectReasons []ReasonCount `json:"reject_reasons"`
	// Histograms of similarity in 20 bins of width 0.05, and of cluster
	// sizes (index i: size i+2; the last bin, all larger).
	VerifiedHist    []int64 `json:"verified_similarity_hist"`
	RejectedHist    []int64 `json:"rejected_similarity_hist"`
	ClusterSizeHist []int64 `json:"cluster_size_hist"`
	// The edges of those bins: similarity bin i holds the similarities
	// edges[i] ≤ s < edges[i+1] (the last bin also s = 1), cluster size
	// bin i the clusters of edges[i] ≤ size < edges[i+1], where a null
	// edge is no bound.
	SimilarityEdges  []float64 `json:"similarity_hist_edges"`
	ClusterSizeEdges []*int64  `json:"cluster_size_hist_edges"`
	// LargestClusters lists the largest clusters, largest first.
	LargestClusters []stage.ClusterSummary `json:"largest_clusters"`
	// BoundedBuckets lists the largest band buckets whose pairs were not
	// all compared (--max-bucket); BoundedClusters the clusters with the
	// most pairs among those whose pairs/ lists only the kept document's
	// pairs (--max-cluster-pairs).
	BoundedBuckets  []job.BoundedBucket    `json:"bounded_buckets"`
	BoundedClusters []stage.BoundedCluster `json:"bounded_clusters"`
	// Scripts counts the documents by script (the script of most of
	// their letters), most documents first: thin ones and the median
	// number of shingles.
	Scripts []job.ScriptSummary `json:"scripts"`
	// Warnings name what a person should look at before dropping documents.
	Warnings []string `json:"warnings"`
	// ExamplePairs are the few pairs the report shows side by side
	// (report-pairs.html), chosen from pairs/ by report.Chooser.
	ExamplePairs []report.Example `json:"example_pairs"`
}

// ReasonCount is how many records were rejected for one kind of reason.
type ReasonCount struct {
	Reason string `json:"reason"`
	Count  int64  `json:"count"`
}

// The statuses of a finished job.
const (
	StatusComplete = "complete"
	StatusPartial  = "partial"
)

// CurveSummary describes the chosen S-curve.
type CurveSummary struct {
	ApproxThreshold float64 `json:"approx_threshold"`
	Steepest        float64 `json:"steepest"`
	PAtThreshold    float64 `json:"p_at_threshold"`
	PAtThreshold05  float64 `json:"p_at_threshold_plus_0.05"`
}

// Counts are the numbers of every stage.
type Counts struct {
	InputBytes    int64 `json:"input_bytes"`
	TextBytes     int64 `json:"text_bytes"`
	Docs          int64 `json:"docs"`
	Rejected      int64 `json:"rejected"`
	UnreadFiles   int64 `json:"unread_files"`
	UnreadBytes   int64 `json:"unread_bytes"`
	DamagedRanges int64 `json:"damaged_ranges"`
	DamagedBytes  int64 `json:"damaged_bytes"`
	DamagedRows   int64 `json:"damaged_rows"`
	ChangedFiles  int64 `json:"changed_files"`
	Empty         int64 `json:"empty"`
	// Thin counts the documents with 1 to job.ThinShingles-1 shingles.
	Thin         int64 `json:"thin"`
	Shingles     int64 `json:"shingles"`
	BandRecords  int64 `json:"band_records"`
	BandGroups   int64 `json:"band_groups"`
	MaxBandGroup int64 `json:"max_band_group"`
	// CandidateRows counts the rows of candidates/: a pair that collides
	// in several partitions is a row of each. Candidates is its old name,
	// kept for older readers. UniquePairs counts the distinct pairs.
	CandidateRows int64 `json:"candidate_rows"`
	Candidates    int64 `json:"candidates"`
	// Gathered counts the signature records the gather stage sent to
	// verify tasks (a document once per verify task that needs it).
	Gathered       int64 `json:"signatures_gathered"`
	UniquePairs    int64 `json:"candidate_pairs_checked"`
	Prefiltered    int64 `json:"prefiltered"`
	ExactChecked   int64 `json:"exact_checked"`
	SigPassed      int64 `json:"signature_passed"`
	SigPassedExact int64 `json:"signature_passed_exact"`
	Verified       int64 `json:"verified_pairs"`
	ExactGroups    int64 `json:"exact_groups"`
	ExactDups      int64 `json:"exact_duplicates"`
	Pairs          int64 `json:"pairs"`
	// PairsAgainst counts the pairs with a document of an earlier job
	// (--against): pairs_against new-vs-old, pairs - pairs_against
	// new-vs-new.
	PairsAgainst   int64 `json:"pairs_against"`
	BoundedBuckets int64 `json:"bounded_buckets"`
	NotCompared    int64 `json:"pairs_not_compared"`
	BoundedClust   int64 `json:"bounded_clusters"`
	NotListed      int64 `json:"pairs_not_listed"`
	Clusters       int64 `json:"clusters"`
	ClusteredDocs  int64 `json:"clustered_docs"`
	Duplicates     int64 `json:"duplicates"`
	NearDups       int64 `json:"near_duplicates"`
	LargestCluster int64 `json:"largest_cluster"`
	FailedChunks   int64 `json:"failed_chunks"`
}

// StageTiming is how long a stage took.
type StageTiming struct {
	Name    string  `json:"name"`
	Tasks   int     `json:"tasks"`
	Failed  int     `json:"failed"`
	Seconds float64 `json:"seconds"`
}

func newManifest(spec *job.Spec, plan *job.Plan, started time.Time) *Manifest {
	p := spec.Params
	bp := p.BandParams()
	m := &Manifest{
		Job: spec.Job, Epoch: spec.Epoch, Started: started.UTC(), Versions: versions(), Params: p,
		Inputs: plan.Inputs, SkippedInputs: append([]job.Skipped{}, plan.Skipped...),
		Chunks: len(plan.Chunks), Failures: []Failure{}, Warnings: []string{}, Scripts: []job.ScriptSummary{}, ExamplePairs: []report.Example{},
		BoundedBuckets: []job.BoundedBucket{}, BoundedClusters: []stage.BoundedCluster{},
		SimilarityEdges: job.HistEdges(), ClusterSizeEdges: stage.ClusterSizeEdges(), RejectReasons: []ReasonCount{},
	}
	if p.Method == job.MethodMinHash {
		m.Curve = &CurveSummary{
			ApproxThreshold: bands.ApproxThreshold(bp),
			Steepest:        bands.Steepest(bp),
			PAtThreshold:    bands.Probability(p.Threshold, bp),
			PAtThreshold05:  bands.Probability(min(p.Threshold+0.05, 1), bp),
		}
	}
	return m
}

func (m *Manifest) addMaps(list []job.MapResult, out *stageOutcome) {
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
		m.RejectReasons = append(m.RejectReasons, ReasonCount{Reason: kind, Count: n})
	}
	slices.SortFunc(m.RejectReasons, func(x, y ReasonCount) int {
		return cmp.Or(cmp.Compare(y.Count, x.Count), strings.Compare(x.Reason, y.Reason))
	})
	m.Scripts = job.SummariseScripts(scripts)
	m.Counts.FailedChunks = int64(len(out.failures))
	m.addStage(out)
}

func (m *Manifest) addReduces(list []job.ReduceResult, out *stageOutcome) {
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
	m.addStage(out)
}

func (m *Manifest) addGathers(list []job.GatherResult, out *stageOutcome) {
	for _, g := range list {
		m.Counts.Gathered += g.Requests
	}
	m.addStage(out)
}

func (m *Manifest) addVerifies(list []job.VerifyResult, out *stageOutcome) {
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
	m.addStage(out)
}

func (m *Manifest) addClusters(s *stage.ClusterStats, tasks int, d time.Duration) {
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
	m.Stages = append(m.Stages, StageTiming{Name: "cluster", Tasks: tasks, Seconds: d.Seconds()})
}

func (m *Manifest) addStage(out *stageOutcome) {
	m.Stages = append(m.Stages, out.timing)
	m.Failures = append(m.Failures, out.failures...)
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
