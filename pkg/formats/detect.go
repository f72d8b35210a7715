package formats

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// KindAuto asks Detect to find a file's kind from its name, else from its
// content.
const KindAuto Kind = "auto"

// ParseKind parses the value of --input-format: auto, warc, wet, jsonl,
// parquet or text.
func ParseKind(s string) (Kind, error) {
	switch k := Kind(strings.ToLower(s)); k {
	case KindAuto, KindWARC, KindWET, KindJSONL, KindParquet:
		return k, nil
	case "text", KindText:
		return KindText, nil
	}
	return "", fmt.Errorf("--input-format must be auto, warc, wet, jsonl, parquet or text, not %q", s)
}

// String returns the name of k, as ParseKind reads it.
func (k Kind) String() string { return string(k) }

// Set sets k to the kind s names, as ParseKind reads it ("text" or
// "JSONL" give KindText and KindJSONL): with String, *Kind is a
// flag.Value.
func (k *Kind) Set(s string) error {
	v, err := ParseKind(s)
	if err != nil {
		return err
	}
	*k = v
	return nil
}

// Format is what an input file holds and how it is compressed.
type Format struct {
	Kind Kind
	// Compression is "gzip", "zstd" or "none" when the file's content
	// told it, "" when its name does (a .gz or .zst ending, or none).
	Compression string
}

// UnknownKindError is the error of Detect for a file whose kind neither
// its name nor its content tells.
type UnknownKindError struct {
	Path   string
	Reason string
}

func (e *UnknownKindError) Error() string {
	return fmt.Sprintf("%s: unknown input kind: %s; supported kinds: %s", e.Path, e.Reason, supportedList)
}

// sniffBytes is how much of a file (decompressed) Detect looks at.
const sniffBytes = 64 << 10

// Magic numbers.
var (
	zstdMagic    = []byte{0x28, 0xb5, 0x2f, 0xfd}
	parquetMagic = []byte("PAR1")
)

// Detect returns the format of the file at path. With want KindAuto, a
// name that tells the kind (DetectKind) decides without reading the file;
// otherwise the first bytes do: Parquet's magic "PAR1"; then, after gzip or
// zstd decompression when the file starts with their magic, "WARC/1." (WET
// when the first record other than warcinfo is a conversion, WARC
// otherwise) or a JSON object on the first line (JSONL). Any other want is
// the kind; the compression is then the name's, or the content's when the
// name has no .gz or .zst ending. A file of no known kind gives an
// *UnknownKindError; a file that cannot be read, its error.
func Detect(ctx context.Context, open OpenFunc, path string, want Kind) (Format, error) {
	if want == KindAuto {
		if k, err := DetectKind(path); err == nil {
			return Format{Kind: k}, nil
		}
	} else if Compressed(path) || want == KindParquet {
		return Format{Kind: want}, nil
	}
	if open == nil {
		open = openLocal
	}
	f, err := open(ctx, path)
	if err != nil {
		return Format{}, err
	}
	defer f.Close()
	raw := make([]byte, min(f.Size(), sniffBytes))
	if _, err := io.ReadFull(f, raw); err != nil {
		return Format{}, fmt.Errorf("%s: reading its first %d bytes: %w", path, len(raw), err)
	}
	comp := compressNone
	switch {
	case bytes.HasPrefix(raw, gzipMagic):
		comp = compressGzip
	case bytes.HasPrefix(raw, zstdMagic):
		comp = compressZstd
	}
	if want != KindAuto {
		return Format{Kind: want, Compression: comp.String()}, nil
	}
	if bytes.HasPrefix(raw, parquetMagic) {
		return Format{Kind: KindParquet, Compression: compressNone.String()}, nil
	}
	head, err := decompressHead(raw, comp)
	if err != nil {
		return Format{}, &UnknownKindError{Path: path, Reason: fmt.Sprintf("starts like a %s stream but %v", comp, err)}
	}
	kind, reason := sniffKind(head, len(raw) < sniffBytes && comp == compressNone)
	if kind == "" {
		if comp != compressNone {
			reason = comp.String() + "-compressed, " + reason
		}
		return Format{}, &UnknownKindError{Path: path, Reason: reason}
	}
	return Format{Kind: kind, Compression: comp.String()}, nil
}

// decompressHead returns up to sniffBytes of the decompressed start of a
// stream whose first bytes are raw.
func decompressHead(raw []byte, comp compression) ([]byte, error) {
	var r io.Reader
	switch comp {
	case compressNone:
		return raw, nil
	case compressGzip:
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		r = zr
	case compressZstd:
		zr, err := zstd.NewReader(bytes.NewReader(raw), zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		r = zr
	}
	head := make([]byte, sniffBytes)
	n, err := io.ReadFull(r, head)
	if n == 0 && err != nil {
		// A stream cut short by sniffBytes still gives its first bytes;
		// one that gives none is not a stream of this kind.
		return nil, fmt.Errorf("does not decompress: %w", err)
	}
	return head[:n], nil
}

// sniffKind tells the kind of a file from its first (decompressed) bytes,
// or why it cannot; whole tells whether head is the whole file.
func sniffKind(head []byte, whole bool) (Kind, string) {
	if len(head) == 0 {
		return "", "empty file"
	}
	if bytes.HasPrefix(head, warcMagic) {
		return warcKind(head), ""
	}
	line, _, complete := bytes.Cut(bytes.TrimLeft(head, " \t\r\n\ufeff"), []byte{'\n'})
	complete = complete || whole
	switch {
	case len(line) == 0 || line[0] != '{':
		return "", fmt.Sprintf("content starts with %q, not WARC/1., a JSON object or PAR1", clip(head, 16))
	case complete && !json.Valid(line):
		return "", "the first line starts like a JSON object but is not one (JSON Lines need one object per line)"
	}
	return KindJSONL, ""
}

// warcKind tells WET from WARC by the WARC-Type of the first records of
// head other than warcinfo: conversion is WET, anything else WARC; a head
// holding warcinfo only is taken as WARC.
func warcKind(head []byte) Kind {
	s, _ := newStream(bytes.NewReader(head), compressNone, 0)
	defer s.close()
	var h warcHeader
	for {
		_, status, _ := readWARCHeader(s, &h)
		if status != headerOK {
			return KindWARC
		}
		if !strings.EqualFold(h.typ, "warcinfo") {
			if strings.EqualFold(h.typ, "conversion") {
				return KindWET
			}
			return KindWARC
		}
		if err := s.discard(h.length); err != nil {
			return KindWARC
		}
	}
}

// IsUnknownKind reports whether err is Detect's error for a file of no
// known kind.
func IsUnknownKind(err error) bool {
	var u *UnknownKindError
	return errors.As(err, &u)
}
