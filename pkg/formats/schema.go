package formats

// The record schemas of neardup's Parquet files. Every integer column is
// signed (INT32 or INT64): an unsigned 64-bit column is read as
// DECIMAL(20,0) by Spark. 64-bit hashes are stored as their int64 bit
// pattern.

// BandRecord is one row of a band partition file: document Doc has band key
// Key in band Band. Files are sorted by (band, key, doc).
type BandRecord struct {
	Band int32 `parquet:"band"`
	Key  int64 `parquet:"key"`
	Doc  int64 `parquet:"doc"`
}

// DocRecord maps a document ordinal to where the document came from.
type DocRecord struct {
	Doc      int64  `parquet:"doc"`
	ID       string `parquet:"id"`
	URL      string `parquet:"url"`
	File     string `parquet:"file"`
	Offset   int64  `parquet:"offset"`
	Line     int64  `parquet:"line"`
	Bytes    int64  `parquet:"bytes"`
	Tokens   int32  `parquet:"tokens"`
	Shingles int32  `parquet:"shingles"`
}

// Candidate is a pair of documents that share a band key; A < B. Band is the
// lowest band in which they collide within the partition.
type Candidate struct {
	A    int64 `parquet:"a"`
	B    int64 `parquet:"b"`
	Band int32 `parquet:"band"`
}

// Pair is a verified near-duplicate pair; A < B.
type Pair struct {
	A          int64   `parquet:"a"`
	B          int64   `parquet:"b"`
	AID        string  `parquet:"a_id"`
	BID        string  `parquet:"b_id"`
	Similarity float64 `parquet:"similarity"`
	Estimate   float64 `parquet:"estimate"`
	Method     string  `parquet:"method"`
	// Hamming is the SimHash distance of the pair; null for MinHash.
	Hamming *int32 `parquet:"hamming,optional"`
}

// ClusterRecord places one document in a cluster of near-duplicates.
type ClusterRecord struct {
	Doc         int64  `parquet:"doc"`
	ID          string `parquet:"id"`
	Cluster     int64  `parquet:"cluster"`
	ClusterSize int32  `parquet:"cluster_size"`
	Keep        bool   `parquet:"keep"`
}

// Duplicate is a document to drop, with the document kept in its place.
type Duplicate struct {
	Doc     int64  `parquet:"doc"`
	ID      string `parquet:"id"`
	URL     string `parquet:"url"`
	Cluster int64  `parquet:"cluster"`
	KeptDoc int64  `parquet:"kept_doc"`
	KeptID  string `parquet:"kept_id"`
}

// RejectRecord is an input record that was skipped, and why.
type RejectRecord struct {
	Chunk  int32  `parquet:"chunk"`
	File   string `parquet:"file"`
	Offset int64  `parquet:"offset"`
	Line   int64  `parquet:"line"`
	Reason string `parquet:"reason"`
}
