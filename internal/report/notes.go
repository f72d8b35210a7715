package report

// countNote explains a count of the manifest.
func countNote(name string) string {
	switch name {
	case "input_bytes":
		return "bytes of the input files"
	case "text_bytes":
		return "bytes of document text after extraction"
	case "docs":
		return "documents read"
	case "rejected":
		return "records skipped, listed in rejects/"
	case "unread_files":
		return "input files or pieces that could not be read to their end (rejects/ \"unreadable\")"
	case "damaged_ranges":
		return "damaged ranges skipped: WARC/WET ranges to the next record (each lost the record it began with), Parquet row groups not read to their end"
	case "damaged_bytes":
		return "bytes of those ranges"
	case "damaged_rows":
		return "records known lost in them (Parquet rows)"
	case "changed_files":
		return "input files whose size or modification time changed after planning (manifest: changed_inputs)"
	case "unread_bytes":
		return "their bytes: documents in them are missing"
	case "empty":
		return "documents without a token: in no pair"
	case "thin":
		return "documents with 1 to 4 shingles: found as near copies only when nearly identical"
	case "signatures_gathered":
		return "signature records the gather stage sent to verify tasks (a document once per verify task that needs it; 0 when the job gathered none)"
	case "shingles":
		return "shingles, summed over the documents"
	case "band_records":
		return "band keys written: b per document with shingles"
	case "band_groups":
		return "runs of equal (band, key) in the reduce tasks"
	case "max_band_group":
		return "documents in the largest band bucket"
	case "candidate_rows":
		return "rows of candidates/: a pair colliding in several partitions is a row of each"
	case "candidates":
		return "the same as candidate_rows (its old name)"
	case "candidate_pairs_checked":
		return "distinct candidate pairs of representatives, each checked by verify"
	case "prefiltered":
		return "candidates rejected by their signatures alone (far below the threshold)"
	case "exact_checked":
		return "candidates whose exact similarity was computed"
	case "exact_groups":
		return "groups of documents with identical shingle sets"
	case "exact_duplicates":
		return "documents in exact groups beyond one per group"
	case "pairs":
		return "pairs listed in pairs/ (exact groups expanded)"
	case "pairs_against":
		return "of those, pairs with a document of an earlier job (--against)"
	case "bounded_buckets":
		return "band buckets over --max-bucket: not every pair compared"
	case "pairs_not_compared":
		return "pairs of those buckets not compared"
	case "bounded_clusters":
		return "clusters over --max-cluster-pairs: only the kept document's pairs listed"
	case "pairs_not_listed":
		return "pairs of those clusters not listed in pairs/"
	case "near_duplicates":
		return "documents to drop that are not exact duplicates"
	case "signature_passed":
		return "pairs the signature estimate alone would have accepted"
	case "signature_passed_exact":
		return "of those, pairs the exact similarity confirmed"
	case "verified_pairs":
		return "pairs of representatives at or above the threshold"
	case "clusters":
		return "clusters of 2 or more documents"
	case "clustered_docs":
		return "documents in a cluster"
	case "duplicates":
		return "documents to drop"
	case "largest_cluster":
		return "documents in the largest cluster"
	case "failed_chunks":
		return "map tasks that failed: their documents are missing"
	case "duplicate_ids":
		return "documents whose id another document of the job has too (documents minus distinct ids): a join on id matches them more than once"
	}
	return ""
}

func sketchNote(s string) string {
	switch s {
	case "dart":
		return "K independent values (a Poisson process of darts)"
	case "classic":
		return "K independent permutations"
	}
	return ""
}

func verifyNote(s string) string {
	switch s {
	case "exact":
		return "exact Jaccard similarity of the shingle sets"
	case "estimate":
		return "fraction of equal signature values"
	}
	return ""
}

func keepNote(s string) string {
	switch s {
	case "first":
		return "each cluster keeps its first document in input order"
	case "longest":
		return "each cluster keeps its longest document"
	}
	return ""
}
