package examples

import (
	"bufio"
	"bytes"
	"context"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/pkg/formats"
	"github.com/neardup/neardup/pkg/records"
)

// The example texts of a compressed JSONL file (one gzip or zstd stream,
// whose records have no compressed offsets) are found by their offsets in
// the decompressed stream: one pass over the file decompresses it up to
// the last of them, skipping the records between without parsing them
// (decompressing alone is ~40% of reading: the benchmark corpus's texts
// took ~0.8 s of CPU read as the job reads them, ~0.25 s so), and parses
// each wanted record alone, as readText would. A file that cannot be
// read so (a damaged stream, whose later offsets count only the bytes
// read) leaves its texts to readText, which says why.

// skimmable returns the piece of chunk that holds the record of docs/ row
// r if it is a compressed JSONL file read whole, else nil.
func skimmable(chunk *job.Chunk, r records.DocRecord) *formats.Piece {
	pc, err := pieceOf(chunk, r)
	if err != nil || pc.Kind != formats.KindJSONL || !formats.IsCompressed(pc.Path, pc.Compression) || pc.Start != 0 || pc.End >= 0 {
		return nil
	}
	return pc
}

// skimTexts returns the texts of docs/ rows (of pc's file, by offset),
// each nil if it could not be found so.
func skimTexts(ctx context.Context, o formats.Options, pc formats.Piece, rows []records.DocRecord) []*string {
	texts := make([]*string, len(rows))
	f, err := o.Open(ctx, pc.Path)
	if err != nil {
		return texts
	}
	defer f.Close()
	plain, closeFn, err := decompressor(bufio.NewReaderSize(f, 64<<10))
	if err != nil {
		return texts
	}
	defer closeFn()
	br := bufio.NewReaderSize(plain, 64<<10)
	var pos int64 // offset of br's next byte in the decompressed stream
	for i, r := range rows {
		if r.Offset < pos {
			continue // two rows at one offset: not a file's records
		}
		if _, err := io.CopyN(io.Discard, br, r.Offset-pos); err != nil {
			return texts
		}
		line, err := br.ReadBytes('\n')
		pos = r.Offset + int64(len(line))
		if err != nil && err != io.EOF || r.Offset > 0 && bytes.HasPrefix(line, []byte("\xef\xbb\xbf")) {
			return texts // a byte order mark is trimmed at the file's start only
		}
		// The record alone, as the uncompressed line it is, at line r.Line.
		one := formats.Piece{Path: pc.Path, Kind: formats.KindJSONL, End: -1, StartLine: r.Line, Compression: "none"}
		lo := o
		lo.Open = func(context.Context, string) (formats.File, error) { return lineFile{bytes.NewReader(line)}, nil }
		if text, err := readRecord(ctx, one, lo, 0, r); err == nil {
			texts[i] = &text
		}
	}
	return texts
}

// decompressor returns the decompressed stream of a gzip or zstd file
// (told by its first bytes) read through src, every gzip member of it in
// turn, and how to release it.
func decompressor(src *bufio.Reader) (io.Reader, func(), error) {
	if magic, _ := src.Peek(4); bytes.Equal(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}) {
		zr, err := zstd.NewReader(src, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, nil, err
		}
		return zr, zr.Close, nil
	}
	zr, err := gzip.NewReader(src)
	if err != nil {
		return nil, nil, err
	}
	return zr, func() { zr.Close() }, nil
}

// lineFile is one record's line seen as a whole file.
type lineFile struct{ *bytes.Reader }

func (lineFile) Close() error  { return nil }
func (l lineFile) Size() int64 { return l.Reader.Size() }
