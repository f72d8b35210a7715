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
}

// headerStatus tells how reading a WARC record header ended.
type headerStatus int

const (
	headerOK     headerStatus = iota // a header was read; its block follows
	headerEOF                        // clean end of the file
	headerLost                       // no usable framing: the rest of the file is lost
	headerFailed                     // the stream failed (see stream.failure)
)

// readWARC reads the records of a WET or WARC stream.
func (r *pieceReader) readWARC(s *stream, kind Kind) error {
	var h warcHeader
	for {
		start, status, reason := readWARCHeader(s, &h)
		switch status {
		case headerEOF:
			return nil
		case headerFailed:
			return r.streamFailed(s, start, 0)
		case headerLost:
			return r.rejectf(start, 0, "%s; rest of file skipped", reason)
		}
		if err := r.tick(start); err != nil {
			return err
		}
		var more bool
		var err error
		switch {
		case h.problem != "":
			more, err = r.rejectRecord(s, &h, start, "malformed WARC record header: "+h.problem)
		case kind == KindWET:
			more, err = r.conversionRecord(s, &h, start)
		default:
			more, err = r.responseRecord(s, &h, start)
		}
		if !more || err != nil {
			return err
		}
	}
}

// conversionRecord reads the block of a WET record: the text of a
// 'conversion' record is the document.
func (r *pieceReader) conversionRecord(s *stream, h *warcHeader, start int64) (bool, error) {
	switch {
	case !strings.EqualFold(h.typ, "conversion"):
		return r.skipBlock(s, start, h.length)
	case h.id == "":
		return r.rejectRecord(s, h, start, "malformed WARC record header: missing WARC-Record-ID")
	case h.length > r.textLimit():
		return r.rejectRecord(s, h, start, r.tooLarge(h.length))
	}
	body, more, err := r.readBlock(s, start, h.length)
	if !more {
		return false, err
	}
	return true, r.doc(Doc{ID: h.id, URL: targetURL(h.uri), Text: body, Offset: start})
}

// rejectRecord rejects the record at start and skips its block.
func (r *pieceReader) rejectRecord(s *stream, h *warcHeader, start int64, reason string) (bool, error) {
	if err := r.rejectf(start, 0, "%s", reason); err != nil {
		return false, err
	}
	return r.skipBlock(s, start, h.length)
}

// readBlock reads the n-byte block of the record at start into r.block.
// more is false when the file ended first; err is then what Read returns.
func (r *pieceReader) readBlock(s *stream, start, n int64) (block []byte, more bool, err error) {
	from := s.off
	r.block, err = s.readN(r.block[:0], n)
	if err != nil {
		return nil, false, r.blockLost(s, start, s.off-from, n)
	}
	return r.block, true, nil
}

// skipBlock skips the n-byte block of the record at start.
func (r *pieceReader) skipBlock(s *stream, start, n int64) (more bool, err error) {
	from := s.off
	if err := s.discard(n); err != nil {
		return false, r.blockLost(s, start, s.off-from, n)
	}
	return true, nil
}

// blockLost reports a record whose block was cut short by the end of the
// file (a reject, then nil) or by a stream failure.
func (r *pieceReader) blockLost(s *stream, start, got, n int64) error {
	if s.failure() != nil {
		return r.streamFailed(s, start, 0)
	}
	return r.rejectf(start, 0, "truncated WARC record: file ends %d bytes into a %d-byte block", got, n)
}

// readWARCHeader reads the next record header into h, skipping the blank
// lines that end the previous record. It returns the offset of the record,
// how reading ended, and for headerLost the reason.
func readWARCHeader(s *stream, h *warcHeader) (start int64, status headerStatus, reason string) {
	*h = warcHeader{length: -1}
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
