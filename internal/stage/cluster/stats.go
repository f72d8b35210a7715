package cluster

import "github.com/neardup/neardup/internal/stage"

// boundedTop are the clusters of the bounded clusters the manifest names.
func boundedTop(s *stage.ClusterStats) []int64 {
	var top []int64
	for _, b := range s.Bounded {
		top = append(top, b.Cluster)
	}
	return top
}

// addStats adds the statistics of some of the clusters, o, to s.
func addStats(s, o *stage.ClusterStats) {
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
