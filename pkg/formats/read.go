package formats

import (
	"context"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/neardup/neardup/internal/localfile"
)

// Doc is one document read from an input.
type Doc struct {
	// ID is the WARC-Record-ID (angle brackets kept as in the file), the
	// JSON id field, the parquet id column, or the path for .txt; for a
	// JSONL line or parquet row without an id (missing, null or empty):
	// "<file>:<line>" or "<file>:<row>" (row index from 0).
	ID string
	// URL is the WARC-Target-URI, or the JSON/parquet url field when
	// present (field name "url"), else "".
	URL string
	// Text is the document text, valid UTF-8. It may be reused by the
	// reader after emit returns: the callee copies what it keeps.
	Text []byte
	// Offset is the byte offset of the record in the file, or the row index
	// for parquet. For compressed files it is the offset in the
	// decompressed stream.
	Offset int64
	// Line is the 1-based line number for JSONL, 0 otherwise.
	Line int64
	// CompressedOffset and CompressedLength locate a WARC or WET record
	// that is a gzip member of its own (Common Crawl's convention): the
	// CompressedLength bytes of the file from CompressedOffset decompress
	// to the record. CompressedLength is 0 otherwise (other kinds, files
	// not gzip-compressed, a record sharing its member, as in a
	// single-stream gzip file).
	CompressedOffset int64
	CompressedLength int64
	// Value is the record's value of Options.Field: a top-level member
	// of a JSONL line, a top-level column of a Parquet row, a header of
	// a WARC or WET record (its name compared ignoring case); ValueNone
	// when Options.Field is "" or the record has none.
	Value Value
}

// Reject is a record that could not be read, and why.
type Reject struct {
	File   string
	Offset int64  // as Doc.Offset
	Line   int64  // as Doc.Line
	Reason string // short and clear, e.g. "invalid UTF-8 in text at byte 12"
	// Skipped is the length of a damaged range the reader skipped to find
	// the next record (from Offset; the reason says so too), 0 for a reject
	// of one well-framed record. The records in it are lost: as far as can
	// be known, the one the range began with.
	Skipped int64
	// Rows is how many records the damaged range is known to have held
	// (Parquet: the rows of a row group that could not be read), 0 when
	// the reader cannot tell.
	Rows int64
}

// Options controls reading.
type Options struct {
	IDField     string // JSONL and parquet id field, default "id"
	TextField   string // JSONL and parquet text field, default "text"
	MaxDocBytes int    // documents with more text bytes are rejected; 0 means no limit
	// Field names a field whose value each document carries in
	// Doc.Value (a JSONL member, a Parquet column, a WARC header); ""
	// reads none.
	Field string
	// Open opens an input file by the path (or URL) of a piece; nil opens
	// local files.
	Open OpenFunc
}

// File is an open input file, readable sequentially and at offsets.
type File interface {
	io.Reader
	io.ReaderAt
	io.Closer
	Size() int64
}

// OpenFunc opens an input file by path or URL.
type OpenFunc func(ctx context.Context, path string) (File, error)

// openLocal opens a local file, a regular one only: a named pipe, a
// socket or a device (or a link to one) is refused without blocking, with
// an error naming it and its type.
func openLocal(_ context.Context, path string) (File, error) {
	f, st, err := localfile.Open(path)
	if err != nil {
		return nil, err // names the file
	}
	return localFile{File: f, size: st.Size()}, nil
}

type localFile struct {
	*os.File
	size int64
}

func (f localFile) Size() int64 { return f.size }

// Size limits. With MaxDocBytes 0 no single record above
// hardRecordLimit is held in memory: such records are rejected.
const (
	hardRecordLimit = 256 << 20
	maxDocBytesCap  = 1 << 40 // keeps the derived limits from overflowing
	ctxCheckEvery   = 64      // records between two checks of the context
)

// withDefaults fills in the default field names and bounds MaxDocBytes.
func (o Options) withDefaults() Options {
	if o.IDField == "" {
		o.IDField = "id"
	}
	if o.TextField == "" {
		o.TextField = "text"
	}
	o.MaxDocBytes = min(max(o.MaxDocBytes, 0), maxDocBytesCap)
	if o.Open == nil {
		o.Open = openLocal
	}
	return o
}

// Read reads the documents of one piece, calling emit for every document
// and reject for every record that is skipped. An error returned by emit or
// reject stops reading and is returned as is.
//
// Read returns an error (naming the file and offset) only when the file
// cannot be read any further: unopenable file, truncated or corrupt
// compressed stream (after a Reject for the records lost), or ctx
// cancelled. A bad record is a Reject and reading goes on with the next
// record when the framing allows it.
//
// WARC and WET readers resynchronise when the framing is broken: a record
// header that cannot be read, or a block that is not followed by the next
// record header where its Content-Length says (too long, too short, past
// the end of the file), is skipped to the next line starting with
// "WARC/1.", and the whole skipped byte range is one Reject at the offset
// where it starts, whose reason ends with "skipped N bytes from offset X
// to the next record header" (or "to the end of the file"). Records whose
// header lies in the skipped range are lost with it. In a gzip file, a
// damaged member is skipped to the next gzip member, and the reason also
// says "skipped N compressed bytes from compressed byte X to the next gzip
// member"; offsets after that count the decompressed bytes read, which no
// longer match the decompressed stream since the damaged member's bytes
// are unknown.
//
// Records that are not documents are skipped silently: WARC records other
// than 'conversion' (WET) or 'response' (WARC), responses with a non-2xx
// status or a payload that is neither HTML nor text/plain, blank JSONL
// lines.
//
// Only uncompressed JSONL can be read in byte ranges; pieces of other files
// must cover the whole file (Start 0, End -1), as Split makes them.
func Read(ctx context.Context, p Piece, o Options, emit func(Doc) error, reject func(Reject) error) error {
	o = o.withDefaults()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: offset %d: %w", p.Path, p.Start, err)
	}
	if p.Start < 0 || p.End >= 0 && p.End <= p.Start {
		return fmt.Errorf("%s: invalid byte range %d..%d (End -1 means to the end of the file)", p.Path, p.Start, p.End)
	}
	switch p.Kind {
	case KindParquet, KindText, KindWET, KindWARC:
		if !p.whole() {
			return fmt.Errorf("%s: %s files are read whole, not in byte range %d..%d", p.Path, p.Kind, p.Start, p.End)
		}
	case KindJSONL:
		if !p.whole() && p.compression() != compressNone {
			return fmt.Errorf("%s: compressed files are read whole, not in byte range %d..%d", p.Path, p.Start, p.End)
		}
	default:
		return fmt.Errorf("%s: unsupported kind %q", p.Path, p.Kind)
	}
	r := &pieceReader{ctx: ctx, path: p.Path, o: o, emit: emit, reject: reject}
	f, err := o.Open(ctx, p.Path)
	if err != nil {
		return err // names the file
	}
	defer f.Close()
	switch p.Kind {
	case KindParquet:
		return r.readParquet(f)
	case KindText:
		return r.readText(f, p.compression())
	}
	if p.Start > f.Size() {
		return fmt.Errorf("%s: offset %d is beyond the file's end (%d bytes)", p.Path, p.Start, f.Size())
	}
	return r.readStream(io.NewSectionReader(f, p.Start, f.Size()-p.Start), p)
}

// readStream reads a WET, WARC or JSONL piece from src, which is positioned
// at p.Start.
func (r *pieceReader) readStream(src io.Reader, p Piece) error {
	s, err := newStream(src, p.compression(), p.Start)
	if err != nil {
		return fmt.Errorf("%s: offset %d: %w", p.Path, p.Start, err)
	}
	defer s.close()
	if p.Kind == KindJSONL {
		return r.readJSONL(s, max(p.StartLine, 1), p.End)
	}
	s.trackMembers()
	return r.readWARC(s, p.Kind)
}

// pieceReader is the state shared by the readers of one piece.
type pieceReader struct {
	ctx     context.Context
	path    string
	o       Options
	emit    func(Doc) error
	reject  func(Reject) error
	records int // records seen, for the context checks
	// member is the gzip member of the WARC record being read, when it
	// is the record's own (length 0 otherwise).
	memberOff, memberLen int64

	// Buffers reused from record to record.
	text      []byte // document text
	id        []byte // decoded JSON id and url
	block     []byte // WARC record block
	chunks    []byte // HTTP body without its chunked transfer coding
	decoded   []byte // HTTP body without its content coding
	converted []byte // text converted to UTF-8
}

// tick counts a record and checks the context every ctxCheckEvery records.
func (r *pieceReader) tick(off int64) error {
	r.records++
	if r.records%ctxCheckEvery == 0 {
		if err := r.ctx.Err(); err != nil {
			return fmt.Errorf("%s: offset %d: %w", r.path, off, err)
		}
	}
	return nil
}

// rejectf reports a skipped record.
func (r *pieceReader) rejectf(off, line int64, format string, args ...any) error {
	return r.reject(Reject{File: r.path, Offset: off, Line: line, Reason: fmt.Sprintf(format, args...)})
}

// doc checks a document's text and emits it, or rejects it.
func (r *pieceReader) doc(d Doc) error {
	if reason := r.checkText(d.Text); reason != "" {
		return r.rejectf(d.Offset, d.Line, "%s", reason)
	}
	return r.emit(d)
}

// checkText returns why text cannot be a document, or "".
func (r *pieceReader) checkText(text []byte) string {
	if r.o.MaxDocBytes > 0 && len(text) > r.o.MaxDocBytes {
		return r.tooLarge(int64(len(text)))
	}
	if !utf8.Valid(text) {
		return fmt.Sprintf("invalid UTF-8 in text at byte %d", invalidUTF8At(text))
	}
	return ""
}

// tooLarge is the reason for rejecting a document of n text bytes.
func (r *pieceReader) tooLarge(n int64) string {
	if r.o.MaxDocBytes > 0 {
		return fmt.Sprintf("document of %d bytes exceeds --max-doc-bytes %d", n, r.o.MaxDocBytes)
	}
	return fmt.Sprintf("record of %d bytes exceeds the %d-byte record limit", n, hardRecordLimit)
}

// textLimit is the largest document text read into memory.
func (r *pieceReader) textLimit() int64 {
	if r.o.MaxDocBytes > 0 {
		return int64(r.o.MaxDocBytes)
	}
	return hardRecordLimit
}

// streamFailed reports the records lost when the stream s stops at off:
// one reject for the record at off and the rest of the file, then the
// error.
func (r *pieceReader) streamFailed(s *stream, off, line int64) error {
	cause := s.failure()
	what := s.describe(cause)
	if err := r.rejectf(off, line, "%s: %v; rest of file not read", what, cause); err != nil {
		return err
	}
	return fmt.Errorf("%s: offset %d: %s: %w", r.path, off, what, cause)
}

// invalidUTF8At returns the index of the first byte of b that is not part
// of a valid UTF-8 sequence, or len(b).
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		c, size := utf8.DecodeRune(b[i:])
		if c == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return len(b)
}
