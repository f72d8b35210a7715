package formats

import (
	"bytes"
	"io"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// lineLimit is the longest JSONL line read into memory: room for a text of
// MaxDocBytes with escapes, and the other fields.
func (r *pieceReader) lineLimit() int {
	if r.o.MaxDocBytes > 0 {
		return 2*r.o.MaxDocBytes + 64<<10
	}
	return hardRecordLimit
}

// readJSONL reads the lines of a JSONL stream that start before end (-1:
// to the end of the stream); the first line is number firstLine.
func (r *pieceReader) readJSONL(s *stream, firstLine, end int64) error {
	sc := newJSONLineScanner(r.o)
	for line := firstLine; end < 0 || s.off < end; line++ {
		if err := r.tick(s.off); err != nil {
			return err
		}
		off := s.off
		b, n, err := s.readLine(r.lineLimit())
		switch {
		case err == errLineTooLong:
			if err := r.rejectf(off, line, "line of %d bytes exceeds the limit of %d bytes", n, r.lineLimit()); err != nil {
				return err
			}
			continue
		case err != nil && err != io.EOF:
			return r.streamFailed(s, off, line)
		case err == io.EOF && s.failure() != nil:
			// The last line read before a stream failure may be cut short.
			return r.streamFailed(s, off, line)
		}
		if off == 0 {
			b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")) // a UTF-8 byte order mark
		}
		if len(bytes.TrimSpace(b)) > 0 {
			if err := r.jsonLine(sc, trimEOL(b), off, line); err != nil {
				return err
			}
		}
		if err == io.EOF {
			return nil
		}
	}
	return nil
}

// jsonLine turns one non-blank JSONL line into a document or a reject,
// using the scanner sc.
func (r *pieceReader) jsonLine(sc *jsonLineScanner, b []byte, off, line int64) error {
	if !sc.scan(b) {
		msg, at := sc.syntaxError()
		return r.rejectf(off, line, "invalid JSON: %s (at byte %d)", msg, at)
	}
	if firstNonSpace(b) != '{' {
		return r.rejectf(off, line, "invalid JSON: line is a JSON %s, not an object", jsonType(b))
	}
	raw := sc.vals[memberText]
	switch {
	case raw == nil:
		return r.rejectf(off, line, "missing text field %q", r.o.TextField)
	case raw[0] != '"':
		return r.rejectf(off, line, "text field %q is not a string but %s", r.o.TextField, jsonType(raw))
	}
	r.text = appendJSONString(r.text[:0], raw)
	d := Doc{Text: r.text, Offset: off, Line: line}
	raw = sc.vals[memberID]
	switch {
	case len(raw) == 0 || raw[0] == 'n' || string(raw) == `""`: // missing, null or empty
		d.ID = r.path + ":" + strconv.FormatInt(line, 10)
	case raw[0] == '"':
		r.id = appendJSONString(r.id[:0], raw)
		if !utf8.Valid(r.id) {
			return r.rejectf(off, line, "invalid UTF-8 in id field %q", r.o.IDField)
		}
		d.ID = string(r.id)
	case raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9':
		d.ID = string(raw)
	default:
		return r.rejectf(off, line, "id field %q is not a string or number but %s", r.o.IDField, jsonType(raw))
	}
	if raw := sc.vals[memberURL]; len(raw) > 0 && raw[0] == '"' {
		r.id = appendJSONString(r.id[:0], raw)
		if utf8.Valid(r.id) {
			d.URL = string(r.id)
		} else {
			d.URL = string(bytes.ToValidUTF8(r.id, []byte("\uFFFD")))
		}
	}
	if sc.field {
		d.Value = jsonValue(sc.vals[memberField])
	}
	return r.doc(d)
}

// firstNonSpace returns the first byte of b that is not JSON whitespace, or 0.
func firstNonSpace(b []byte) byte {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return c
		}
	}
	return 0
}

// jsonType names the type of a valid JSON value for messages.
func jsonType(v []byte) string {
	switch firstNonSpace(v) {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// appendJSONString appends the value of the JSON string literal raw (with
// its quotes; already validated) to dst. Bytes are copied as they are, so
// invalid UTF-8 in the literal stays invalid; escaped lone surrogates
// become U+FFFD.
func appendJSONString(dst, raw []byte) []byte {
	s := raw[1 : len(raw)-1]
	for {
		i := bytes.IndexByte(s, '\\')
		if i < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:i]...)
		s = s[i:]
		if len(s) < 2 {
			return dst // cannot happen in a valid literal
		}
		dst, s = appendEscape(dst, s)
	}
}

// appendEscape decodes the escape sequence at the start of s (a backslash
// and what follows, validated) onto dst and returns the rest of s.
func appendEscape(dst, s []byte) ([]byte, []byte) {
	switch c := s[1]; c {
	case 'b':
		return append(dst, '\b'), s[2:]
	case 'f':
		return append(dst, '\f'), s[2:]
	case 'n':
		return append(dst, '\n'), s[2:]
	case 'r':
		return append(dst, '\r'), s[2:]
	case 't':
		return append(dst, '\t'), s[2:]
	case 'u':
		r, rest := decodeUnicodeEscape(s)
		return utf8.AppendRune(dst, r), rest
	default: // '"', '\\', '/'
		return append(dst, c), s[2:]
	}
}

// decodeUnicodeEscape decodes the \uXXXX escape (or surrogate pair of
// escapes) at the start of s and returns the rune and the rest of s.
func decodeUnicodeEscape(s []byte) (rune, []byte) {
	r1, ok := hex4(s)
	if !ok {
		return utf8.RuneError, s[min(len(s), 2):]
	}
	s = s[6:]
	if !utf16.IsSurrogate(r1) {
		return r1, s
	}
	if r1 < 0xDC00 { // a high surrogate: a low one must follow
		if r2, ok := hex4(s); ok && r2 >= 0xDC00 && r2 <= 0xDFFF {
			return 0x10000 + (r1-0xD800)<<10 + (r2 - 0xDC00), s[6:]
		}
	}
	return utf8.RuneError, s
}

// hex4 parses the \uXXXX escape at the start of s.
func hex4(s []byte) (rune, bool) {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// JSONLText finds the text member (Options.TextField) of a JSONL line:
// its text, decoded as a job reads it, and where its raw value (the JSON
// string, quotes included) lies in line, line[start:end], so that the
// line can be written again with another text and every other member
// as it was. ok is false when the line is no JSON object with a string
// text member (a line a job rejects). A JSONLText is used by one
// goroutine at a time.
type JSONLText struct {
	sc   *jsonLineScanner
	text []byte
}

// NewJSONLText returns a JSONLText of the text field of o (its default
// when unset).
func NewJSONLText(o Options) *JSONLText {
	return &JSONLText{sc: newJSONLineScanner(o.withDefaults())}
}

// Find returns the text of line (its line end, if any, passed over as
// the reader does) and where its raw value is; the text is valid until
// the next call.
func (t *JSONLText) Find(line []byte) (text []byte, start, end int, ok bool) {
	line = trimEOL(line)
	if !t.sc.scan(line) || firstNonSpace(line) != '{' {
		return nil, 0, 0, false
	}
	raw := t.sc.vals[memberText]
	if len(raw) == 0 || raw[0] != '"' {
		return nil, 0, 0, false
	}
	// raw is a slice of line: its place is its distance from line's start.
	start = cap(line) - cap(raw)
	t.text = appendJSONString(t.text[:0], raw)
	return t.text, start, start + len(raw), true
}
