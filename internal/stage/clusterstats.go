package stage

import "github.com/neardup/neardup/internal/manifest"

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
const TopClusters = 10

// sizeBins is the number of bins of ClusterStats.SizeHist.
const SizeBins = 31

// sizeBin is the bin of ClusterStats.SizeHist of a cluster of size
// documents (2 or more).
func SizeBin(size int64) int { return int(min(size-2, SizeBins-1)) }

// ClusterSizeEdges are the sizeBins+1 edges of ClusterStats.SizeHist:
// bin i holds the clusters of edges[i] ≤ size < edges[i+1]; the last
// edge is nil, as the last bin has no upper bound.
func ClusterSizeEdges() []*int64 {
	edges := make([]*int64, SizeBins+1)
	for i := range SizeBins {
		edges[i] = new(int64(i + 2))
	}
	return edges
}
