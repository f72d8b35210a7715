package cluster

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/neardup/neardup/internal/stage"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// groupMember is a document of an exact-duplicate group other than its
// representative.
type groupMember struct {
	doc     int64
	id, url string
}

// InProcess runs the steps of the cluster stage of the job of spec in this
// process, one task after another.
func InProcess(st storage.FS, spec *job.Spec) stage.TaskRunner {
	return inProcess{st: st, spec: spec}
}

type inProcess struct {
	st   storage.FS
	spec *job.Spec
}

// RunTasks runs a step's tasks, in order; the first error fails it.
func (r inProcess) RunTasks(ctx context.Context, step string, n int) ([][]byte, error) {
	out := make([][]byte, n)
	for i := range n {
		res, err := RunTask(ctx, r.st, r.spec, step, i)
		if err != nil {
			return nil, err
		}
		if out[i], err = json.Marshal(res); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// RunLocal runs the cluster stage of the job of spec (see Run) with
// every task in this process, one after another.
func RunLocal(ctx context.Context, st storage.FS, spec *job.Spec, verifies []job.VerifyResult, mapResults map[int]job.MapResult) (*stage.ClusterStats, error) {
	return Run(ctx, st, spec.Params, verifies, mapResults, InProcess(st, spec))
}

// Run drives the cluster stage, whose work is done by tasks that run
// wherever run puts them (see RunTask); none of them holds more than a
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
// A job that one task can cluster in WholeBytes runs the stage as one
// task instead (see wholeTask), which writes the same outputs.
func Run(ctx context.Context, st storage.FS, p job.Params, verifies []job.VerifyResult, mapResults map[int]job.MapResult, run stage.TaskRunner) (*stage.ClusterStats, error) {
	return runCluster(ctx, st, p, verifies, mapResults, run, WholeBytes)
}

// WholeBytes bounds what the one task of a job whose cluster stage runs
// in one task holds (see wholeHeld): a component row of each edge
// (verified pair or confirmed exact-group member, as the verify tasks
// count them), which it sorts, and a few hundred bytes for each document
// they join (its union-find node, its row with id and url, its output
// rows). The 100k benchmark corpus (~50,000 edges) holds about 30 MB and
// the templated corpus at 0.5 (1.37 million edges among 20,000
// documents) about 115 MB: each runs as one task; the 1M corpus
// (~500,000 edges, up to a million documents) takes the distributed
// steps.
const WholeBytes = 128 << 20

// runCluster is Run, in one task if it holds at most wholeBytes (see
// WholeBytes).
func runCluster(ctx context.Context, st storage.FS, p job.Params, verifies []job.VerifyResult, mapResults map[int]job.MapResult, run stage.TaskRunner, wholeBytes int64) (*stage.ClusterStats, error) {
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
	dropped := map[int]droppedRows{}
	for c, m := range mapResults {
		docs[c] = m.DocFile
		if l := m.Dropped; l != nil && l.File != nil {
			dropped[c] = droppedRows{Info: *l.File, First: l.First, Count: l.Docs}
		}
	}
	var ndocs int64
	for _, m := range mapResults {
		ndocs += m.Docs
	}
	d := driver{st: st, run: run, densePairs: densePairs(edges, ndocs)}
	var comps []componentsResult
	var written []outputResult
	var rounds int
	var err error
	if wholeHeld(edges, mapResults) <= wholeBytes {
		comps, written, err = d.whole(ctx, vf, docs, dropped)
	} else {
		comps, written, rounds, err = d.distributed(ctx, clusterParts(mapResults, p.Partitions), vf, docs, dropped)
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
		if err := stage.WriteEmpty[records.Pair](ctx, st, job.PairFile(0), pairOptions(false)); err != nil {
			return nil, err
		}
	}
	return stats, nil
}

// foldComponents adds up the statistics of the components tasks, and the
// complete pairs of their bounded clusters.
func foldComponents(comps []componentsResult) (*stage.ClusterStats, int64) {
	stats := &stage.ClusterStats{SizeHist: make([]int64, stage.SizeBins), Top: []manifest.ClusterSummary{}}
	var boundedPairs int64
	for _, r := range comps {
		addStats(stats, &r.Stats)
		boundedPairs += r.BoundedPairs
	}
	return stats, boundedPairs
}

// distributed runs the steps of the stage over parts partitions: the
// components as labels, then whole, then the outputs. It returns the
// results of the components and output steps and the number of
// large-star rounds.
func (d driver) distributed(ctx context.Context, parts int, vf []verifyFiles, docs map[int]fileinfo.Info, dropped map[int]droppedRows) ([]componentsResult, []outputResult, int, error) {
	// The components, as labels.
	labels, rounds, err := d.components(ctx, parts, vf)
	if err != nil {
		return nil, nil, 0, err
	}

	// The components, whole.
	nodes := &clusterStep{Name: StepPrefix + stepNodes, Kind: stepNodes, Parts: parts, Tasks: parts, Verifies: vf, Docs: docs, Dropped: dropped, Labels: labels}
	joined, err := runStep[nodesResult](ctx, d, nodes)
	if err != nil {
		return nil, nil, 0, err
	}
	routes, err := stepRoutes(ctx, d.st, nodes.Name, joined, func(r nodesResult) (*job.Routes, map[int]fileinfo.Info) { return r.Routes, r.Runs })
	if err != nil {
		return nil, nil, 0, err
	}
	components := &clusterStep{Name: StepPrefix + stepComponents, Kind: stepComponents, Parts: parts, Tasks: parts, Routes: routes}
	comps, err := runStep[componentsResult](ctx, d, components)
	if err != nil {
		return nil, nil, 0, err
	}
	out := &clusterStep{Name: StepPrefix + stepOutput, Kind: stepOutput, Parts: parts, Tasks: len(vf) + 3, Verifies: vf, DensePairs: d.densePairs}
	for _, r := range comps {
		out.Clusters = append(out.Clusters, r.Clusters)
		out.Duplicates = append(out.Duplicates, r.Duplicates)
	}
	if out.Routes, err = stepRoutes(ctx, d.st, components.Name, comps, func(r componentsResult) (*job.Routes, map[int]fileinfo.Info) { return r.Routes, r.Lookups }); err != nil {
		return nil, nil, 0, err
	}
	stats, _ := foldComponents(comps)
	out.Top = boundedTop(stats)

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

// components runs the steps that label every document of a verified pair
// or exact group with its component's smallest ordinal, and returns each
// partition's labels and the number of large-star rounds.
func (d driver) components(ctx context.Context, parts int, vf []verifyFiles) ([]*fileinfo.Info, int, error) {
	contract := &clusterStep{Name: StepPrefix + stepContract, Kind: stepContract, Parts: parts, Tasks: parts, Verifies: vf}
	contracted, err := runStep[roundResult](ctx, d, contract)
	if err != nil {
		return nil, 0, err
	}
	var nodes int64
	for _, r := range contracted {
		nodes += r.Nodes
	}
	routes, err := roundRoutes(ctx, d, contract, contracted)
	if err != nil {
		return nil, 0, err
	}
	return d.rounds(ctx, parts, routes, nodes)
}

// roundRoutes are the route tables of the results of a contract,
// large-star or small-star step.
func roundRoutes(ctx context.Context, d driver, s *clusterStep, results []roundResult) ([]*job.Routes, error) {
	return stepRoutes(ctx, d.st, s.Name, results, func(r roundResult) (*job.Routes, map[int]fileinfo.Info) { return r.Routes, r.Runs })
}

// rounds runs large-star and small-star steps, from the edges the route
// tables routes name (both directions, by partition of the first node)
// of a graph of at most nodes nodes, until every component is a star. It
// returns each partition's labels and the number of large-star rounds.
func (d driver) rounds(ctx context.Context, parts int, routes []*job.Routes, nodes int64) ([]*fileinfo.Info, int, error) {
	for round := 1; ; round++ {
		if round > maxRounds(nodes) {
			return nil, 0, fmt.Errorf("clusters: the components of %d documents are not stars after %d rounds", nodes, round-1)
		}
		step := func(kind string) *clusterStep {
			return &clusterStep{Name: fmt.Sprintf("%s%s-%02d", StepPrefix, kind, round), Kind: kind, Parts: parts, Tasks: parts, Routes: routes}
		}
		ls := step(stepLargeStar)
		large, err := runStep[roundResult](ctx, d, ls)
		if err != nil {
			return nil, 0, err
		}
		var notStar int64
		for _, r := range large {
			notStar += r.NotStar
		}
		if notStar == 0 {
			labels := make([]*fileinfo.Info, parts)
			for i, r := range large {
				labels[i] = r.Labels
			}
			return labels, round, nil
		}
		if routes, err = roundRoutes(ctx, d, ls, large); err != nil {
			return nil, 0, err
		}
		ss := step(stepSmallStar)
		small, err := runStep[roundResult](ctx, d, ss)
		if err != nil {
			return nil, 0, err
		}
		if routes, err = roundRoutes(ctx, d, ss, small); err != nil {
			return nil, 0, err
		}
	}
}

// driver runs the steps of the cluster stage.
type driver struct {
	st  storage.FS
	run stage.TaskRunner
	// densePairs: the pairs/ files are Dense (see densePairs).
	densePairs bool
}

// runStep describes step s to its tasks, runs them and decodes their
// results.
func runStep[T any](ctx context.Context, d driver, s *clusterStep) ([]T, error) {
	if s.RunTasks = len(s.Routes); s.RunTasks > 0 {
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

// The bytes the one task holds for an edge (a compRow, and a little for
// the sort and the union-find's work) and for a document its edges join.
const (
	wholeEdgeBytes = 80
	wholeDocBytes  = 300
)

// wholeHeld bounds the bytes the one task would hold for a job of edges
// edges (verified pairs and exact-group members) and the map results
// mapResults: the edges' rows, and the documents they join, two an edge
// and no more than the job's.
func wholeHeld(edges int64, mapResults map[int]job.MapResult) int64 {
	var docs int64
	for _, m := range mapResults {
		docs += m.Docs
	}
	return wholeEdgeBytes*edges + wholeDocBytes*min(2*edges, docs)
}
