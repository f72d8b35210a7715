package formats

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// streamBufSize is the buffer size of the decompressed stream; WARC header
// lines and HTTP response heads longer than this are malformed.
const streamBufSize = 128 << 10

// errLineTooLong is returned by stream.readLine for a line above its limit.
var errLineTooLong = errors.New("line too long")

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// stickyReader remembers the first error other than io.EOF of the reader
// under it, so that a failing decompressor can be told apart from the
// clean end of the stream after bufio and io.ReadFull have reshaped errors.
type stickyReader struct {
	r   io.Reader
	err error
}

func (s *stickyReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
	return n, err
}

// stream is the decompressed content of an input, read line by line or in
// blocks, keeping count of the offset of the next unread byte.
type stream struct {
	comp    compression
	counter *countingReader // compressed bytes taken from the file
	cbuf    *bufio.Reader   // buffered compressed input under the decompressor
	gz      *gzip.Reader    // the decompressor of a gzip stream, else nil
	sticky  *stickyReader
	src     io.Reader // what r reads: sticky, behind any bytes given back with unread
	r       *bufio.Reader
	off     int64  // offset of the next unread byte in the decompressed stream
	line    []byte // reused buffer for lines longer than the bufio buffer
	closeFn func()
	// members are, when tracked (WARC and WET), the gzip members of a
	// gzip stream that end past the record being read, oldest first;
	// dout counts the bytes all members produced.
	track   bool
	members []member
	dout    int64
}

// member is where one gzip member of a file lies: its compressed bytes
// and the decompressed bytes it produced.
type member struct {
	cstart, cend int64 // compressed; cend -1 while the member is read
	dstart, dend int64 // decompressed; dend -1 while the member is read
}

// newStream sets up the decompression of src; off is the offset src starts
// at (non-zero only for byte-range pieces of uncompressed files).
func newStream(src io.Reader, comp compression, off int64) (*stream, error) {
	s := &stream{comp: comp, off: off, closeFn: func() {}}
	var plain io.Reader = src
	if comp != compressNone {
		s.counter = &countingReader{r: src}
		s.cbuf = bufio.NewReaderSize(s.counter, 64<<10)
	}
	switch comp {
	case compressGzip:
		zr, err := gzip.NewReader(s.cbuf)
		if err != nil {
			if err == io.EOF {
				return nil, errors.New("empty file, not a gzip stream")
			}
			return nil, fmt.Errorf("not a readable gzip stream: %w", err)
		}
		zr.Multistream(false)
		s.gz = zr
		plain, s.closeFn = memberReader{s}, func() { zr.Close() }
	case compressZstd:
		zr, err := zstd.NewReader(s.cbuf, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, fmt.Errorf("not a readable zstd stream: %w", err)
		}
		plain, s.closeFn = zr, zr.Close
	}
	s.sticky = &stickyReader{r: plain}
	s.src = s.sticky
	s.r = bufio.NewReaderSize(s.src, streamBufSize)
	return s, nil
}

// memberReader reads a gzip stream member by member, noting where each
// member starts and ends.
type memberReader struct{ s *stream }

func (m memberReader) Read(p []byte) (int, error) {
	s := m.s
	for {
		n, err := s.gz.Read(p)
		s.dout += int64(n)
		if err != io.EOF {
			return n, err
		}
		if len(s.members) > 0 {
			last := &s.members[len(s.members)-1]
			last.cend, last.dend = s.compressedOffset(), s.dout
		}
		if _, err := s.cbuf.Peek(1); err != nil {
			if err == io.EOF {
				return n, io.EOF
			}
			return n, err
		}
		next := s.compressedOffset()
		if err := s.gz.Reset(s.cbuf); err != nil {
			return n, err
		}
		s.gz.Multistream(false)
		s.startMember(next)
		if n > 0 {
			return n, nil
		}
	}
}

// trackMembers has the stream note where its gzip members lie, from the
// first, for ownMember. Call it before the first read.
func (s *stream) trackMembers() {
	if s.gz != nil && s.dout == 0 {
		s.track = true
		s.startMember(0)
	}
}

// startMember notes, when members are tracked, that a gzip member starts
// at compressed byte cstart, after the dout bytes produced so far.
func (s *stream) startMember(cstart int64) {
	if s.track {
		s.members = append(s.members, member{cstart: cstart, cend: -1, dstart: s.dout, dend: -1})
	}
}

// ownMember returns the compressed offset and length of the gzip member
// that holds the record from decompressed offset start to end and nothing
// else: it starts at start and ends at end or in the blank lines that
// follow (trailer, the bytes after end). Members that end before start
// are forgotten. ok is false when the stream is not gzip or the record
// shares its member.
func (s *stream) ownMember(start, end int64, trailer []byte) (off, length int64, ok bool) {
	i := 0
	for i < len(s.members)-1 && s.members[i].dend >= 0 && s.members[i].dend <= start {
		i++
	}
	s.members = s.members[i:]
	if len(s.members) == 0 {
		return 0, 0, false
	}
	m := s.members[0]
	blank := int64(len(trailer) - len(bytes.TrimLeft(trailer, "\r\n")))
	if m.dstart != start || m.dend < end || m.dend > end+blank {
		return 0, 0, false
	}
	return m.cstart, m.cend - m.cstart, true
}

// close releases the decompressor.
func (s *stream) close() { s.closeFn() }

// failure returns the error that stopped the stream, or nil when it ended
// cleanly (or has not ended).
func (s *stream) failure() error { return s.sticky.err }

// describe names a stream failure for reject reasons and errors, without
// the cause itself.
func (s *stream) describe(err error) string {
	switch {
	case s.comp == compressNone:
		return "read error"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Sprintf("truncated %s stream at compressed byte %d", s.comp, s.compressedOffset())
	case s.comp == compressGzip:
		return fmt.Sprintf("corrupt gzip member at compressed byte %d", s.compressedOffset())
	}
	return fmt.Sprintf("corrupt %s stream at compressed byte %d", s.comp, s.compressedOffset())
}

// compressedOffset is about how far the decompressor has read into the
// compressed file.
func (s *stream) compressedOffset() int64 {
	if s.counter == nil {
		return s.off
	}
	return s.counter.n - int64(s.cbuf.Buffered())
}

// readLine reads one line, with its '\n' if any. It returns the number of
// bytes consumed, which is also the line length unless the line is longer
// than limit: then the line is consumed without being kept and the error is
// errLineTooLong (or the stream error if the stream also failed). At the
// end of the stream the error is io.EOF, with the last unterminated line if
// there is one. The line is valid until the next call.
func (s *stream) readLine(limit int) ([]byte, int64, error) {
	frag, err := s.r.ReadSlice('\n')
	n := int64(len(frag))
	if err != bufio.ErrBufferFull {
		s.off += n
		if len(frag) > limit {
			return nil, n, s.lineError(err)
		}
		return frag, n, err
	}
	tooLong := len(frag) > limit
	if !tooLong {
		s.line = append(s.line[:0], frag...)
	}
	for err == bufio.ErrBufferFull {
		frag, err = s.r.ReadSlice('\n')
		n += int64(len(frag))
		if !tooLong && n > int64(limit) {
			tooLong = true
			s.line = s.line[:0]
		}
		if !tooLong {
			s.line = append(s.line, frag...)
		}
	}
	s.off += n
	if tooLong {
		return nil, n, s.lineError(err)
	}
	return s.line, n, err
}

// lineError is the error for a line that was too long, given the error that
// ended reading it.
func (s *stream) lineError(err error) error {
	if err != nil && err != io.EOF {
		return err
	}
	return errLineTooLong
}

// readN appends the next n bytes to dst. The buffer grows with the data
// read, not with n, so that a record header claiming a huge length costs
// no more memory than the bytes that are really there. A short read gives
// io.ErrUnexpectedEOF; see failure to tell it from a decompression error.
func (s *stream) readN(dst []byte, n int64) ([]byte, error) {
	want := len(dst) + int(n)
	for len(dst) < want {
		if len(dst) == cap(dst) {
			dst = slices.Grow(dst, min(want-len(dst), max(len(dst), 64<<10)))
		}
		got, err := io.ReadFull(s.r, dst[len(dst):min(cap(dst), want)])
		dst = dst[:len(dst)+got]
		s.off += int64(got)
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// discard skips n bytes, returning io.ErrUnexpectedEOF if the stream ends
// first.
func (s *stream) discard(n int64) error {
	for n > 0 {
		step := int(min(n, 1<<30))
		got, err := s.r.Discard(step)
		s.off += int64(got)
		n -= int64(got)
		if err != nil {
			if err == io.EOF {
				return io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

// peek returns up to n bytes without consuming them (fewer at the end of
// the stream or when n exceeds the buffer).
func (s *stream) peek(n int) []byte {
	b, _ := s.r.Peek(min(n, streamBufSize))
	return b
}

// readByte reads one byte, returning io.ErrUnexpectedEOF at the end of the
// stream.
func (s *stream) readByte() (byte, error) {
	c, err := s.r.ReadByte()
	if err == io.EOF {
		return 0, io.ErrUnexpectedEOF
	}
	if err == nil {
		s.off++
	}
	return c, err
}

// unread gives back b, the last len(b) bytes read, so that they are read
// again: the offset goes back by len(b). b is copied.
func (s *stream) unread(b []byte) {
	if len(b) == 0 {
		return
	}
	buffered, _ := s.r.Peek(s.r.Buffered())
	front := make([]byte, 0, len(b)+len(buffered))
	front = append(append(front, b...), buffered...)
	// io.MultiReader flattens nested multiReaders and drops drained
	// readers, so repeated unreads do not build up a chain.
	s.src = io.MultiReader(bytes.NewReader(front), s.src)
	s.r.Reset(s.src)
	s.off -= int64(len(b))
}

// gzipMagic starts every gzip member: ID1, ID2 and CM (deflate).
var gzipMagic = []byte{0x1f, 0x8b, 8}

// nextMember skips a damaged gzip member after the stream has failed: it
// looks for the next gzip member header after the compressed byte where
// the decompressor stopped and restarts decompression there. It returns
// the compressed range skipped, from where decompression failed to the
// member it restarted at; ok is false when the stream is not gzip or no
// later member can be started (the failure then stands). Call it only once
// the failure has been returned by a read, so that nothing decoded before
// the failure is still buffered.
func (s *stream) nextMember() (from, to int64, ok bool) {
	if s.gz == nil || s.failure() == nil {
		return 0, 0, false
	}
	from = s.compressedOffset()
	for {
		b, _ := s.cbuf.Peek(s.cbuf.Size())
		i := bytes.Index(b, gzipMagic)
		if i < 0 {
			if len(b) < len(gzipMagic) {
				return from, s.compressedOffset(), false
			}
			s.cbuf.Discard(len(b) - len(gzipMagic) + 1)
			continue
		}
		s.cbuf.Discard(i)
		to = s.compressedOffset()
		// Reset reads the member header, at least the magic bytes, so a
		// false start is passed over on the next round.
		if s.gz.Reset(s.cbuf) == nil {
			s.gz.Multistream(false)
			// The damaged member's end is unknown: no record is its own.
			s.members = s.members[:0]
			s.startMember(to)
			s.sticky.err = nil
			s.r.Reset(s.src)
			return from, to, true
		}
	}
}
