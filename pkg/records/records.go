// Package records defines the rows of neardup's Parquet datasets: what a
// job writes (docs/, bands/, candidates/, pairs/, exact.parquet,
// clusters.parquet, duplicates.parquet, rejects/) and what its stages pass
// to each other in the work area. Every integer column is signed (INT32 or
// INT64): an unsigned 64-bit column is read as DECIMAL(20,0) by Spark.
// 64-bit hashes are stored as their int64 bit pattern. A Go program reads
// a dataset with parquet-go, e.g.
// parquet.ReadFile[records.Pair]("out/pairs/chunk-000000.parquet").
//
// A type's name is the schema name parquet-go writes into every file of its
// dataset: renaming a type changes the bytes of the files, so the names
// stay as they are.
package records

// BandRecord is one row of a band partition file: document Doc has band key Key
// in band Band. Files are sorted by (band, key, doc). FPHi and FPLo are the
// 128-bit fingerprint of the document's shingle set: documents with equal
// sets have equal band keys in every band, so each bucket holds whole
// exact-duplicate groups, which reduce recognises by fingerprint.
type BandRecord struct {
	Band int32 `parquet:"band"`
	Key  int64 `parquet:"key"`
	Doc  int64 `parquet:"doc"`
	FPHi int64 `parquet:"fp_hi"`
	FPLo int64 `parquet:"fp_lo"`
}

// Band is one row of a bands/ file: document Doc has band key Key in
// band Band, a key of partition Part. A file holds the partitions of one
// reduce task, a row group for each, sorted by (part, band, key, doc), so
// that a reader of one partition reads its row group alone (the part
// column's statistics name it). FP is 64 bits of the fingerprint of the
// document's shingle set (BandRecord's FPHi): reduce groups exact
// duplicates by it, and verify compares the claimed members' sets, so a
// collision fails loudly instead of merging two documents. Sorted columns
// are delta-encoded and pages zstd-compressed: about 18 bytes a row
// against BandRecord's 36 (the doc column compresses better plain than
// delta-encoded). The key and fingerprint columns' pages are stored
// uncompressed: zstd took 12% off the delta-encoded keys at a third of
// the time a file takes to write, and nothing off the fingerprints.
type Band struct {
	Part int32 `parquet:"part,delta"`
	Band int32 `parquet:"band,delta"`
	Key  int64 `parquet:"key,delta,uncompressed"`
	Doc  int64 `parquet:"doc"`
	FP   int64 `parquet:"fp,plain,uncompressed"`
}

// DocRecord maps a document ordinal to where the document came from.
// CompressedOffset and CompressedLength locate a WARC or WET record that
// is a gzip member of its own (Common Crawl's convention): one HTTP range
// request for those bytes of File, gunzipped, gives the record. They are
// null for other records. KeepNum and KeepStr are the value the job's
// --keep rule ranks the document by, read from its record: a number (a
// date as Unix seconds) or a string; both null when the rule ranks by no
// field or the record has no usable value.
type DocRecord struct {
	Doc              int64    `parquet:"doc"`
	ID               string   `parquet:"id"`
	URL              string   `parquet:"url"`
	File             string   `parquet:"file"`
	Offset           int64    `parquet:"byte_offset" formerly:"offset"`
	Line             int64    `parquet:"line"`
	Bytes            int64    `parquet:"bytes"`
	Tokens           int32    `parquet:"tokens"`
	Shingles         int32    `parquet:"shingles"`
	CompressedOffset *int64   `parquet:"compressed_offset,optional"`
	CompressedLength *int64   `parquet:"compressed_length,optional"`
	KeepNum          *float64 `parquet:"keep_num,optional"`
	KeepStr          *string  `parquet:"keep_str,optional"`
}

// Candidate is a pair of documents that share a band key; A < B. Band is the
// lowest band in which they collide within the partition. Only the
// representative (smallest ordinal) of an exact-duplicate group takes part
// in candidate pairs.
type Candidate struct {
	A    int64 `parquet:"a"`
	B    int64 `parquet:"b"`
	Band int32 `parquet:"band"`
}

// Pair is a verified near-duplicate pair; A < B. Similarity is what was
// compared with the threshold: the exact Jaccard of the shingle sets with
// Method "exact", else the signature estimate (the exact sets are not kept
// then). Estimate is the signature estimate, always (for SimHash
// 1 - Hamming/64). BandsCollided is how many of the job's bands have equal
// band keys for the two documents and FirstBand the lowest of them: a
// listed pair collides in at least one band (two documents of an exact
// group, with equal signatures, in all of them, the first being 0).
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
	// BandsCollided and FirstBand say why the pair was found: see above.
	BandsCollided int32  `parquet:"bands_collided"`
	FirstBand     int32  `parquet:"first_band"`
	AURL          string `parquet:"a_url"`
	BURL          string `parquet:"b_url"`
	// AJob and AOut name the earlier job that a is a document of, and
	// its output, for a pair of a job matched against earlier ones
	// (--against); null when a is the job's own.
	AJob *string `parquet:"a_job,optional"`
	AOut *string `parquet:"a_out,optional"`
	// APublished says, for a pair with an earlier job's document a,
	// whether that job kept it (published it): a pair against a
	// document its own job dropped is a match with a document no reader
	// of that job's output has. Null when a is the job's own.
	APublished *bool `parquet:"a_published,optional"`
}

// ExactRecord places one document in a group of documents with identical
// shingle sets (exact duplicates under the document model). Group is the
// group's smallest ordinal, its representative.
type ExactRecord struct {
	Doc       int64  `parquet:"doc"`
	ID        string `parquet:"id"`
	Group     int64  `parquet:"group_doc" formerly:"group"`
	GroupSize int32  `parquet:"group_size"`
}

// ExactMember is a document confirmed to have the same shingle set as the
// representative of its exact-duplicate group (a work-area record).
type ExactMember struct {
	Group   int64  `parquet:"group"`
	Doc     int64  `parquet:"doc"`
	GroupID string `parquet:"group_id"`
	ID      string `parquet:"id"`
	// GroupURL and URL are the representative's url and the member's.
	GroupURL string `parquet:"group_url"`
	URL      string `parquet:"url"`
}

// ClusterRecord places one document in a cluster of near-duplicates.
// Job names the earlier job (--against, --series) it is a document of,
// null for the job's own (as pairs/ names a_job). Keep says whether it
// is published: for the job's own documents, whether the job keeps it;
// for an earlier job's, whether that job kept it, which no later job
// changes.
type ClusterRecord struct {
	Doc         int64   `parquet:"doc"`
	ID          string  `parquet:"id"`
	Cluster     int64   `parquet:"cluster"`
	ClusterSize int32   `parquet:"cluster_size"`
	Keep        bool    `parquet:"keep"`
	URL         string  `parquet:"url"`
	Job         *string `parquet:"job,optional"`
}

// Duplicate is a document of the job to drop, with the document kept in
// its place: a published one, the job's own or an earlier job's, which
// KeptJob names (null for the job's own).
type Duplicate struct {
	Doc     int64   `parquet:"doc"`
	ID      string  `parquet:"id"`
	URL     string  `parquet:"url"`
	Cluster int64   `parquet:"cluster"`
	KeptDoc int64   `parquet:"kept_doc"`
	KeptID  string  `parquet:"kept_id"`
	KeptURL string  `parquet:"kept_url"`
	KeptJob *string `parquet:"kept_job,optional"`
}

// RejectRecord is an input record that was skipped, and why.
type RejectRecord struct {
	Chunk  int32  `parquet:"chunk"`
	File   string `parquet:"file"`
	Offset int64  `parquet:"byte_offset" formerly:"offset"`
	Line   int64  `parquet:"line"`
	Reason string `parquet:"reason"`
}

// Unit is one row of an index's unit table (index/units/, written with
// --paragraphs and --index): a distinct unit hash (as paragraphs/'
// unit_hash) of the documents the table counts, the number of those
// documents holding it (Holders) and the first of them (least ordinal,
// FirstDoc). The table of a job matched against earlier ones counts
// their documents too (index.UnitTable says which jobs). A file holds
// partitions (unit_hash mod the job's partitions) of one task, sorted by
// (part, unit_hash), a row group (or more) per partition.
type Unit struct {
	Part     int32 `parquet:"part,delta"`
	UnitHash int64 `parquet:"unit_hash,delta"`
	Holders  int64 `parquet:"holders"`
	FirstDoc int64 `parquet:"first_doc"`
}

// Paragraph is one row of paragraphs/ (--paragraphs): an occurrence, in
// document Doc of the job, of a unit (a line, or a paragraph) that
// Holders documents hold: of the job and, for a job matched against
// earlier ones (--against), of the earlier jobs whose unit tables it
// counted (the manifest names them). The unit is the UnitIndex-th of the
// document's units, its bytes text[ByteOffset:ByteOffset+ByteLength] of
// the document's text; UnitHash is the xxhash of its normalised text
// (tokens as the shingles see them, joined by spaces). FirstDoc is the
// first document (least ordinal) holding it, of job FirstJob: an
// earlier job's when one held it. A file
// holds the partitions of one task, sorted by (unit_hash, doc,
// unit_index); a unit held by more documents than --max-bucket lists the
// occurrences of its first max-bucket documents only (the manifest says
// how many units and rows that left out), Holders still counting all.
type Paragraph struct {
	UnitHash   int64  `parquet:"unit_hash"`
	Doc        int64  `parquet:"doc"`
	UnitIndex  int32  `parquet:"unit_index"`
	ID         string `parquet:"id"`
	ByteOffset int64  `parquet:"byte_offset"`
	ByteLength int32  `parquet:"byte_length"`
	Holders    int64  `parquet:"holders"`
	FirstDoc   int64  `parquet:"first_doc"`
	FirstJob   string `parquet:"first_job,dict"`
}
