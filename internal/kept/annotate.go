package kept

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// AnnotationsFile is the sidecar of --annotate: one row per document. It
// has a folder of its own, so that a glob of the corpus (DIR/*.parquet)
// does not take it in.
const AnnotationsFile = "annotations/annotations.parquet"

// Annotation is one row of annotations.parquet: a document, where it is
// (its input file and offset there, the output file holding it), its
// cluster and its most similar document.
type Annotation struct {
	Doc    int64  `parquet:"doc"`
	ID     string `parquet:"id"`
	File   string `parquet:"file"`
	Offset int64  `parquet:"byte_offset"`
	Output string `parquet:"output"`
	// Cluster is the cluster's smallest ordinal; a document in no
	// cluster is its own, of size 1.
	Cluster     int64 `parquet:"cluster"`
	ClusterSize int32 `parquet:"cluster_size"`
	// Keep is false for the documents of duplicates.parquet.
	Keep bool `parquet:"keep"`
	// The document's most similar document in pairs/ (the smaller
	// ordinal of equally similar ones); null when it is in no pair.
	BestMatchDoc   *int64   `parquet:"best_match_doc,optional"`
	BestMatchID    *string  `parquet:"best_match_id,optional"`
	BestSimilarity *float64 `parquet:"best_similarity,optional"`
}

// clusterInfo is a document's row of clusters.parquet.
type clusterInfo struct {
	cluster int64
	size    int32
}

// bestMatch is a document's most similar document so far.
type bestMatch struct {
	doc int64
	id  string
	sim float64
}

// annotator knows, for every document, what --annotate writes of it.
type annotator struct {
	dups     []int64
	clusters map[int64]clusterInfo
	best     map[int64]bestMatch
}

// newAnnotator reads clusters.parquet and pairs/ of the job in s.
func newAnnotator(ctx context.Context, s *storage.Dir, dups []int64) (*annotator, error) {
	a := &annotator{dups: dups, clusters: map[int64]clusterInfo{}, best: map[int64]bestMatch{}}
	err := pqfile.Stream(ctx, s, job.ClustersFile, nil, batchRows, func(rows []records.ClusterRecord) error {
		for _, r := range rows {
			a.clusters[r.Doc] = clusterInfo{cluster: r.Cluster, size: r.ClusterSize}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", job.ClustersFile, err)
	}
	names, err := s.List(ctx, job.PairsDir)
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		if !strings.HasSuffix(name, ".parquet") {
			continue
		}
		err := pqfile.Stream(ctx, s, name, nil, batchRows, func(rows []records.Pair) error {
			for _, p := range rows {
				a.offer(p.A, p.B, p.BID, p.Similarity)
				a.offer(p.B, p.A, p.AID, p.Similarity)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return a, nil
}

// offer makes other, at similarity sim, doc's best match if it is more
// similar than the best so far, or as similar with a smaller ordinal.
func (a *annotator) offer(doc, other int64, otherID string, sim float64) {
	b, ok := a.best[doc]
	if !ok || sim > b.sim || sim == b.sim && other < b.doc {
		a.best[doc] = bestMatch{doc: other, id: otherID, sim: sim}
	}
}

// annotate returns the annotation of document d.
func (a *annotator) annotate(d records.DocRecord) Annotation {
	an := Annotation{Doc: d.Doc, ID: d.ID, File: d.File, Offset: d.Offset,
		Cluster: d.Doc, ClusterSize: 1, Keep: !contains(a.dups, d.Doc)}
	if c, ok := a.clusters[d.Doc]; ok {
		an.Cluster, an.ClusterSize = c.cluster, c.size
	}
	if b, ok := a.best[d.Doc]; ok {
		an.BestMatchDoc, an.BestMatchID, an.BestSimilarity = &b.doc, &b.id, &b.sim
	}
	return an
}

// appendJSON appends the "neardup" object that --annotate adds to a JSONL
// record: {"doc":..,"cluster":..,"cluster_size":..,"keep":..,
// "best_match_id":..,"best_similarity":..} (the last two null when the
// document is in no pair).
func appendJSON(dst []byte, an *Annotation) []byte {
	dst = append(dst, `{"doc":`...)
	dst = strconv.AppendInt(dst, an.Doc, 10)
	dst = append(dst, `,"cluster":`...)
	dst = strconv.AppendInt(dst, an.Cluster, 10)
	dst = append(dst, `,"cluster_size":`...)
	dst = strconv.AppendInt(dst, int64(an.ClusterSize), 10)
	dst = append(dst, `,"keep":`...)
	dst = strconv.AppendBool(dst, an.Keep)
	dst = append(dst, `,"best_match_id":`...)
	if an.BestMatchID == nil {
		dst = append(dst, "null"...)
	} else {
		id, _ := json.Marshal(*an.BestMatchID) // a string always marshals
		dst = append(dst, id...)
	}
	dst = append(dst, `,"best_similarity":`...)
	if an.BestSimilarity == nil {
		dst = append(dst, "null"...)
	} else {
		dst = strconv.AppendFloat(dst, *an.BestSimilarity, 'g', -1, 64)
	}
	return append(dst, '}')
}
