package pipeline

import (
	"fmt"
	"strings"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/stage"
)

// Giant-cluster rule: a cluster of at least giantClusterSize documents, or
// of more than giantClusterFraction of the corpus (and more than 10), is
// most likely templated pages chained together rather than copies.
const (
	giantClusterSize     = 1000
	giantClusterFraction = 0.01
)

// boundWarnings name the buckets and clusters whose pairs were bounded.
func boundWarnings(man *Manifest, s *stage.ClusterStats, p job.Params) []string {
	var out []string
	if man.Counts.BoundedBuckets > 0 {
		b := man.BoundedBuckets[0]
		out = append(out, fmt.Sprintf("%d band buckets held more than --max-bucket %d documents; %d of their pairs were not compared "+
			"(the largest: band %d, key %d, %d documents, the first document %d; each was compared with the bucket's %d first documents)",
			man.Counts.BoundedBuckets, p.MaxBucket, man.Counts.NotCompared, b.Band, b.Key, b.Docs, b.FirstDoc, b.Hubs))
	}
	for _, b := range s.Bounded {
		out = append(out, fmt.Sprintf("cluster %d (%d documents, kept: %s) has %d pairs, more than --max-cluster-pairs %d: "+
			"pairs/ lists only the %d pairs of its kept document, %d are not listed",
			b.Cluster, b.Size, b.KeptID, b.Pairs, p.MaxClusterPairs, b.Listed, b.NotListed))
	}
	if n := s.BoundedClusters - int64(len(s.Bounded)); n > 0 {
		out = append(out, fmt.Sprintf("%d more clusters were bounded the same way (see counts.pairs_not_listed)", n))
	}
	return out
}

func giantClusterWarning(s *stage.ClusterStats, docs int64) string {
	if len(s.Top) == 0 {
		return ""
	}
	big := s.Top[0]
	if big.Size < giantClusterSize && (big.Size <= 10 || float64(big.Size) <= giantClusterFraction*float64(docs)) {
		return ""
	}
	return fmt.Sprintf("cluster %d holds %d documents (%.1f%% of the corpus, kept: %s): near-duplicates may be chained through templated pages; check it before dropping documents",
		big.Cluster, big.Size, 100*float64(big.Size)/float64(max(docs, 1)), big.KeptID)
}

// lossWarnings say what input was not read, or not as planned: files or
// pieces not read to their end, damaged ranges skipped (with the rows
// known lost), files changed since planning (the first few named).
func lossWarnings(c Counts, changed []string) []string {
	var out []string
	if len(changed) > 0 {
		names := strings.Join(changed[:min(len(changed), 5)], ", ")
		if len(changed) > 5 {
			names += ", …"
		}
		out = append(out, fmt.Sprintf("%d input files changed (size or modification time) after the job was planned: %s; "+
			"they were read in the pieces planned for them, so what was added or changed since may be missing or read in part "+
			"(see changed_inputs in the manifest; run the job again with --overwrite to read them as they are)", len(changed), names))
	}
	if c.UnreadFiles > 0 {
		out = append(out, fmt.Sprintf("%d input files or pieces (%d bytes) could not be read to their end: listed in rejects/ as \"unreadable\", their documents are missing",
			c.UnreadFiles, c.UnreadBytes))
	}
	if c.DamagedRanges > 0 {
		out = append(out, fmt.Sprintf("%d damaged ranges of input (%d bytes, %d rows known) were skipped: listed in rejects/, their documents are missing",
			c.DamagedRanges, c.DamagedBytes, c.DamagedRows))
	}
	return out
}
