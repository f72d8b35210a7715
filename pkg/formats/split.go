package formats

import (
	"bytes"
	"context"
	"fmt"
	"io"
)

// Piece is a byte range of one input file: the unit a chunk is made of.
type Piece struct {
	Path      string `json:"path"`
	Kind      Kind   `json:"kind"`
	Start     int64  `json:"start"`      // first byte (0 for a whole file)
	End       int64  `json:"end"`        // one past the last byte; -1 means to the end of the file
	StartLine int64  `json:"start_line"` // 1-based number of the line at Start (JSONL only; 1 otherwise)
	// Compression is the file's as its content told (Format.Compression),
	// "" to go by its name.
	Compression string `json:"compression,omitempty"`
	// FileSize and FileMTime are the file's size and modification time
	// (Unix nanoseconds) when the piece was planned, for a reader to tell
	// a file changed since; FileMTime 0 when unknown. Reading ignores
	// them.
	FileSize  int64 `json:"file_size,omitempty"`
	FileMTime int64 `json:"file_mtime,omitempty"`
}

// compression is the compression of p's file.
func (p Piece) compression() compression { return compressionFor(p.Path, p.Compression) }

// whole reports whether p covers its whole file.
func (p Piece) whole() bool { return p.Start == 0 && p.End < 0 }

// splitBufSize is the read size used while scanning a file for cut points.
const splitBufSize = 1 << 20

// Split cuts one file into pieces of about target bytes. Only uncompressed
// JSONL is cut (at line boundaries, each piece's StartLine computed by
// counting newlines); every other file is one whole piece (End=-1), as is a
// JSONL file when target <= 0. A piece boundary never splits a record: each
// record belongs to exactly one piece, and each piece starts at a line
// start. The last piece of a file always has End=-1.
//
// open opens the file (nil: a local file).
func Split(ctx context.Context, open OpenFunc, path string, kind Kind, target int64) ([]Piece, error) {
	whole := []Piece{{Path: path, Kind: kind, Start: 0, End: -1, StartLine: 1}}
	if kind != KindJSONL || Compressed(path) || target <= 0 {
		return whole, nil
	}
	if open == nil {
		open = openLocal
	}
	f, err := open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("split: %w", err)
	}
	defer f.Close()
	if f.Size() <= target {
		return whole, nil
	}
	pieces, err := splitLines(io.NewSectionReader(f, 0, f.Size()), path, target)
	if err != nil {
		return nil, fmt.Errorf("split %s: %w", path, err)
	}
	return pieces, nil
}

// splitLines scans r, cutting after the first newline at or beyond every
// target bytes from the previous cut.
func splitLines(r io.Reader, path string, target int64) ([]Piece, error) {
	var (
		pieces    []Piece
		start     int64 // start of the current piece
		startLine int64 = 1
		line      int64 = 1 // number of the line at pos
		pos       int64     // file offset of the next byte to scan
		buf       = make([]byte, splitBufSize)
	)
	for {
		n, err := io.ReadFull(r, buf)
		chunk := buf[:n]
		for len(chunk) > 0 {
			// Bytes before the earliest allowed cut point only count lines.
			if skip := start + target - 1 - pos; skip > 0 {
				if skip >= int64(len(chunk)) {
					line += int64(bytes.Count(chunk, []byte{'\n'}))
					pos += int64(len(chunk))
					break
				}
				line += int64(bytes.Count(chunk[:skip], []byte{'\n'}))
				pos += skip
				chunk = chunk[skip:]
			}
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				pos += int64(len(chunk))
				break
			}
			line++
			pos += int64(i + 1)
			chunk = chunk[i+1:]
			pieces = append(pieces, Piece{Path: path, Kind: KindJSONL, Start: start, End: pos, StartLine: startLine})
			start, startLine = pos, line
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if start < pos || len(pieces) == 0 {
		pieces = append(pieces, Piece{Path: path, Kind: KindJSONL, Start: start, End: -1, StartLine: startLine})
	} else {
		// The file ends with the newline that closed the last piece.
		pieces[len(pieces)-1].End = -1
	}
	return pieces, nil
}
