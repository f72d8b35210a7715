package formats

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Kind is the format of an input file.
type Kind string

// The supported input kinds.
const (
	KindWET     Kind = "wet"     // .warc.wet, .warc.wet.gz : WARC 'conversion' records
	KindWARC    Kind = "warc"    // .warc, .warc.gz : WARC 'response' records with HTML (or text/plain) bodies
	KindJSONL   Kind = "jsonl"   // .jsonl, .jsonl.gz, .jsonl.zst (also .ndjson variants)
	KindParquet Kind = "parquet" // .parquet
	KindText    Kind = "txt"     // .txt : one document per file
)

// suffixes maps file name endings (lower case) to kinds. Longer endings
// that share a tail with shorter ones come first.
var suffixes = [...]struct {
	suffix string
	kind   Kind
}{
	{".warc.wet.gz", KindWET},
	{".warc.wet", KindWET},
	{".warc.gz", KindWARC},
	{".warc", KindWARC},
	{".jsonl.gz", KindJSONL},
	{".jsonl.zst", KindJSONL},
	{".jsonl", KindJSONL},
	{".ndjson.gz", KindJSONL},
	{".ndjson.zst", KindJSONL},
	{".ndjson", KindJSONL},
	{".parquet", KindParquet},
	{".txt", KindText},
}

// supportedList is the human-readable list of supported names used in
// DetectKind's error.
const supportedList = "wet (.warc.wet, .warc.wet.gz), warc (.warc, .warc.gz), " +
	"jsonl (.jsonl, .jsonl.gz, .jsonl.zst, .ndjson, .ndjson.gz, .ndjson.zst), " +
	"parquet (.parquet), txt (.txt)"

// DetectKind returns the kind of a file from its name (case-insensitive);
// an unsupported name gives an error that names the file and lists the
// supported kinds.
func DetectKind(path string) (Kind, error) {
	name := strings.ToLower(filepath.Base(fileName(path)))
	for _, s := range suffixes {
		if strings.HasSuffix(name, s.suffix) {
			return s.kind, nil
		}
	}
	return "", fmt.Errorf("%s: unsupported input file name; supported kinds: %s", path, supportedList)
}

// Compressed reports whether the file is gzip- or zstd-compressed by its
// name (a .gz or .zst ending, case-insensitive).
func Compressed(path string) bool {
	return compressionOf(path) != compressNone
}

// IsCompressed reports whether a file is compressed, given the compression
// its content told (Format.Compression), or "" to go by its name.
func IsCompressed(path, compression string) bool {
	return compressionFor(path, compression) != compressNone
}

// compressionFor is the compression of a file: the one its content told,
// else its name's.
func compressionFor(path, compression string) compression {
	switch compression {
	case "gzip":
		return compressGzip
	case "zstd":
		return compressZstd
	case "none":
		return compressNone
	}
	return compressionOf(path)
}

// fileName is path without the query of an object-store URL
// (s3://bucket/key?endpoint=...), whose options are not part of its name.
func fileName(path string) string {
	if strings.Contains(path, "://") {
		if i := strings.IndexByte(path, '?'); i >= 0 {
			return path[:i]
		}
	}
	return path
}

// compression is the compression of a file, from its name.
type compression int

const (
	compressNone compression = iota
	compressGzip
	compressZstd
)

// compressionOf returns the compression of a file from its name.
func compressionOf(path string) compression {
	name := strings.ToLower(fileName(path))
	switch {
	case strings.HasSuffix(name, ".gz"):
		return compressGzip
	case strings.HasSuffix(name, ".zst"):
		return compressZstd
	}
	return compressNone
}

// String names the compression for messages.
func (c compression) String() string {
	switch c {
	case compressGzip:
		return "gzip"
	case compressZstd:
		return "zstd"
	}
	return "none"
}
