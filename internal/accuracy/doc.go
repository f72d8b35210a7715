// Package accuracy measures neardup's output against exact ground truth.
//
// Measure generates a corpus (corpus.AccuracyConfig: short documents and
// their copies, graded near copies, exact copies, a template family),
// computes every pair of documents with Jaccard similarity of at least 0.5
// (or the lowest threshold) exactly, runs the job in-process
// (control.Run, embedded NATS) once per method and threshold, and
// compares pairs/ and clusters.parquet with the truth: precision, and
// recall per similarity bin, for pairs as listed and pairs joined in one
// cluster, split by document length and by family.
//
// MeasureMultilingual does the same for a mixed crawl of generated text in
// eight languages and scripts (corpus.Multilingual) and reports recall per
// language and similarity bin, and the share of planted near copies (1% of
// their words or graphemes edited) that a run at 0.8 lists. Its truth
// comes from shingle.Shingles with the job's options, like Measure's, so
// it measures whatever tokenizer the job has.
//
// The ground truth does not use the job's kernel: shingle sets are
// shingle.Shingles strings hashed with xxhash64 (ShingleSet), and Join is
// an exact prefix-filtering self-join checked against brute force.
package accuracy
