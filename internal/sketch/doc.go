// Package sketch is neardup's document model and its verdict.
//
// The model: a text's tokens and shingle hashes (package shingle), its
// MinHash signature or SimHash fingerprint, its band keys and its
// fingerprint for the exact-duplicate pass, computed by a Sketcher; how a
// signature and a shingle set are stored (AppendSig, AppendSet and their
// decoders); and ModelFingerprint, which tells whether two builds compute
// the same of the same text.
//
// The verdict: Rule decides whether a pair of documents is a
// near-duplicate. It is the only place that does: the verify stage (for
// jobs and --against), query, and index compaction (through the records
// it keeps) all judge pairs through a Rule, so that a document queried
// against an index meets the verdict its job would have given.
package sketch
