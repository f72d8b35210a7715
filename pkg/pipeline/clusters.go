package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/neardup/neardup/pkg/formats"
	"github.com/neardup/neardup/pkg/pqfile"
	"github.com/neardup/neardup/pkg/unionfind"
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
	Top []ClusterSummary `json:"top"`
}

// ClusterSummary describes one cluster for the report.
type ClusterSummary struct {
	Cluster int64    `json:"cluster"`
	Size    int      `json:"size"`
	KeptID  string   `json:"kept_id"`
	KeptURL string   `json:"kept_url"`
	Members []string `json:"member_ids"` // the first few, by ordinal
}

// topClusters is how many clusters the manifest lists.
const topClusters = 10

// memberInfo is what the cluster stage needs of a document.
type memberInfo struct {
	id     string
	url    string
	tokens int32
}

// buildClusters finds the connected components of the verified pairs,
// chooses the document each cluster keeps, and writes clusters.parquet and
// duplicates.parquet. A cluster's id is its smallest ordinal.
func buildClusters(ctx context.Context, st store, keep string, verifies []VerifyResult, mapResults map[int]MapResult) (*ClusterStats, error) {
	var npairs int64
	for _, v := range verifies {
		npairs += v.Verified
	}
	uf := unionfind.New(int(min(npairs, 1<<24)))
	for _, v := range verifies {
		if v.File == nil {
			continue
		}
		err := pqfile.Stream(ctx, st, v.File.Name, v.File, 4096, func(rows []formats.Pair) error {
			for _, r := range rows {
				uf.Union(r.A, r.B)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("clusters: %w", err)
		}
	}
	comps := uf.Components()

	// Read the members' ids, urls and lengths, one chunk's docs at a time.
	members := make(map[int64]*memberInfo, uf.Len())
	chunks := map[int]bool{}
	for _, c := range comps {
		for _, d := range c {
			members[d] = &memberInfo{}
			chunks[chunkOf(d)] = true
		}
	}
	for _, c := range slices.Sorted(maps.Keys(chunks)) {
		mr, ok := mapResults[c]
		if !ok {
			return nil, fmt.Errorf("clusters: chunk %d has no map result", c)
		}
		err := pqfile.Stream(ctx, st, mr.DocFile.Name, &mr.DocFile, 4096, func(rows []formats.DocRecord) error {
			for _, r := range rows {
				if m := members[r.Doc]; m != nil {
					m.id, m.url, m.tokens = r.ID, r.URL, r.Tokens
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("clusters: %w", err)
		}
	}

	stats := &ClusterStats{SizeHist: make([]int64, 31)}
	var clusters []formats.ClusterRecord
	var dups []formats.Duplicate
	for _, c := range comps {
		kept := chooseKept(c, members, keep)
		id := c[0]
		size := int32(len(c))
		stats.Clusters++
		stats.Clustered += int64(size)
		stats.Largest = max(stats.Largest, int64(size))
		stats.SizeHist[min(int(size)-2, len(stats.SizeHist)-1)]++
		for _, d := range c {
			m := members[d]
			clusters = append(clusters, formats.ClusterRecord{Doc: d, ID: m.id, Cluster: id, ClusterSize: size, Keep: d == kept})
			if d != kept {
				dups = append(dups, formats.Duplicate{Doc: d, ID: m.id, URL: m.url, Cluster: id, KeptDoc: kept, KeptID: members[kept].id})
			}
		}
	}
	slices.SortFunc(dups, func(a, b formats.Duplicate) int { return cmp.Compare(a.Doc, b.Doc) })
	stats.Top = summarize(comps, members, keep)
	stats.Duplicates = int64(len(dups))
	if _, err := pqfile.Write(ctx, st, clustersFile, clusters, pqfile.Sorted("cluster", "doc")); err != nil {
		return nil, err
	}
	if _, err := pqfile.Write(ctx, st, duplicatesFile, dups, pqfile.Sorted("doc")); err != nil {
		return nil, err
	}
	return stats, nil
}

// chooseKept picks the document a cluster keeps: the smallest ordinal (the
// first in input order), or with keep "longest" the one with the most
// tokens, ties going to the smallest ordinal.
func chooseKept(members []int64, info map[int64]*memberInfo, keep string) int64 {
	kept := members[0]
	if keep != "longest" {
		return kept
	}
	for _, d := range members[1:] {
		if info[d].tokens > info[kept].tokens {
			kept = d
		}
	}
	return kept
}

// summarize lists the largest clusters (ties: smallest cluster id first).
func summarize(comps [][]int64, members map[int64]*memberInfo, keep string) []ClusterSummary {
	order := make([]int, len(comps))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(len(comps[b]), len(comps[a])) })
	top := []ClusterSummary{}
	for _, i := range order[:min(len(order), topClusters)] {
		c := comps[i]
		kept := members[chooseKept(c, members, keep)]
		s := ClusterSummary{Cluster: c[0], Size: len(c), KeptID: kept.id, KeptURL: kept.url}
		for _, d := range c[:min(len(c), 5)] {
			s.Members = append(s.Members, members[d].id)
		}
		top = append(top, s)
	}
	return top
}
