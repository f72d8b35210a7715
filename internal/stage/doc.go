// Package stage holds the stages of a dedup job, each a function from its
// inputs to its outputs over a storage.FS, with no knowledge of the queue
// that runs it:
//
//   - Map reads one chunk of the input and writes its documents,
//     signatures and band records.
//   - Reduce merges one band partition and turns every bucket into
//     candidate pairs of exact-group representatives, and claims for the
//     groups.
//   - Verify checks the candidates and claims of one chunk against the
//     signatures and shingle sets.
//   - The cluster stage joins the verified pairs and exact groups into
//     clusters and writes pairs/, exact.parquet, clusters.parquet and
//     duplicates.parquet. It runs as steps of tasks (ClusterTask), each
//     over one partition of the documents, driven by RunCluster: rounds
//     of large-star and small-star until the connected components are
//     stars, then the components brought together by label, then the
//     outputs.
//   - CompleteMapOutputs, after every map task, and the cluster stage give
//     a dataset no task wrote a file of (rejects/, bands/, pairs/) one
//     empty file with its schema.
//
// Query (package query) uses the stages' own logic through
// NewDocSketcher (a text's set, signature and band keys, as Map computes
// them), LookupBands and ReadBandTable (band files), OpenSigFile and
// JudgePair (verification, as Verify judges).
//
// Every stage is idempotent: run again on the same inputs, it writes the
// same files.
package stage
