// Package formats reads crawl and corpus files into documents: WARC and WET
// files (plain or gzip-compressed), JSON Lines (plain, gzip or zstd),
// Parquet tables and plain text files.
//
// A file's kind is told by its name (DetectKind) or, when the name does
// not tell it, by its content (Detect). A file is then cut into pieces
// with Split, then each piece is read with
// Read, which calls back once per document and once per record that had to
// be skipped (a Reject, with the file, offset and reason). Bad records never
// stop reading when the file framing allows the reader to go on; Read
// returns an error only when the rest of the file cannot be read.
package formats
