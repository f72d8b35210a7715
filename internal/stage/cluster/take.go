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
	rule, err := spec.Params.Keep.Rule()
	if err != nil {
		return nil, err
	}
	names := newJobNames(spec)
	res := &componentsResult{Stats: stage.ClusterStats{SizeHist: make([]int64, stage.SizeBins), Top: []manifest.ClusterSummary{}}}
	var clusters []records.ClusterRecord
	var dups []records.Duplicate
	var lookups []lookupRow
	for lo := 0; lo < len(rows); {
		// A component's rows are its documents, its group members and
		// its pairs, one after the other (their kinds' order): each a
		// part of rows, read only, not a copy.
		c := component{label: rows[lo].Label}
		kindEnd := func(from int, kind int32) int {
			for from < len(rows) && rows[from].Label == c.label && rows[from].Kind <= kind {
				from++
			}
			return from
		}
		docsEnd := kindEnd(lo, rowDoc)
		membersEnd := kindEnd(docsEnd, rowMember)
		hi := kindEnd(membersEnd, rowPair)
		c.docs, c.members, c.pairs = rows[lo:docsEnd:docsEnd], rows[docsEnd:membersEnd:membersEnd], rows[membersEnd:hi:hi]
		lo = hi
		if len(c.docs) < 2 || c.docs[0].A != c.label {
			return nil, fmt.Errorf("clusters: component %d has %d documents, the first %v", c.label, len(c.docs), c.docs[:min(len(c.docs), 1)])
		}

		// Documents of earlier jobs (--against) come first.
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
		kept, k, hub := keptOf(c.docs, earlier, rule)
		var keptJob *string
		switch {
		case k >= 0:
			keptJob = names.of(kept.A)
		case kept.rep().Job != "":
			keptJob = names.ptr(kept.rep().Job)
		default: // the job that dropped the first earlier document kept it
			keptJob = names.of(c.docs[0].A)
		}
		size := int32(len(c.docs))
		var dropped int64
		for i, d := range c.docs {
			own := i >= earlier
			keep := i == k || !own && !d.dropped()
			clusters = append(clusters, records.ClusterRecord{Doc: d.A, ID: d.ID, Cluster: c.label, ClusterSize: size, Keep: keep, URL: d.URL, Job: names.of(d.A)})
			if own && !keep {
				dropped++
				dups = append(dups, records.Duplicate{Doc: d.A, ID: d.ID, URL: d.URL, Cluster: c.label, KeptDoc: kept.A, KeptID: kept.ID,
					KeptURL: kept.URL, KeptJob: keptJob})
			}
		}
		cs := &res.Stats
		cs.Clusters++
		cs.Clustered += int64(size)
		cs.Duplicates += dropped
		cs.Largest = max(cs.Largest, int64(size))
		cs.SizeHist[stage.SizeBin(int64(size))]++
		cs.Top = insertTop(cs.Top, summary(c.label, c.docs, kept))

		total := c.completePairs(groups)
		cs.CompletePairs += total
		bounded := total > spec.Params.MaxClusterPairs
		if bounded {
			cs.BoundedClusters++
			res.BoundedPairs += total
			cs.Bounded = insertBounded(cs.Bounded, manifest.BoundedCluster{Cluster: c.label, Size: int64(size), KeptID: kept.ID, Pairs: total})
		}
		lookups = c.lookups(lookups, groups, bounded, hub)
		if earlier > 0 {
			lookups = c.unpublished(lookups, groups, earlier)
		}
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

// keptOf chooses the document a component keeps, of its documents docs
// (in ordinal order, the first earlier of them earlier jobs'), under
// rule. Published means published: an earlier job's document is kept if
// that job kept it, and never if it dropped it.
//
//   - A component holding documents an earlier job published keeps them
//     all, and names the one rule prefers of them as the kept document,
//     in place of which its own documents are dropped.
//   - One whose earlier documents were all dropped by their jobs keeps
//     none of them, nor any of its own: its documents are copies of what
//     an earlier job dropped as a copy of another, which that job kept
//     (the representative its dropped list names; of the first such
//     document's, if several), and which is named as the kept document.
//   - One of the job's documents only keeps the one rule prefers.
//
// It returns the kept document (its ID, URL, and its job in Rep.Job when
// it is not among docs), its index in docs (-1 when it is not), and the
// document whose pairs a bounded component lists: the kept one, or the
// first earlier document when the kept one is not among docs.
func keptOf(docs []compRow, earlier int, rule job.KeepRule) (kept compRow, k int, hub int64) {
	if earlier == 0 {
		k = chooseKept(docs, nil, rule)
		return docs[k], k, docs[k].A
	}
	if k = chooseKept(docs[:earlier], func(d compRow) bool { return !d.dropped() }, rule); k >= 0 {
		return docs[k], k, docs[k].A
	}
	rep := docs[0].rep()
	return compRow{A: rep.Doc, ID: rep.ID, URL: rep.URL, more: &rowMore{Rep: rep}}, -1, docs[0].A
}

// jobNames names the earlier jobs of documents as nullable columns take
// them: one pointer per name, nil for the job's own documents.
type jobNames struct {
	spec  *job.Spec
	names map[string]*string
}

func newJobNames(spec *job.Spec) jobNames { return jobNames{spec: spec, names: map[string]*string{}} }

// of names the earlier job of doc (the job a compacted index holds it
// for), nil if doc is the job's own.
func (n jobNames) of(doc int64) *string {
	i, ok := n.spec.AgainstOf(doc)
	if !ok {
		return nil
	}
	return n.ptr(n.spec.Against[i].JobOf(job.ChunkOf(doc)))
}

// ptr is the pointer to name.
func (n jobNames) ptr(name string) *string {
	p, ok := n.names[name]
	if !ok {
		p = &name
		n.names[name] = p
	}
	return p
}

// summary describes a component for the manifest's largest clusters.
func summary(label int64, docs []compRow, kept compRow) manifest.ClusterSummary {
	s := manifest.ClusterSummary{Cluster: label, Size: len(docs), KeptID: kept.ID, KeptURL: kept.URL}
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
