// Package corpus generates deterministic synthetic web corpora with planted
// near-duplicates, for testing and benchmarking near-duplicate detection.
//
// Documents are built from a Pool of real English sentences (the prose in
// this package's prose/ directory is built in: BundledPool). A regular
// document is 10 to 40 sentences drawn at random from the whole pool and
// grouped into paragraphs, so two unrelated documents share almost no word
// 5-gram shingles. A configurable fraction of documents (30% by default)
// form planted families: a base document plus 1 to 7 copies. A copy is
// either an exact, byte-identical copy (5% of all documents by default) or a
// near copy with a random, non-empty mix of mutations: word substitutions,
// insertions and deletions (each touching 0.1% to 0.5% of the words, at
// least one word), one moved sentence or paragraph, and an added navigation
// header and copyright footer. With the defaults, about 99% of base-to-copy
// pairs and 90% of copy-to-copy pairs have a word 5-gram Jaccard similarity
// above 0.8, while unrelated documents stay below 0.15. There are also short
// documents (one 5 to 30 word fragment of a sentence) and a few empty or
// punctuation-only ones. Copies are scattered across the corpus, never next
// to another member of their family.
//
// AccuracyConfig gives a corpus for measuring accuracy rather than speed:
// about 30% of its documents have under 40 words (short documents, and
// families of short documents with near copies one or two word edits away
// and exact copies), the near copies of regular families are graded so
// that their similarity to the base covers 0.45 to 1 evenly, and a
// template family of pages sharing a 240-word template around unique
// parts of 2 to 140 words has pairwise similarities from about 0.45 to
// 0.95. Its fields are zero in DefaultConfig, whose corpora are unchanged.
//
// Every choice comes from a small built-in SplitMix64 generator keyed by
// the seed, a purpose and the document position, so a Generator's
// documents are pure functions of (pool, Config, position): output is
// byte-identical across runs, machines, Go releases and worker counts, and
// documents can be produced in parallel or out of order.
//
// Write stores a corpus as JSONL ({"id","url","text"} per line), as
// Common Crawl style WET files (a warcinfo record, then one WARC/1.0
// conversion record per document) or as WARC files whose response records
// carry an HTTP/1.1 response with an HTML page (text in <p> elements,
// plus <script>, <style> and <nav> boilerplate for an HTML-to-text
// extractor to remove). Gzipped WARC and WET files hold one gzip member per
// record, as Common Crawl's do. Alongside, a ground-truth JSONL file gives
// each document's family ("cluster"), kind and mutations (see Truth).
package corpus
