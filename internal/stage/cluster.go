package stage

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// ClusterStats counts what the cluster stage found.
type ClusterStats struct {
	Clusters   int64 `json:"clusters"`
	Clustered  int64 `json:"clustered_docs"`
	Duplicates int64 `json:"duplicates"`
	Largest    int64 `json:"largest_cluster"`
	// SizeHist counts clusters by size: index i holds clusters of size
	// i+2, the last bin all larger ones.
	SizeHist []int64 `json:"size_hist"`
	// Top lists the largest clusters, largest first.
	Top []manifest.ClusterSummary `json:"top"`
	// Exact-duplicate groups, and their documents beyond one per group.
	ExactGroups     int64 `json:"exact_groups"`
	ExactDuplicates int64 `json:"exact_duplicates"`
	// CompletePairs counts the pairs of all clusters (verified pairs with
	// exact groups expanded), PairsListed those written to pairs/.
	CompletePairs int64 `json:"complete_pairs"`
	PairsListed   int64 `json:"pairs_listed"`
	// PairsAgainst counts the listed pairs with a document of an earlier
	// job (--against); the others are between the job's own documents.
	PairsAgainst    int64                     `json:"pairs_against,omitempty"`
	BoundedClusters int64                     `json:"bounded_clusters"`
	PairsNotListed  int64                     `json:"pairs_not_listed"`
	Bounded         []manifest.BoundedCluster `json:"bounded"` // the largest, by pairs
	// Examples are the report's example pairs, chosen from those listed
	// (manifest.ExampleChooser).
	Examples []manifest.Example `json:"examples"`
	// Rounds is how many large-star rounds the components took.
	Rounds int `json:"-"`
}

// topClusters is how many clusters the manifest lists.
const topClusters = 10

// groupMember is a document of an exact-duplicate group other than its
// representative.
type groupMember struct {
	doc     int64
	id, url string
}

// sizeBins is the number of bins of ClusterStats.SizeHist.
const sizeBins = 31

// sizeBin is the bin of ClusterStats.SizeHist of a cluster of size
// documents (2 or more).
func sizeBin(size int64) int { return int(min(size-2, sizeBins-1)) }

// ClusterSizeEdges are the sizeBins+1 edges of ClusterStats.SizeHist:
// bin i holds the clusters of edges[i] ≤ size < edges[i+1]; the last
// edge is nil, as the last bin has no upper bound.
func ClusterSizeEdges() []*int64 {
	edges := make([]*int64, sizeBins+1)
	for i := range sizeBins {
		edges[i] = new(int64(i + 2))
	}
	return edges
}

// InProcess runs the steps of the cluster stage of the job of spec in this
// process, one task after another.
func InProcess(st storage.FS, spec *job.Spec) TaskRunner {
	return stepRunner{ex: Local{Env: &Env{Spec: spec, FS: st}}, log: slog.New(slog.DiscardHandler)}
}

// Cluster runs the cluster stage of the job of spec (see RunCluster) with
// every task in this process, one after another.
func Cluster(ctx context.Context, st storage.FS, spec *job.Spec, verifies []job.VerifyResult, mapResults map[int]job.MapResult) (*ClusterStats, error) {
	return RunCluster(ctx, st, spec.Params, verifies, mapResults, InProcess(st, spec))
}

// RunCluster drives the cluster stage, whose work is done by tasks that run
// wherever run puts them (see ClusterTask); none of them holds more than a
// partition's edges or documents, and this function only the tasks'
// summaries. It finds the connected components of the verified pairs and
// exact-duplicate groups (large-star / small-star rounds, see
// components.go) until they are stars, brings each component together to
// choose the document it keeps (see clusterjoin.go), and writes
// clusters.parquet, duplicates.parquet and exact.parquet, merged from
// sorted runs, and pairs/, by expanding every verified pair of
// representatives to the members of their groups and listing the pairs
// inside each group (see expander). A cluster's id is its smallest
// ordinal. The outputs do not depend on how many tasks run where.
//
// A job whose verified pairs and group members number at most
// WholeClusterEdges runs the stage as one task instead (see wholeTask),
// which writes the same outputs.
func RunCluster(ctx context.Context, st storage.FS, p job.Params, verifies []job.VerifyResult, mapResults map[int]job.MapResult, run TaskRunner) (*ClusterStats, error) {
	return runCluster(ctx, st, p, verifies, mapResults, run, WholeClusterEdges)
}

// WholeClusterEdges bounds the edges (verified pairs plus confirmed
// exact-group members, as the verify tasks count them) of a job whose
// cluster stage runs as one task that holds them all in memory: a few
// hundred bytes each (the edge, its documents' rows with ids and urls,
// union-find), so at most ~100 MB. The 100k benchmark corpus has ~50,000;
// the 1M one ~500,000, which takes the distributed steps.
const WholeClusterEdges = 1 << 18

// runCluster is RunCluster, in one task if the job has at most wholeEdges
// edges.
func runCluster(ctx context.Context, st storage.FS, p job.Params, verifies []job.VerifyResult, mapResults map[int]job.MapResult, run TaskRunner, wholeEdges int64) (*ClusterStats, error) {
	// What an earlier run of the stage left is of no use.
	if err := st.Remove(ctx, job.ClusterDir); err != nil {
		return nil, err
	}
	var vf []verifyFiles
	var edges int64
	for _, v := range verifies {
		vf = append(vf, verifyFiles{Chunk: v.Chunk, Pairs: v.File, Members: v.MembersFile, Spread: mapResults[v.Chunk].Docs > 1<<partBlockBits})
		edges += v.Verified + v.ExactMembers
	}
	slices.SortFunc(vf, func(x, y verifyFiles) int { return cmp.Compare(x.Chunk, y.Chunk) })
	docs := make(map[int]fileinfo.Info, len(mapResults))
	for c, m := range mapResults {
		docs[c] = m.DocFile
	}
	d := driver{st: st, run: run}
	var comps []componentsResult
	var written []outputResult
	var rounds int
	var err error
	if edges <= wholeEdges {
		comps, written, err = d.whole(ctx, vf, docs)
	} else {
		comps, written, rounds, err = d.distributed(ctx, clusterParts(mapResults, p.Partitions), vf, docs)
	}
	if err != nil {
		return nil, err
	}
	stats, boundedPairs := foldComponents(comps)
	stats.Rounds = rounds
	var keptListed int64
	examples := manifest.NewExampleChooser(p.Threshold)
	for _, w := range written {
		for _, e := range w.Examples {
			examples.Add(e)
		}
		stats.PairsListed += w.Listed
		stats.PairsAgainst += w.Against
		keptListed += w.KeptListed
		stats.ExactGroups += w.ExactGroups
		stats.ExactDuplicates += w.ExactDuplicates
		for i := range stats.Bounded {
			stats.Bounded[i].Listed += w.Top[stats.Bounded[i].Cluster]
		}
	}
	for i := range stats.Bounded {
		stats.Bounded[i].NotListed = stats.Bounded[i].Pairs - stats.Bounded[i].Listed
	}
	stats.PairsNotListed = boundedPairs - keptListed
	stats.Examples = examples.Examples()
	if stats.PairsListed == 0 {
		// No pair: pairs/ still holds its schema.
		if err := writeEmpty[records.Pair](ctx, st, job.PairFile(0), pairOptions()); err != nil {
			return nil, err
		}
	}
	return stats, nil
}

// foldComponents adds up the statistics of the components tasks, and the
// complete pairs of their bounded clusters.
func foldComponents(comps []componentsResult) (*ClusterStats, int64) {
	stats := &ClusterStats{SizeHist: make([]int64, sizeBins), Top: []manifest.ClusterSummary{}}
	var boundedPairs int64
	for _, r := range comps {
		stats.add(&r.Stats)
		boundedPairs += r.BoundedPairs
	}
	return stats, boundedPairs
}

// boundedTop are the clusters of the bounded clusters the manifest names.
func (s *ClusterStats) boundedTop() []int64 {
	var top []int64
	for _, b := range s.Bounded {
		top = append(top, b.Cluster)
	}
	return top
}

// distributed runs the steps of the stage over parts partitions: the
// components as labels, then whole, then the outputs. It returns the
// results of the components and output steps and the number of
// large-star rounds.
func (d driver) distributed(ctx context.Context, parts int, vf []verifyFiles, docs map[int]fileinfo.Info) ([]componentsResult, []outputResult, int, error) {
	// The components, as labels.
	labels, rounds, err := d.components(ctx, parts, vf)
	if err != nil {
		return nil, nil, 0, err
	}

	// The components, whole.
	joined, err := runStep[nodesResult](ctx, d, &clusterStep{Name: ClusterStepPrefix + stepNodes, Kind: stepNodes, Parts: parts, Tasks: parts, Verifies: vf, Docs: docs, Labels: labels})
	if err != nil {
		return nil, nil, 0, err
	}
	runs := make([]map[int]fileinfo.Info, parts)
	for i, r := range joined {
		runs[i] = r.Runs
	}
	comps, err := runStep[componentsResult](ctx, d, &clusterStep{Name: ClusterStepPrefix + stepComponents, Kind: stepComponents, Parts: parts, Tasks: parts, Runs: runs})
	if err != nil {
		return nil, nil, 0, err
	}
	out := &clusterStep{Name: ClusterStepPrefix + stepOutput, Kind: stepOutput, Parts: parts, Tasks: len(vf) + 3, Verifies: vf}
	runs = make([]map[int]fileinfo.Info, parts)
	for i, r := range comps {
		runs[i] = r.Lookups
		out.Clusters = append(out.Clusters, r.Clusters)
		out.Duplicates = append(out.Duplicates, r.Duplicates)
	}
	out.Runs = runs
	stats, _ := foldComponents(comps)
	out.Top = stats.boundedTop()

	// The outputs. pairs/ is written whole by this step: files of an
	// earlier run whose verify tasks do not exist now (the chunks holding
	// pairs moved when a retried chunk brought new representatives) must
	// not stay.
	if err := d.st.Remove(ctx, job.PairsDir); err != nil {
		return nil, nil, 0, err
	}
	written, err := runStep[outputResult](ctx, d, out)
	return comps, written, rounds, err
}

// add adds the statistics of some of the clusters to s's.
func (s *ClusterStats) add(o *ClusterStats) {
	s.Clusters += o.Clusters
	s.Clustered += o.Clustered
	s.Duplicates += o.Duplicates
	s.Largest = max(s.Largest, o.Largest)
	for i, n := range o.SizeHist {
		s.SizeHist[i] += n
	}
	for _, t := range o.Top {
		s.Top = insertTop(s.Top, t)
	}
	s.CompletePairs += o.CompletePairs
	s.BoundedClusters += o.BoundedClusters
	for _, b := range o.Bounded {
		s.Bounded = insertBounded(s.Bounded, b)
	}
}

// components runs the steps that label every document of a verified pair
// or exact group with its component's smallest ordinal, and returns each
// partition's labels and the number of large-star rounds.
func (d driver) components(ctx context.Context, parts int, vf []verifyFiles) ([]*fileinfo.Info, int, error) {
	contracted, err := runStep[roundResult](ctx, d, &clusterStep{Name: ClusterStepPrefix + stepContract, Kind: stepContract, Parts: parts, Tasks: parts, Verifies: vf})
	if err != nil {
		return nil, 0, err
	}
	var nodes int64
	runs := make([]map[int]fileinfo.Info, parts)
	for i, r := range contracted {
		nodes += r.Nodes
		runs[i] = r.Runs
	}
	return d.rounds(ctx, parts, runs, nodes)
}

// rounds runs large-star and small-star steps, from the edges of runs
// (both directions, by partition of the first node) of a graph of at most
// nodes nodes, until every component is a star. It returns each
// partition's labels and the number of large-star rounds.
func (d driver) rounds(ctx context.Context, parts int, runs []map[int]fileinfo.Info, nodes int64) ([]*fileinfo.Info, int, error) {
	for round := 1; ; round++ {
		if round > maxRounds(nodes) {
			return nil, 0, fmt.Errorf("clusters: the components of %d documents are not stars after %d rounds", nodes, round-1)
		}
		step := func(kind string) *clusterStep {
			return &clusterStep{Name: fmt.Sprintf("%s%s-%02d", ClusterStepPrefix, kind, round), Kind: kind, Parts: parts, Tasks: parts, Runs: runs}
		}
		large, err := runStep[roundResult](ctx, d, step(stepLargeStar))
		if err != nil {
			return nil, 0, err
		}
		var notStar int64
		runs = make([]map[int]fileinfo.Info, parts)
		for i, r := range large {
			notStar += r.NotStar
			runs[i] = r.Runs
		}
		if notStar == 0 {
			labels := make([]*fileinfo.Info, parts)
			for i, r := range large {
				labels[i] = r.Labels
			}
			return labels, round, nil
		}
		small, err := runStep[roundResult](ctx, d, step(stepSmallStar))
		if err != nil {
			return nil, 0, err
		}
		runs = make([]map[int]fileinfo.Info, parts)
		for i, r := range small {
			runs[i] = r.Runs
		}
	}
}

// driver runs the steps of the cluster stage.
type driver struct {
	st  storage.FS
	run TaskRunner
}

// runStep describes step s to its tasks, runs them and decodes their
// results.
func runStep[T any](ctx context.Context, d driver, s *clusterStep) ([]T, error) {
	if s.RunTasks = len(s.Runs); s.RunTasks > 0 {
		if err := writeRunsColumns(ctx, d.st, s); err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
	}
	data, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Name, err)
	}
	if err := storage.WriteFile(ctx, d.st, job.ClusterStepFile(s.Name), data); err != nil {
		return nil, err
	}
	raw, err := d.run.RunTasks(ctx, s.Name, s.Tasks)
	if err != nil {
		return nil, err
	}
	if len(raw) != s.Tasks {
		return nil, fmt.Errorf("%s: %d results of %d tasks", s.Name, len(raw), s.Tasks)
	}
	out := make([]T, len(raw))
	for i, b := range raw {
		if err := json.Unmarshal(b, &out[i]); err != nil {
			return nil, fmt.Errorf("%s: result of task %d: %w", s.Name, i, err)
		}
	}
	return out, nil
}

// chooseKept picks the document a cluster keeps, given its documents in
// ordinal order: the first, or with keep job.KeepLongest the one with the
// most tokens, ties going to the smallest ordinal. It returns its index.
func chooseKept(docs []compRow, keep job.Keep) int {
	kept := 0
	if keep != job.KeepLongest {
		return kept
	}
	for i, d := range docs {
		if d.Tokens > docs[kept].Tokens {
			kept = i
		}
	}
	return kept
}
