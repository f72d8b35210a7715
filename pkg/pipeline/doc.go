// Package pipeline finds near-duplicate documents in web crawls and text
// corpora, from a Go program: it runs the jobs of the coordinator command,
// queries their indexes and reads their outputs.
//
// A job (Run) reads Common Crawl WET and WARC files, JSONL, Parquet and
// plain text files, locally or in object storage, and writes Parquet into
// its output directory (Options.Out):
//
//	pairs/*.parquet      every near-duplicate pair once, with its Jaccard similarity (Pairs)
//	clusters.parquet     every document in a cluster of two or more, and the one kept (Clusters)
//	duplicates.parquet   the documents to drop, each with the one kept in its place (Duplicates)
//	exact.parquet        the groups of documents with identical shingle sets
//	docs/*.parquet       every document read: its ordinal, id, url, file and offset
//	rejects/*.parquet    the input records skipped, and why (Rejects)
//	manifest.json        parameters, counts, timings and warnings; report.html shows them
//	index/               what OpenIndex and later jobs (Options.Against) read
//	_SUCCESS             written last: the job is complete
//
// The pairs are found by MinHash signatures cut into bands and then
// checked by their exact Jaccard similarity (Options.Threshold, 0.8 by
// default), or by SimHash (Options.Method); the clusters are the connected
// components of the pairs. The rows are the types of package
// github.com/neardup/neardup/pkg/records; any Parquet reader (DuckDB,
// Spark, pandas) reads the files too.
//
// A job runs on a NATS JetStream work queue: by default a server embedded
// in the process with in-process workers, nothing to set up; with
// Options.NATSURL, the worker processes of a NATS cluster. A job stopped
// half-way resumes when run again with the same options.
//
// A minimal program:
//
//	res, err := pipeline.Run(ctx, pipeline.Options{Inputs: []string{"crawl/"}, Out: "out"})
//	if err != nil {
//		return err
//	}
//	fmt.Println(res.Counts.Docs, "documents,", res.Counts.Duplicates, "to drop")
//	for d, err := range pipeline.Duplicates(ctx, res.Out) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(d.ID, "is a near-duplicate of", d.KeptID)
//	}
//
// The command line, the columns of every dataset and the method in full
// are in the repository's README.md and docs/.
package pipeline
