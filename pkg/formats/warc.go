package formats

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Limits on WARC record headers: a longer line or header block means the
// file is not a WARC file or has lost its framing.
const (
	maxWARCHeaderLine  = 64 << 10
	maxWARCHeaderBytes = 1 << 20
)

// warcHeader holds the fields of a WARC record header that the readers use.
type warcHeader struct {
	typ         string // WARC-Type
	id          string // WARC-Record-ID
	uri         string // WARC-Target-URI
	contentType string // Content-Type
	length      int64  // Content-Length; -1 when missing or unreadable
	problem     string // the first malformed line or field, "" when none
	// value is the value of the field named field (Options.Field), set
	// when hasValue.
	field, value string
	hasValue     bool
}

// headerStatus tells how reading a WARC record header ended.
type headerStatus int

const (
	headerOK     headerStatus = iota // a header was read; its block follows
	headerEOF                        // clean end of the file
	headerLost                       // no usable header: skip to the next one
	headerFailed                     // the stream failed (see stream.failure)
)

// Resynchronisation: when the framing of a WARC file is broken (a record
// header that cannot be read, or a block whose Content-Length does not end
// where the next record begins), the reader skips to the next line that
// starts with warcMagic and rejects the bytes skipped as one record.
const (
	// rescanKeep is how much of a block that is not a document is kept in
	// memory, so that a record header inside it can be read again when
	// the block's Content-Length turns out to be too long.
	rescanKeep = 1 << 20
	// trailerWindow is how far past a block the reader looks for the
	// next record header to check the block's Content-Length.
	trailerWindow = 4 << 10
	// scanCheckEvery is the number of lines between two checks of the
	// context while skipping to the next record header.
	scanCheckEvery = 4096
)

// warcMagic starts the version line of every record header resync looks for.
var warcMagic = []byte("WARC/1.")

// readWARC reads the records of a WET or WARC stream.
func (r *pieceReader) readWARC(s *stream, kind Kind) error {
	h := warcHeader{field: r.o.Field}
	for {
		start, status, reason := readWARCHeader(s, &h)
		switch status {
		case headerEOF:
			return nil
		case headerFailed:
			if err := r.resync(s, start, "", true); err != nil {
				return err
			}
			continue
		case headerLost:
			if err := r.resync(s, start, reason, true); err != nil {
				return err
			}
			continue
		}
		if err := r.tick(start); err != nil {
			return err
		}
		blockStart := s.off
		last, err := r.takeBlock(s, h.length, min(h.length, max(r.blockNeed(&h, kind), rescanKeep)))
		lineStart := h.length == 0 || last == '\n'
		switch {
		case err != nil && s.failure() != nil:
			err = r.resync(s, start, "", true)
		case err != nil:
			err = r.resyncBlock(s, start, fmt.Sprintf("truncated WARC record: file ends %d bytes into a %d-byte block", s.off-blockStart, h.length), lineStart)
		case !trailerOK(s.peek(trailerWindow), lineStart):
			err = r.resyncBlock(s, start, fmt.Sprintf("WARC record framing broken: the %d-byte block (Content-Length) is not followed by a record header", h.length), lineStart)
		default:
			r.memberOff, r.memberLen = 0, 0
			if off, n, ok := s.ownMember(start, s.off, s.peek(trailerWindow)); ok {
				r.memberOff, r.memberLen = off, n
			}
			err = r.record(&h, kind, start)
		}
		if err != nil {
			return err
		}
	}
}

// blockNeed is how many bytes of the block of a record with header h must
// be held in memory to make a document of it: the whole block for a
// conversion (WET) or response (WARC) record within the size limits, else
// none.
func (r *pieceReader) blockNeed(h *warcHeader, kind Kind) int64 {
	switch {
	case h.problem != "":
		return 0
	case kind == KindWET && strings.EqualFold(h.typ, "conversion") && h.id != "" && h.length <= r.textLimit():
		return h.length
	case kind == KindWARC && strings.EqualFold(h.typ, "response") && h.length <= r.payloadLimit():
		return h.length
	}
	return 0
}

// takeBlock consumes the n-byte block of a record, keeping its first keep
// bytes in r.block, and returns the last byte consumed. The error is
// io.ErrUnexpectedEOF when the file ends first, or the stream's failure.
func (r *pieceReader) takeBlock(s *stream, n, keep int64) (last byte, err error) {
	r.block, err = s.readN(r.block[:0], keep)
	if len(r.block) > 0 {
		last = r.block[len(r.block)-1]
	}
	if err != nil || n == keep {
		return last, err
	}
	if err := s.discard(n - keep - 1); err != nil {
		return 0, err
	}
	return s.readByte()
}

// trailerOK reports whether next, the bytes after a block, are what ends a
// record whose Content-Length is right: "\r\n\r\n" or "\n\n" (what
// follows is then read as the next header), or blank space up to the end
// of the file or to a "WARC/" version line at the start of a line.
// lineStart tells whether the block ended with a line feed.
func trailerOK(next []byte, lineStart bool) bool {
	if bytes.HasPrefix(next, []byte("\r\n\r\n")) || bytes.HasPrefix(next, []byte("\n\n")) {
		return true
	}
	i := bytes.IndexFunc(next, func(c rune) bool { return c != ' ' && c != '\t' && c != '\r' && c != '\n' })
	if i < 0 {
		return true // blank to the end of the file or of the window
	}
	return bytes.HasPrefix(next[i:], []byte("WARC/")) && (lineStart && i == 0 || bytes.IndexByte(next[:i], '\n') >= 0)
}

// record turns a record whose block is in r.block (and whose framing has
// been checked) into a document, a reject, or nothing.
func (r *pieceReader) record(h *warcHeader, kind Kind, start int64) error {
	if h.problem != "" {
		return r.rejectf(start, 0, "malformed WARC record header: %s", h.problem)
	}
	if kind == KindWET {
		return r.conversionRecord(h, start)
	}
	return r.responseRecord(h, start)
}

// conversionRecord reads a WET record: the text of a 'conversion' record
// is the document.
func (r *pieceReader) conversionRecord(h *warcHeader, start int64) error {
	switch {
	case !strings.EqualFold(h.typ, "conversion"):
		return nil
	case h.id == "":
		return r.rejectf(start, 0, "malformed WARC record header: missing WARC-Record-ID")
	case h.length > r.textLimit():
		return r.rejectf(start, 0, "%s", r.tooLarge(h.length))
	}
	return r.doc(r.warcDoc(h, r.block, start))
}

// resyncBlock rejects the record at start, whose block has been consumed
// but does not end where the next record begins, and leaves s at the next
// record header. When the whole block is in r.block, the reader goes back
// to the first line in it that starts like a record header (a
// Content-Length too long has swallowed the start of the next record);
// otherwise it scans forward from the end of the block.
func (r *pieceReader) resyncBlock(s *stream, start int64, what string, lineStart bool) error {
	if blockStart := s.off - int64(len(r.block)); blockStart > start {
		if p := headerIndex(r.block); p >= 0 {
			s.unread(r.block[p:])
			lineStart = true
		}
	}
	return r.resync(s, start, what, lineStart)
}

// headerIndex returns the index of the first line of b that starts with
// warcMagic, or whose rest is the start of warcMagic (at the end of b),
// or -1.
func headerIndex(b []byte) int {
	for i := 0; i < len(b); {
		rest := b[i:]
		if bytes.HasPrefix(rest, warcMagic) || len(rest) < len(warcMagic) && bytes.HasPrefix(warcMagic, rest) {
			return i
		}
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			return -1
		}
		i += nl + 1
	}
	return -1
}

// skipped describes the skipped byte range from..to of a reject, in a form
// that tools can parse: "skipped N bytes from offset X to the next record
// header" (or "to the end of the file").
func skipped(from, to int64, header bool) string {
	end := "the end of the file"
	if header {
		end = "the next record header"
	}
	return fmt.Sprintf("skipped %d bytes from offset %d to %s", to-from, from, end)
}

// resync skips s forward from its position to the next record header (a
// line starting with warcMagic) or the end of the file, and rejects the
// bytes from start there as one record, because of what (may be empty
// when the cause is a stream failure). lineStart tells whether s is at
// the start of a line. A damaged gzip member on the way is skipped to the
// next member when there is one; otherwise reading ends with the stream's
// failure, as streamFailed.
func (r *pieceReader) resync(s *stream, start int64, what string, lineStart bool) error {
	var why []string
	if what != "" {
		why = append(why, what)
	}
	for {
		found, err := r.scanToHeader(s, lineStart)
		if err != nil {
			return err
		}
		cause := s.failure()
		if cause == nil {
			why = append(why, skipped(start, s.off, found))
			return r.reject(Reject{File: r.path, Offset: start, Reason: strings.Join(why, "; "), Skipped: s.off - start})
		}
		damage := s.describe(cause)
		from, to, ok := s.nextMember()
		if !ok {
			why = append(why, fmt.Sprintf("%s: %v; rest of file not read", damage, cause))
			if err := r.rejectf(start, 0, "%s", strings.Join(why, "; ")); err != nil {
				return err
			}
			return fmt.Errorf("%s: offset %d: %s: %w", r.path, start, damage, cause)
		}
		why = append(why, fmt.Sprintf("%s: %v; skipped %d compressed bytes from compressed byte %d to the next gzip member", damage, cause, to-from, from))
		lineStart = true // a member of a WARC file starts with a record
	}
}

// scanToHeader reads lines until one starts with warcMagic, leaving s at
// its start (found), or until the end of the stream or a stream failure
// (see stream.failure). lineStart tells whether s is at the start of a
// line. The error is the context's.
func (r *pieceReader) scanToHeader(s *stream, lineStart bool) (found bool, err error) {
	for lines := 1; ; lines++ {
		if lineStart && bytes.HasPrefix(s.peek(len(warcMagic)), warcMagic) {
			return true, nil
		}
		if lines%scanCheckEvery == 0 {
			if err := r.ctx.Err(); err != nil {
				return false, fmt.Errorf("%s: offset %d: %w", r.path, s.off, err)
			}
		}
		_, _, err := s.readLine(maxWARCHeaderLine)
		if err != nil && err != errLineTooLong {
			return false, nil // io.EOF or a failure
		}
		lineStart = true
	}
}

// readWARCHeader reads the next record header into h, skipping the blank
// lines that end the previous record. It returns the offset of the record,
// how reading ended, and for headerLost the reason.
func readWARCHeader(s *stream, h *warcHeader) (start int64, status headerStatus, reason string) {
	*h = warcHeader{length: -1, field: h.field}
	for {
		start = s.off
		line, _, err := s.readLine(maxWARCHeaderLine)
		switch {
		case err == errLineTooLong:
			return start, headerLost, "malformed WARC record: over-long line where a WARC/1.x version line was expected"
		case err != nil && err != io.EOF:
			return start, headerFailed, ""
		}
		if len(bytes.TrimSpace(line)) == 0 {
			if err == io.EOF {
				return start, headerEOF, ""
			}
			continue
		}
		if !bytes.HasPrefix(line, []byte("WARC/")) {
			return start, headerLost, fmt.Sprintf("malformed WARC record: expected a WARC/1.x version line, found %q", clip(line, 40))
		}
		if err == io.EOF {
			return start, headerLost, "truncated WARC record: file ends in the header"
		}
		break
	}
	total := 0
	var last *string // the field continuation lines add to
	for {
		line, n, err := s.readLine(maxWARCHeaderLine)
		total += int(n)
		switch {
		case err == errLineTooLong || total > maxWARCHeaderBytes:
			return start, headerLost, "malformed WARC record: header too long"
		case err == io.EOF:
			return start, headerLost, "truncated WARC record: file ends in the header"
		case err != nil:
			return start, headerFailed, ""
		}
		line = trimEOL(line)
		if len(line) == 0 {
			break
		}
		if line[0] == ' ' || line[0] == '\t' {
			if last != nil {
				*last += " " + string(bytes.TrimSpace(line))
			} else if h.problem == "" {
				h.problem = fmt.Sprintf("unexpected continuation line %q", clip(line, 40))
			}
			continue
		}
		last = nil
		name, value, ok := bytes.Cut(line, []byte{':'})
		name = bytes.TrimSpace(name)
		if !ok || len(name) == 0 {
			if h.problem == "" {
				h.problem = fmt.Sprintf("header line without a name: %q", clip(line, 40))
			}
			continue
		}
		value = bytes.TrimSpace(value)
		if h.field != "" && fieldIs(name, h.field) {
			h.value, h.hasValue, last = string(value), true, &h.value
		}
		switch {
		case fieldIs(name, "WARC-Type"):
			h.typ, last = string(value), &h.typ
		case fieldIs(name, "WARC-Record-ID"):
			h.id, last = string(value), &h.id
		case fieldIs(name, "WARC-Target-URI"):
			h.uri, last = string(value), &h.uri
		case fieldIs(name, "Content-Type"):
			h.contentType, last = string(value), &h.contentType
		case fieldIs(name, "Content-Length"):
			n, err := strconv.ParseInt(string(value), 10, 64)
			if err != nil || n < 0 {
				h.length = -1
				return start, headerLost, fmt.Sprintf("malformed WARC record header: invalid Content-Length %q", clip(value, 40))
			}
			h.length = n
		}
	}
	if h.length < 0 {
		return start, headerLost, "malformed WARC record header: missing Content-Length"
	}
	if h.typ == "" && h.problem == "" {
		h.problem = "missing WARC-Type"
	}
	return start, headerOK, ""
}

// fieldIs reports whether a header field name is want, ignoring case.
func fieldIs(name []byte, want string) bool {
	return len(name) == len(want) && strings.EqualFold(string(name), want)
}

// trimEOL removes a trailing "\n" or "\r\n".
func trimEOL(line []byte) []byte {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	return bytes.TrimSuffix(line, []byte{'\r'})
}

// clip shortens b to at most n bytes for a message.
func clip(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// targetURL returns a WARC-Target-URI without the angle brackets WARC/1.0
// writers sometimes put around it.
func targetURL(uri string) string {
	if len(uri) >= 2 && uri[0] == '<' && uri[len(uri)-1] == '>' {
		return uri[1 : len(uri)-1]
	}
	return uri
}

// warcDoc is the document of the WARC record at start with header h.
func (r *pieceReader) warcDoc(h *warcHeader, text []byte, start int64) Doc {
	d := Doc{ID: h.id, URL: targetURL(h.uri), Text: text, Offset: start,
		CompressedOffset: r.memberOff, CompressedLength: r.memberLen}
	if h.hasValue {
		d.Value = Value{Kind: ValueString, Str: h.value}
	}
	return d
}
