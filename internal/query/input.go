package query

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"github.com/neardup/neardup/pkg/formats"
)

// The formats of the documents to query.
const (
	// FormatAuto is FormatJSONL for a .jsonl (.ndjson, compressed too)
	// name, FormatText for .txt, else FormatJSONL if the first non-blank
	// byte is '{', else FormatText.
	FormatAuto = "auto"
	// FormatJSONL is one JSON object a line, with "id" and "text" fields
	// (read by package formats, as a job reads its input).
	FormatJSONL = "jsonl"
	// FormatText is one document a line; its id is its line number.
	FormatText = "text"
)

// Stdin is the path that names standard input.
const Stdin = "-"

// maxLineBytes bounds a line of text input (as formats' default bound on
// a document).
const maxLineBytes = 16 << 20

// jsonlLineBytes bounds a line of JSONL input: room for a text of
// maxLineBytes with escapes, and the other fields (formats' bound on a
// line, with MaxDocBytes maxLineBytes).
const jsonlLineBytes = 2*maxLineBytes + 64<<10

// ReadDocs reads the documents of path (Stdin: stdin) in format and
// passes them to fn in batches of at most batch documents, in input
// order. A line that is not a document (invalid JSON, no text field, too
// long) is an error naming the input, the line and its offset. Blank
// lines are skipped.
func ReadDocs(ctx context.Context, path string, stdin io.Reader, format string, batch int, fn func([]Doc) error) error {
	if batch < 1 {
		return fmt.Errorf("batch of %d documents: want at least 1", batch)
	}
	name := path
	var src io.Reader
	if path == Stdin {
		name, src = "standard input", stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return err // names the file
		}
		defer f.Close()
		src = f
	}
	br := bufio.NewReaderSize(src, 1<<16)
	if format == FormatAuto {
		format = sniff(path, br)
	}
	b := &batcher{size: batch, fn: fn}
	switch format {
	case FormatText:
		if err := readLines(ctx, name, br, b.add); err != nil {
			return err
		}
	case FormatJSONL:
		if err := readJSONL(ctx, path, name, br, b.add); err != nil {
			return err
		}
	default:
		return fmt.Errorf("format %q: want %s, %s or %s", format, FormatAuto, FormatJSONL, FormatText)
	}
	return b.flush()
}

// sniff tells the format of an input by its name, else by its first
// non-blank byte.
func sniff(path string, br *bufio.Reader) string {
	if path != Stdin {
		if k, err := formats.DetectKind(path); err == nil {
			switch k {
			case formats.KindJSONL:
				return FormatJSONL
			case formats.KindText:
				return FormatText
			}
		}
	}
	for n := 1; n <= br.Size(); n++ {
		head, err := br.Peek(n)
		if len(head) == n {
			switch c := head[n-1]; c {
			case ' ', '\t', '\r', '\n':
				continue
			case '{':
				return FormatJSONL
			default:
				return FormatText
			}
		}
		if err != nil {
			break
		}
	}
	return FormatText
}

// batcher gathers documents into batches.
type batcher struct {
	size int
	fn   func([]Doc) error
	docs []Doc
}

func (b *batcher) add(d Doc) error {
	b.docs = append(b.docs, d)
	if len(b.docs) < b.size {
		return nil
	}
	return b.flush()
}

func (b *batcher) flush() error {
	if len(b.docs) == 0 {
		return nil
	}
	docs := b.docs
	b.docs = nil
	return b.fn(docs)
}

// readLines reads one document a line.
func readLines(ctx context.Context, name string, br *bufio.Reader, add func(Doc) error) error {
	var off int64
	for line := int64(1); ; line++ {
		if line%64 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		text, err := readLine(br)
		switch {
		case errors.Is(err, errLineTooLong):
			return fmt.Errorf("%s: line %d (offset %d): longer than %d bytes", name, line, off, maxLineBytes)
		case err != nil && err != io.EOF:
			return fmt.Errorf("%s: line %d (offset %d): %w", name, line, off, err)
		}
		n := len(text)
		text = trimEOL(text)
		if len(text) > 0 {
			if err := add(Doc{ID: strconv.FormatInt(line, 10), Text: text}); err != nil {
				return err
			}
		}
		off += int64(n)
		if err == io.EOF {
			return nil
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine reads a line with its end (a copy), at most maxLineBytes.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, err := br.ReadSlice('\n')
		line = append(line, part...)
		if len(line) > maxLineBytes {
			return nil, errLineTooLong
		}
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

// readJSONL reads JSONL with package formats (decompressed by the path's
// name), from br. A line of an uncompressed input longer than
// jsonlLineBytes is an error once that many bytes of it are read:
// formats skips such a line to its end before rejecting it, which on a
// stream that never ends a line (/dev/zero) would read for ever. (A
// compressed input's lines are those of its decompressed bytes, which
// formats alone sees: there the skip ends with the input.)
func readJSONL(ctx context.Context, path, name string, br *bufio.Reader, add func(Doc) error) error {
	piece := formats.Piece{Path: path, Kind: formats.KindJSONL, Start: 0, End: -1, StartLine: 1}
	var src io.Reader = br
	bound := &lineBound{r: br, limit: jsonlLineBytes, line: 1}
	if path == Stdin || !formats.Compressed(path) {
		src = bound
	}
	open := func(context.Context, string) (formats.File, error) { return &seqFile{r: src}, nil }
	emit := func(d formats.Doc) error {
		return add(Doc{ID: d.ID, Text: append([]byte(nil), d.Text...)})
	}
	reject := func(r formats.Reject) error {
		return fmt.Errorf("%s: line %d (offset %d): %s", name, r.Line, r.Offset, r.Reason)
	}
	err := formats.Read(ctx, piece, formats.Options{Open: open, MaxDocBytes: maxLineBytes}, emit, reject)
	if bound.tooLong {
		return fmt.Errorf("%s: line %d (offset %d): longer than %d bytes", name, bound.line, bound.start, bound.limit)
	}
	return err
}

// errLineBound is what lineBound reads once a line is too long.
var errLineBound = errors.New("line too long")

// lineBound passes a stream through until a line of it runs longer than
// limit bytes, then fails (errLineBound), recording the line's number and
// offset.
type lineBound struct {
	r       io.Reader
	limit   int64
	off     int64 // offset of the next byte
	start   int64 // offset of the line being read
	line    int64 // its number
	tooLong bool
}

func (b *lineBound) Read(p []byte) (int, error) {
	if b.tooLong {
		return 0, errLineBound
	}
	n, err := b.r.Read(p)
	for i := 0; i < n; {
		j := bytes.IndexByte(p[i:n], '\n')
		if j < 0 {
			break
		}
		if b.off+int64(i+j)-b.start > b.limit {
			break // the line ended past the limit
		}
		b.start, b.line = b.off+int64(i+j+1), b.line+1
		i += j + 1
	}
	b.off += int64(n)
	if b.off-b.start > b.limit {
		b.tooLong = true
		return n, errLineBound
	}
	return n, err
}

// seqFile is a stream read as a formats.File of unknown size: read from
// its start, in order, as a whole JSONL piece is.
type seqFile struct {
	r   io.Reader
	off int64
}

func (s *seqFile) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.off += int64(n)
	return n, err
}

func (s *seqFile) ReadAt(p []byte, off int64) (int, error) {
	if off != s.off {
		return 0, fmt.Errorf("a stream is read in order: offset %d asked at %d", off, s.off)
	}
	return s.Read(p)
}

func (s *seqFile) Close() error { return nil }

func (s *seqFile) Size() int64 { return math.MaxInt64 }
