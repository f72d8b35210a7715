package kept

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/klauspost/compress/gzip"

	"github.com/neardup/neardup/internal/storage"
)

// Limits on what a WARC record header may be: longer, it is not one.
const (
	maxHeaderLine  = 64 << 10
	maxHeaderBytes = 1 << 20
)

// gzipMagic starts every gzip member.
var gzipMagic = []byte{0x1f, 0x8b, 8}

// members copies a gzip WARC or WET file whose documents are gzip members
// of their own (Common Crawl's layout): the compressed bytes of the file
// as they are, without the members of the documents dropped. Every other
// byte (warcinfo, request and metadata records, rejected records) is
// copied too.
func (f *fileJob) members(file storage.File) error {
	src := bufio.NewReaderSize(io.NewSectionReader(file, 0, file.Size()), 256<<10)
	var pos int64 // compressed bytes of the file read so far
	copyTo := func(end int64) error {
		if end <= pos {
			return nil
		}
		if err := f.out.ensure(); err != nil {
			return err
		}
		n, err := io.CopyN(f.out, src, end-pos)
		pos += n
		if err != nil {
			return fmt.Errorf("%s: compressed byte %d: %w", f.in.Path, pos, err)
		}
		return nil
	}
	var (
		member []byte
		check  memberChecker
	)
	for n := 1; ; n++ {
		if n%checkEvery == 0 {
			if err := f.ctx.Err(); err != nil {
				return fmt.Errorf("%s: compressed byte %d: %w", f.in.Path, pos, err)
			}
		}
		next, err := f.docs.peek()
		if err != nil {
			return err
		}
		if next == nil {
			return copyTo(file.Size())
		}
		d := f.docs.take()
		off, length := *d.CompressedOffset, *d.CompressedLength
		if off < pos || off+length > file.Size() {
			return fmt.Errorf("%s: compressed byte %d: docs/ places document %d (id %q) in %d bytes there, outside the file or before the previous one", f.in.Path, off, d.Doc, d.ID, length)
		}
		if err := copyTo(off); err != nil {
			return err
		}
		write, err := f.write(d)
		if err != nil {
			return err
		}
		member = member[:0]
		member, err = appendN(member, src, length)
		pos += int64(len(member))
		if err != nil {
			return fmt.Errorf("%s: compressed byte %d: %w", f.in.Path, off, err)
		}
		if err := check.check(member, d.ID); err != nil {
			return fmt.Errorf("%s: compressed byte %d: document %d: %w", f.in.Path, off, d.Doc, err)
		}
		if write {
			if _, err := f.out.Write(member); err != nil {
				return err
			}
		}
	}
}

// appendN appends the next n bytes of r to dst.
func appendN(dst []byte, r io.Reader, n int64) ([]byte, error) {
	buf := bytes.NewBuffer(dst)
	_, err := io.CopyN(buf, r, n)
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return buf.Bytes(), err
}

// memberChecker checks that a gzip member holds the record it should; its
// decompressor and buffer serve member after member.
type memberChecker struct {
	src bytes.Reader
	zr  gzip.Reader
	br  *bufio.Reader
	hdr []byte
}

// check checks that member is one gzip member holding the WARC record
// whose WARC-Record-ID is id.
func (c *memberChecker) check(member []byte, id string) error {
	if !bytes.HasPrefix(member, gzipMagic) {
		return errors.New("no gzip member starts where docs/ says the record's does")
	}
	c.src.Reset(member)
	if err := c.zr.Reset(&c.src); err != nil {
		return fmt.Errorf("the record's gzip member: %w", err)
	}
	if c.br == nil {
		c.br = bufio.NewReaderSize(&c.zr, maxHeaderLine+16)
	}
	c.br.Reset(&c.zr)
	var err error
	if c.hdr, err = readHeader(c.br, c.hdr[:0]); err != nil {
		return fmt.Errorf("the record's gzip member: %w", err)
	}
	h, err := parseHeader(c.hdr)
	if err != nil {
		return fmt.Errorf("the record's gzip member: %w", err)
	}
	if h.id != id {
		return fmt.Errorf("the gzip member holds record %q, not %q", h.id, id)
	}
	return nil
}

// header is what the writer reads of a WARC record header.
type header struct {
	id     string
	length int64 // Content-Length; -1 when missing or not a number
}

// readHeader appends the WARC record header at r (version line to blank
// line) to dst. A header that is cut short or too long is an error.
func readHeader(r *bufio.Reader, dst []byte) ([]byte, error) {
	start := len(dst)
	for {
		line, err := r.ReadSlice('\n')
		dst = append(dst, line...)
		switch {
		case errors.Is(err, bufio.ErrBufferFull) || len(dst)-start > maxHeaderBytes:
			return dst, errors.New("WARC record header too long")
		case err != nil:
			return dst, fmt.Errorf("WARC record header cut short: %w", err)
		case len(bytes.TrimRight(line, "\r\n")) == 0:
			return dst, nil
		}
	}
}

// parseHeader parses a WARC record header: its version line, its fields
// and the blank line that ends it.
func parseHeader(b []byte) (header, error) {
	h := header{length: -1}
	if !bytes.HasPrefix(b, []byte("WARC/")) {
		return h, fmt.Errorf("no WARC/ version line but %q", clip(b))
	}
	for _, line := range bytes.Split(b, []byte{'\n'})[1:] {
		name, value, ok := bytes.Cut(bytes.TrimRight(line, "\r"), []byte{':'})
		if !ok {
			continue
		}
		value = bytes.TrimSpace(value)
		switch strings.ToLower(string(bytes.TrimSpace(name))) {
		case "warc-record-id":
			h.id = string(value)
		case "content-length":
			if n, err := strconv.ParseInt(string(value), 10, 64); err == nil && n >= 0 {
				h.length = n
			}
		}
	}
	return h, nil
}

// clip shortens a line for a message.
func clip(b []byte) []byte {
	return b[:min(len(b), 40)]
}

// records copies a WARC or WET file that is not made of one gzip member
// per record (uncompressed, one gzip stream, zstd): decompressed, record
// by record, each as a gzip member of its own, without the records of the
// documents dropped. A record is its header, block and the blank lines
// after it (bytes that are no record, where the framing is broken, are
// copied as one piece up to the next line starting "WARC/"); it never runs
// past the offset where docs/ places a document.
func (f *fileJob) records(file storage.File) error {
	src, done, err := decompress(file, compressionOf(f.in), f.in.Path)
	if err != nil {
		return err
	}
	defer done()
	gz := gzip.NewWriter(io.Discard)
	open := false // whether gz is writing a member
	f.out.end = func() error {
		if !open {
			return nil
		}
		open = false
		return gz.Close()
	}
	r := &recordReader{r: bufio.NewReaderSize(src, maxHeaderLine+4096), path: f.in.Path}
	for n := 1; ; n++ {
		if n%checkEvery == 0 {
			if err := f.ctx.Err(); err != nil {
				return fmt.Errorf("%s: offset %d: %w", f.in.Path, r.off, err)
			}
		}
		r.stop = -1
		if len(r.peek(1)) == 0 {
			return r.failed()
		}
		start := r.off
		d, isDoc, err := f.docs.at(start)
		if err != nil {
			return err
		}
		if r.stop, err = f.docs.nextOffset(); err != nil {
			return err
		}
		var sink io.Writer = io.Discard
		write := true
		if isDoc {
			write, err = f.write(d)
		} else {
			err = f.out.ensure()
		}
		if err != nil {
			return err
		}
		if write {
			if open {
				if err := gz.Close(); err != nil {
					return fmt.Errorf("%s: %w", f.out.name, err)
				}
			}
			gz.Reset(f.out)
			open, sink = true, gz
		}
		id, err := r.record(sink)
		if err != nil {
			return fmt.Errorf("%s: offset %d: %w", f.in.Path, start, err)
		}
		if isDoc && id != d.ID {
			return fmt.Errorf("%s: offset %d: docs/ places document %d (id %q) here, but the record there is %q", f.in.Path, start, d.Doc, d.ID, id)
		}
	}
}

// recordReader cuts a decompressed WARC stream into records.
type recordReader struct {
	r    *bufio.Reader
	path string
	off  int64 // offset of the next byte in the stream
	stop int64 // reads end at this offset; -1: no bound
	err  error // the stream's error, other than its end
	hdr  bytes.Buffer
}

// peek returns up to n of the next bytes, none past stop.
func (r *recordReader) peek(n int) []byte {
	if r.stop >= 0 {
		n = int(min(int64(n), r.stop-r.off))
	}
	b, err := r.r.Peek(n)
	if err != nil && !errors.Is(err, io.EOF) && r.err == nil {
		r.err = err
	}
	return b
}

// failed returns the stream's error, naming the file and offset.
func (r *recordReader) failed() error {
	if r.err != nil {
		return fmt.Errorf("%s: offset %d: %w", r.path, r.off, r.err)
	}
	return nil
}

// copyN copies up to n bytes, none past stop, to w.
func (r *recordReader) copyN(w io.Writer, n int64) (int64, error) {
	if r.stop >= 0 {
		n = min(n, r.stop-r.off)
	}
	got, err := io.CopyN(w, r.r, n)
	r.off += got
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return got, err
}

// line copies the rest of the line, its '\n' included, to w, stopping at
// stop; it returns the bytes copied.
func (r *recordReader) line(w io.Writer) (int64, error) {
	var total int64
	for {
		b := r.peek(4096)
		if len(b) == 0 {
			return total, r.failed()
		}
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[:i+1]
		}
		n, err := r.copyN(w, int64(len(b)))
		total += n
		if err != nil || b[len(b)-1] == '\n' {
			return total, err
		}
	}
}

// record copies one record to w and returns its WARC-Record-ID: its
// header, its block and the blank lines after it. Bytes that are not a
// record (broken framing: garbage, a header cut short) run to the next
// line starting "WARC/" and are copied as one piece, whose id is "".
func (r *recordReader) record(w io.Writer) (string, error) {
	if bytes.HasPrefix(r.peek(5), []byte("WARC/")) {
		h, n, err := r.header(w)
		if err != nil {
			return "", err
		}
		if n > 0 && h.length >= 0 {
			if _, err := r.copyN(w, h.length); err != nil {
				return "", err
			}
			return h.id, r.blankLines(w)
		}
	}
	for {
		p := r.peek(5)
		if len(p) == 0 || bytes.HasPrefix(p, []byte("WARC/")) {
			return "", r.failed()
		}
		if _, err := r.line(w); err != nil {
			return "", err
		}
	}
}

// blankLines copies the line ends that follow a record's block.
func (r *recordReader) blankLines(w io.Writer) error {
	for {
		n := 0
		switch p := r.peek(2); {
		case bytes.HasPrefix(p, []byte("\r\n")):
			n = 2
		case bytes.HasPrefix(p, []byte("\n")):
			n = 1
		default:
			return r.failed()
		}
		if _, err := r.copyN(w, int64(n)); err != nil {
			return err
		}
	}
}

// header copies the WARC record header at the reader's position to w and
// parses it; n is 0 when it is not a whole header within stop (its bytes
// are copied all the same).
func (r *recordReader) header(w io.Writer) (header, int64, error) {
	buf := &r.hdr
	buf.Reset()
	var total int64
	for {
		n, err := r.line(io.MultiWriter(w, buf))
		total += n
		if err != nil {
			return header{}, 0, err
		}
		b := buf.Bytes()
		switch {
		case n == 0 || b[len(b)-1] != '\n' || total > maxHeaderBytes:
			return header{length: -1}, 0, nil // cut short, or not a header
		case len(bytes.TrimRight(b[len(b)-int(n):], "\r\n")) == 0:
			h, err := parseHeader(b)
			if err != nil {
				return header{length: -1}, 0, nil
			}
			return h, total, nil
		}
	}
}
