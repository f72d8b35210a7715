// Package neardup is the module of neardup, which finds near-duplicate
// documents in web crawls and text corpora. Its Go API is package
// github.com/neardup/neardup/pkg/pipeline: Run runs a dedup job, OpenIndex
// queries a finished job's index, and Pairs, Clusters, Duplicates and
// Rejects read its outputs. The commands are cmd/coordinator and
// cmd/worker; the Parquet rows are the types of pkg/records.
package neardup
