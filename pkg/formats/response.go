package formats

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"strings"

	"github.com/klauspost/compress/gzip"
)

// payloadKind is what a WARC response payload is to the reader.
type payloadKind int

const (
	payloadOther   payloadKind = iota // not a document: skipped silently
	payloadHTML                       // text extracted with htmlText
	payloadPlain                      // text taken as is
	payloadUnknown                    // no media type: sniffed after decoding
)

// httpResponse is what the reader needs of a WARC response block.
type httpResponse struct {
	status          int // HTTP status; 200 for a block that is a bare payload
	kind            payloadKind
	charset         string // lower case, "" when not declared
	contentEncoding string // lower case, "" when not given
	chunked         bool
	body            []byte // the payload as stored
}

// responseRecord reads a WARC 'response' record, whose block (or its first
// rescanKeep bytes when it is over the limit) is in r.block: an HTML or
// plain-text payload with a 2xx status is a document.
func (r *pieceReader) responseRecord(h *warcHeader, start int64) error {
	switch {
	case !strings.EqualFold(h.typ, "response"):
		return nil
	case h.length > r.payloadLimit():
		// Look at the HTTP head only, to skip large non-documents silently.
		resp, err := parseResponse(h.contentType, r.block[:min(len(r.block), streamBufSize)])
		if err == nil && (resp.kind == payloadOther || resp.status/100 != 2) {
			return nil
		}
		return r.rejectf(start, 0, "response record of %d bytes exceeds the limit of %d bytes", h.length, r.payloadLimit())
	}
	return r.response(h, start, r.block)
}

// response turns a response block into a document, a reject, or nothing.
func (r *pieceReader) response(h *warcHeader, start int64, block []byte) error {
	resp, err := parseResponse(h.contentType, block)
	if err != nil {
		return r.rejectf(start, 0, "malformed HTTP response: %v", err)
	}
	if resp.kind == payloadOther || resp.status/100 != 2 {
		return nil
	}
	if h.id == "" {
		return r.rejectf(start, 0, "malformed WARC record header: missing WARC-Record-ID")
	}
	payload, reason := r.decodePayload(&resp)
	if reason != "" {
		return r.rejectf(start, 0, "%s", reason)
	}
	kind := resp.kind
	if kind == payloadUnknown {
		if !strings.HasPrefix(http.DetectContentType(payload), "text/html") {
			return nil
		}
		kind = payloadHTML
	}
	payload, reason = r.toUTF8(payload, resp.charset, kind == payloadHTML)
	if reason != "" {
		return r.rejectf(start, 0, "%s", reason)
	}
	text := payload
	if kind == payloadHTML {
		r.text = htmlText(r.text[:0], payload)
		text = r.text
	}
	return r.doc(r.warcDoc(h, text, start))
}

// payloadLimit is the largest response block read into memory: markup
// makes HTML several times larger than its text.
func (r *pieceReader) payloadLimit() int64 {
	if r.o.MaxDocBytes > 0 {
		return 8*int64(r.o.MaxDocBytes) + 1<<20
	}
	return hardRecordLimit
}

// decodePayload undoes the chunked transfer coding and the content coding
// of a payload. It returns the payload, or why it cannot be decoded.
func (r *pieceReader) decodePayload(resp *httpResponse) ([]byte, string) {
	payload := resp.body
	limit := r.payloadLimit()
	if resp.chunked {
		var tooLarge bool
		var err error
		r.chunks, tooLarge, err = readAllLimited(r.chunks[:0], httputil.NewChunkedReader(bytes.NewReader(payload)), limit)
		switch {
		case tooLarge:
			return nil, fmt.Sprintf("chunked HTTP body exceeds the limit of %d bytes", limit)
		case err != nil:
			return nil, fmt.Sprintf("corrupt chunked HTTP body: %v", err)
		}
		payload = r.chunks
	}
	var dec io.Reader
	switch resp.contentEncoding {
	case "", "identity", "none":
		return payload, ""
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(bytes.NewReader(payload))
		if err != nil {
			return nil, fmt.Sprintf("corrupt gzip HTTP body: %v", err)
		}
		defer zr.Close()
		dec = zr
	case "deflate":
		// Servers send either zlib (as the RFC says) or raw deflate data.
		if zr, err := zlib.NewReader(bytes.NewReader(payload)); err == nil {
			defer zr.Close()
			dec = zr
		} else {
			fr := flate.NewReader(bytes.NewReader(payload))
			defer fr.Close()
			dec = fr
		}
	default:
		return nil, fmt.Sprintf("unsupported HTTP Content-Encoding %q", resp.contentEncoding)
	}
	var tooLarge bool
	var err error
	r.decoded, tooLarge, err = readAllLimited(r.decoded[:0], dec, limit)
	switch {
	case tooLarge:
		return nil, fmt.Sprintf("decoded HTTP body exceeds the limit of %d bytes", limit)
	case err != nil:
		return nil, fmt.Sprintf("corrupt %s HTTP body: %v", resp.contentEncoding, err)
	}
	return r.decoded, ""
}

// readAllLimited appends all of src to dst, stopping with tooLarge set once
// more than limit bytes have been read.
func readAllLimited(dst []byte, src io.Reader, limit int64) (out []byte, tooLarge bool, err error) {
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := src.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if int64(len(dst)) > limit {
			return dst, true, nil
		}
		if err == io.EOF {
			return dst, false, nil
		}
		if err != nil {
			return dst, false, err
		}
	}
}

// parseResponse splits a WARC response block into HTTP head and payload.
// contentType is the record's Content-Type: "application/http" blocks (or
// untyped blocks that start like one) are parsed as HTTP responses; a block
// typed text/html or text/plain is a bare payload; others are payloadOther.
func parseResponse(contentType string, block []byte) (httpResponse, error) {
	media, charset := parseMediaType(contentType)
	switch {
	case media == "application/http", media == "" && bytes.HasPrefix(block, []byte("HTTP/")):
	case media == "":
		return httpResponse{kind: payloadOther}, nil
	default:
		return httpResponse{status: 200, kind: kindOfMedia(media), charset: charset, body: block}, nil
	}
	line, rest, ok := bytes.Cut(block, []byte{'\n'})
	if !ok {
		return httpResponse{}, fmt.Errorf("no end to the status line %q", clip(line, 40))
	}
	line = trimEOL(line)
	proto, code, _ := bytes.Cut(line, []byte{' '})
	if !bytes.HasPrefix(proto, []byte("HTTP/")) || len(code) < 3 || !isDigits(code[:3]) || (len(code) > 3 && code[3] != ' ') {
		return httpResponse{}, fmt.Errorf("bad status line %q", clip(line, 40))
	}
	resp := httpResponse{status: int(code[0]-'0')*100 + int(code[1]-'0')*10 + int(code[2]-'0'), kind: payloadUnknown}
	for {
		line, rest, ok = bytes.Cut(rest, []byte{'\n'})
		if !ok {
			return httpResponse{}, fmt.Errorf("HTTP head not terminated by a blank line")
		}
		line = trimEOL(line)
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			continue // tolerate the junk real servers send
		}
		name = bytes.TrimSpace(name)
		v := strings.ToLower(string(bytes.TrimSpace(value)))
		switch {
		case fieldIs(name, "Content-Type"):
			var media string
			media, resp.charset = parseMediaType(v)
			resp.kind = kindOfMedia(media)
		case fieldIs(name, "Content-Encoding"):
			resp.contentEncoding = v
		case fieldIs(name, "Transfer-Encoding"):
			resp.chunked = strings.Contains(v, "chunked")
		}
	}
	resp.body = rest
	return resp, nil
}

// kindOfMedia tells what a payload of a media type is; "" is unknown.
func kindOfMedia(media string) payloadKind {
	switch media {
	case "":
		return payloadUnknown
	case "text/html", "application/xhtml+xml":
		return payloadHTML
	case "text/plain":
		return payloadPlain
	}
	return payloadOther
}

// parseMediaType returns the lower-case media type and charset of a
// Content-Type value, leniently.
func parseMediaType(v string) (media, charset string) {
	media, params, _ := strings.Cut(v, ";")
	media = strings.ToLower(strings.TrimSpace(media))
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		key, value, _ := strings.Cut(p, "=")
		if strings.EqualFold(strings.TrimSpace(key), "charset") {
			charset = strings.ToLower(strings.Trim(strings.TrimSpace(value), `"'`))
		}
	}
	return media, charset
}

// isDigits reports whether b is all ASCII digits.
func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
