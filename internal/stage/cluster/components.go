package cluster

import (
	"context"
	"fmt"
	"math/bits"
	"slices"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/internal/unionfind"
	"github.com/neardup/neardup/internal/workfile"
	"github.com/neardup/neardup/pkg/records"
)

// The connected components of the verified pairs and exact-group claims
// are found by tasks, none of which holds more than one partition's edges,
// with the alternating large-star / small-star algorithm of Kiveris et
// al., "Connected Components in MapReduce and Beyond" (SoCC 2014):
//
//   - Large-star, at every node u with neighbours N(u): let m be the
//     smallest of N(u) and u; every neighbour v > u is linked to m
//     instead of u.
//   - Small-star, at every node u with the neighbours N smaller than u:
//     let m be the smallest of N and u; u and every v in N other than m
//     are linked to m.
//
// Both keep each component connected and never add edges. Alternated,
// they turn every component into a star around its smallest node in
// O(log² n) rounds for n nodes, as the paper proves (in practice about
// log n: a path of n nodes in ordinal order takes about log2 n rounds,
// since each large-star halves it; TestComponentsMatchUnionFind checks
// 2 log2 n + 2 on chains, trees and random graphs). The rounds stop at the first large-star
// that finds every node in a star (a node with a smaller neighbour has
// no other); its nodes' labels, the smallest neighbour or themselves,
// are then the components' smallest ordinals: the cluster ids union-find
// gives.
//
// Nodes are documents, partitioned by chunk (partOf); edges are stored in
// both directions for large-star (each node sees all its neighbours) and
// at their larger node for small-star, in run files of fixed-size records
// (see writeRuns), one per task with a run for each destination
// partition. Before the first round, each partition's verified pairs and
// claims are contracted by union-find into stars around their local
// smallest node, which keeps the components and shortens the rounds.

// partOf is the cluster partition of a document: its chunk's (plus its
// block within the chunk), so that a partition's documents are in the
// files of few chunks.
func partOf(doc int64, parts int) int {
	return (job.ChunkOf(doc) + int(uint32(doc)>>partBlockBits)) % parts
}

// partBlockBits: documents of a chunk go to partitions in blocks of
// 1<<partBlockBits, so that a chunk of more documents (a whole compressed
// file) is spread over several partitions; a chunk of fewer is one block,
// in partition chunk mod parts. Every partition reads the whole verified
// files of a spread chunk (verifyFiles.share), so the blocks are as large
// as a task can hold, and an automatic chunk (up to 512 MiB of text,
// job.MaxChunkBytes) is one block: at 16 bits the 10M corpus's chunks of
// 130,000 documents were spread over its 153 partitions, and its cluster
// stage read 116 GB in 133 s instead of 9 GB in 51 s (docs/performance.md,
// 2026-11-29).
const partBlockBits = 18

// clusterParts is the number of partitions of the cluster stage, at most
// maxParts: one per chunk up to minChunkParts chunks, and beyond, one per
// 1<<partBlockBits documents. Every task of a step reads a run from every
// task of the step before, so a step has parts² runs: beyond a few dozen
// chunks, parts grow with the documents, not with the chunks.
func clusterParts(mapResults map[int]job.MapResult, maxParts int) int {
	var docs int64
	for _, mr := range mapResults {
		docs += mr.Docs
	}
	blocks := int((docs + 1<<partBlockBits - 1) >> partBlockBits)
	return max(1, min(maxParts, max(blocks, min(len(mapResults), minChunkParts))))
}

// minChunkParts: up to this many chunks, the cluster stage has a
// partition per chunk (if the reduce partitions are as many).
const minChunkParts = 64

// maxRounds bounds the large-star/small-star rounds for a graph of at
// most nodes nodes: far above the O(log² n) the algorithm needs, it only
// turns a bug into an error instead of an endless job.
func maxRounds(nodes int64) int {
	l := bits.Len64(uint64(nodes)) + 1
	return 2*l*l + 4
}

// roundResult is what a task of the contract, large-star or small-star
// step reports.
type roundResult struct {
	// Routes is the route table of the edges written for the next step,
	// by partition; Runs, what an earlier version reported instead.
	Routes *job.Routes           `json:"routes,omitempty"`
	Runs   map[int]fileinfo.Info `json:"runs,omitempty"`
	Edges  int64                 `json:"edges"` // edge records written
	Nodes  int64                 `json:"nodes"` // nodes seen
	// NotStar (large-star) counts the nodes with a smaller neighbour and
	// another; Changed (small-star) those with several smaller ones.
	NotStar int64 `json:"not_star,omitempty"`
	Changed int64 `json:"changed,omitempty"`
	// Labels (large-star, when NotStar is 0) holds every node of the
	// partition with its label, sorted by node.
	Labels *fileinfo.Info `json:"labels,omitempty"`
}

// contractTask reads the verified pairs and claims of the partition's
// chunks, joins them by union-find, and writes each local component as a
// star around its smallest node, both directions, for the first
// large-star.
func contractTask(ctx context.Context, st storage.FS, s *clusterStep, part int) (*roundResult, error) {
	uf := unionfind.New(0)
	for _, v := range s.Verifies {
		read, filter := v.share(part, s.Parts)
		if !read {
			continue
		}
		err := readVerified(ctx, st, v, func(r pairEnds) error {
			if !filter || partOf(r.A, s.Parts) == part {
				uf.Union(r.A, r.B)
			}
			return nil
		}, func(r records.ExactMember) error {
			if !filter || partOf(r.Group, s.Parts) == part {
				uf.Union(r.Group, r.Doc)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("clusters: %w", err)
		}
	}
	var out []records.Candidate
	for _, c := range uf.Components() {
		for _, v := range c[1:] {
			out = append(out, records.Candidate{A: c[0], B: v}, records.Candidate{A: v, B: c[0]})
		}
	}
	res := &roundResult{Nodes: int64(uf.Len())}
	return res, writeRound(ctx, st, s, part, out, res)
}

// largeStarTask runs large-star on the partition's nodes. Its edges go to
// small-star at their larger node; when every node of the partition is in
// a star it also writes the partition's labels.
func largeStarTask(ctx context.Context, st storage.FS, s *clusterStep, part int) (*roundResult, error) {
	edges, err := readRound(ctx, st, s, part)
	if err != nil {
		return nil, err
	}
	res := &roundResult{}
	var out, labels []records.Candidate
	forNodes(edges, func(u int64, n []int64) {
		res.Nodes++
		m := min(u, n[0])
		if n[0] < u && len(n) > 1 {
			res.NotStar++
		}
		for _, v := range n {
			if v > u {
				out = append(out, records.Candidate{A: v, B: m})
			}
		}
		labels = append(labels, records.Candidate{A: u, B: m})
	})
	if res.NotStar == 0 && len(labels) > 0 {
		runs, err := workfile.WriteEdgeRuns(ctx, st, job.ClusterTaskFile(s.Name, part, "labels"), labels, func(int64) int { return part })
		if err != nil {
			return nil, err
		}
		info := runs[part]
		res.Labels = &info
	}
	return res, writeRound(ctx, st, s, part, out, res)
}

// smallStarTask runs small-star on the partition's nodes, each of which
// has its smaller neighbours; its edges go to large-star in both
// directions.
func smallStarTask(ctx context.Context, st storage.FS, s *clusterStep, part int) (*roundResult, error) {
	edges, err := readRound(ctx, st, s, part)
	if err != nil {
		return nil, err
	}
	res := &roundResult{}
	var out []records.Candidate
	forNodes(edges, func(u int64, n []int64) {
		res.Nodes++
		m := n[0] // every neighbour here is smaller than u
		if len(n) > 1 {
			res.Changed++
		}
		link := func(v int64) {
			out = append(out, records.Candidate{A: v, B: m}, records.Candidate{A: m, B: v})
		}
		for _, v := range n[1:] {
			link(v)
		}
		link(u)
	})
	return res, writeRound(ctx, st, s, part, out, res)
}

// forNodes calls fn for every node of edges (sorted by (A, B), without
// repeats) with its neighbours in ascending order. n is only valid
// during the call.
func forNodes(edges []records.Candidate, fn func(u int64, n []int64)) {
	var n []int64
	for lo := 0; lo < len(edges); {
		u := edges[lo].A
		n = n[:0]
		hi := lo
		for ; hi < len(edges) && edges[hi].A == u; hi++ {
			n = append(n, edges[hi].B)
		}
		fn(u, n)
		lo = hi
	}
}

// readRound reads the edges every task of the previous step wrote for
// part, sorted by (A, B) without repeats.
func readRound(ctx context.Context, st storage.FS, s *clusterStep, part int) ([]records.Candidate, error) {
	var edges []records.Candidate
	for _, runs := range s.Runs {
		info, ok := runs[part]
		if !ok {
			continue
		}
		var err error
		if edges, err = workfile.ReadEdges(ctx, st, info, edges); err != nil {
			return nil, fmt.Errorf("clusters: %w", err)
		}
	}
	workfile.SortEdgesGrouped(edges, 1, nil)
	return slices.Compact(edges), nil
}

// writeRound writes a task's edges, one run per partition of their first
// node, and records them in res.
func writeRound(ctx context.Context, st storage.FS, s *clusterStep, part int, edges []records.Candidate, res *roundResult) error {
	workfile.SortEdgesGrouped(edges, s.Parts, func(a int64) int { return partOf(a, s.Parts) })
	edges = slices.Compact(edges)
	file := job.ClusterTaskFile(s.Name, part, "edges")
	runs, err := workfile.WriteEdgeRuns(ctx, st, file, edges, func(d int64) int { return partOf(d, s.Parts) })
	if err != nil {
		return err
	}
	res.Edges = int64(len(edges))
	res.Routes, err = routeRuns(ctx, st, s.Name, part, file, runs)
	return err
}
