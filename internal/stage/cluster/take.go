package cluster

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/stage"
	"github.com/neardup/neardup/pkg/records"
)

// taken is what takeComponents makes of some components: their share of
// the statistics, their rows of clusters.parquet by (cluster, doc) and of
// duplicates.parquet by doc, and their lookup rows, by destination
// partition (see lookupDest), chunk, kind, node and doc, without repeats.
type taken struct {
	res      *componentsResult
	clusters []records.ClusterRecord
	dups     []records.Duplicate
	lookups  []lookupRow
}

// takeComponents takes each component of rows (sorted by compareCompRows)
// whole: it chooses the kept document, counts the complete pairs and
// makes the component's rows of the outputs and its lookups for parts
// output partitions.
func takeComponents(ctx context.Context, spec *job.Spec, rows []compRow, parts int) (*taken, error) {
	res := &componentsResult{Stats: stage.ClusterStats{SizeHist: make([]int64, stage.SizeBins), Top: []manifest.ClusterSummary{}}}
	var clusters []records.ClusterRecord
	var dups []records.Duplicate
	var lookups []lookupRow
	for lo := 0; lo < len(rows); {
		c := component{label: rows[lo].Label}
		hi := lo
		for ; hi < len(rows) && rows[hi].Label == c.label; hi++ {
			switch r := rows[hi]; r.Kind {
			case rowDoc:
				c.docs = append(c.docs, r)
			case rowMember:
				c.members = append(c.members, r)
			default:
				c.pairs = append(c.pairs, r)
			}
		}
		lo = hi
		if len(c.docs) < 2 || c.docs[0].A != c.label {
			return nil, fmt.Errorf("clusters: component %d has %d documents, the first %v", c.label, len(c.docs), c.docs[:min(len(c.docs), 1)])
		}

		// Documents of earlier jobs (--against) come first and are never
		// dropped: a cluster holding any keeps one of them.
		earlier := 0
		for earlier < len(c.docs) && spec.Earlier(c.docs[earlier].A) {
			earlier++
		}
		groups := c.groups()
		if earlier == len(c.docs) {
			// Joined by the exact groups of earlier jobs only: their
			// cluster, not this job's. Its lookups still serve the
			// expansion, which lists none of its pairs.
			lookups = c.lookups(lookups, groups, false, c.label)
			continue
		}
		keepable := c.docs
		if earlier > 0 {
			keepable = c.docs[:earlier]
		}
		k := chooseKept(keepable, spec.Params.Keep)
		kept := c.docs[k]
		size := int32(len(c.docs))
		for i, d := range c.docs {
			clusters = append(clusters, records.ClusterRecord{Doc: d.A, ID: d.ID, Cluster: c.label, ClusterSize: size, Keep: i == k || i < earlier})
			if i != k && i >= earlier {
				dups = append(dups, records.Duplicate{Doc: d.A, ID: d.ID, URL: d.URL, Cluster: c.label, KeptDoc: kept.A, KeptID: kept.ID})
			}
		}
		cs := &res.Stats
		cs.Clusters++
		cs.Clustered += int64(size)
		cs.Duplicates += int64(size) - int64(max(earlier, 1))
		cs.Largest = max(cs.Largest, int64(size))
		cs.SizeHist[stage.SizeBin(int64(size))]++
		cs.Top = insertTop(cs.Top, summary(c.label, c.docs, k))

		total := c.completePairs(groups)
		cs.CompletePairs += total
		bounded := total > spec.Params.MaxClusterPairs
		if bounded {
			cs.BoundedClusters++
			res.BoundedPairs += total
			cs.Bounded = insertBounded(cs.Bounded, manifest.BoundedCluster{Cluster: c.label, Size: int64(size), KeptID: kept.ID, Pairs: total})
		}
		lookups = c.lookups(lookups, groups, bounded, kept.A)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	slices.SortFunc(dups, func(a, b records.Duplicate) int { return cmp.Compare(a.Doc, b.Doc) })
	dest := lookupDest(parts)
	slices.SortFunc(lookups, func(x, y lookupRow) int {
		return cmp.Or(cmp.Compare(dest(x), dest(y)), cmp.Compare(x.Chunk, y.Chunk), cmp.Compare(x.Kind, y.Kind),
			cmp.Compare(x.Node, y.Node), cmp.Compare(x.Doc, y.Doc))
	})
	return &taken{res: res, clusters: clusters, dups: dups, lookups: slices.Compact(lookups)}, nil
}

// summary describes a component for the manifest's largest clusters.
func summary(label int64, docs []compRow, kept int) manifest.ClusterSummary {
	s := manifest.ClusterSummary{Cluster: label, Size: len(docs), KeptID: docs[kept].ID, KeptURL: docs[kept].URL}
	for _, d := range docs[:min(len(docs), 5)] {
		s.Members = append(s.Members, d.ID)
	}
	return s
}

// insertTop keeps the topClusters largest clusters, largest first, ties
// by cluster id.
func insertTop(list []manifest.ClusterSummary, s manifest.ClusterSummary) []manifest.ClusterSummary {
	list = append(list, s)
	slices.SortFunc(list, func(x, y manifest.ClusterSummary) int {
		return cmp.Or(cmp.Compare(y.Size, x.Size), cmp.Compare(x.Cluster, y.Cluster))
	})
	return list[:min(len(list), stage.TopClusters)]
}

// insertBounded keeps the topClusters bounded clusters with the most
// pairs, ties by cluster id.
func insertBounded(list []manifest.BoundedCluster, b manifest.BoundedCluster) []manifest.BoundedCluster {
	list = append(list, b)
	slices.SortFunc(list, func(x, y manifest.BoundedCluster) int {
		return cmp.Or(cmp.Compare(y.Pairs, x.Pairs), cmp.Compare(x.Cluster, y.Cluster))
	})
	return list[:min(len(list), stage.TopClusters)]
}
