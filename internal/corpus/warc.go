package corpus

import (
	"bytes"
	"crypto/sha1"
	"encoding/base32"
	"fmt"
	"html"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
)

// Record-id kinds, mixed into the random stream of a WARC-Record-ID.
const (
	recResponse uint64 = iota
	recConversion
	recWarcinfo
)

// warcTime is the WARC-Date layout (ISO 8601, UTC, whole seconds).
const warcTime = "2006-01-02T15:04:05Z"

// httpTime is the HTTP Date header layout.
const httpTime = "Mon, 02 Jan 2006 15:04:05 GMT"

// recordUUID returns a version-4 style UUID URN derived from the seed, the
// record kind and an index.
func (g *Generator) recordUUID(kind uint64, index int) string {
	r := newRNG(g.cfg.Seed, streamRecord, uint64(index)<<2|kind)
	hi, lo := r.next(), r.next()
	hi = hi&^(0xf<<12) | 4<<12
	lo = lo&^(3<<62) | 2<<62
	const hex = "0123456789abcdef"
	var b [36]byte
	pos := 0
	put := func(v uint64, digits int) {
		for k := digits - 1; k >= 0; k-- {
			b[pos] = hex[(v>>(4*uint(k)))&0xf]
			pos++
		}
	}
	put(hi>>32, 8)
	b[pos] = '-'
	pos++
	put(hi>>16, 4)
	b[pos] = '-'
	pos++
	put(hi, 4)
	b[pos] = '-'
	pos++
	put(lo>>48, 4)
	b[pos] = '-'
	pos++
	put(lo, 12)
	return "<urn:uuid:" + string(b[:]) + ">"
}

// RecordID returns the WARC-Record-ID of document i's record in the given
// format: the conversion record in WET files, the response record in WARC
// files. A WET record's WARC-Refers-To names the WARC response record of
// the same document, as in Common Crawl.
func (g *Generator) RecordID(f Format, i int) string {
	if f == FormatWET {
		return g.recordUUID(recConversion, i)
	}
	return g.recordUUID(recResponse, i)
}

// blockDigest returns the WARC digest ("sha1:" and base32) of b.
func blockDigest(b []byte) string {
	sum := sha1.Sum(b)
	return "sha1:" + base32.StdEncoding.EncodeToString(sum[:])
}

// appendRecord appends one WARC/1.0 record: the version line, the headers,
// Content-Type and Content-Length, a blank line, the block and the two
// CRLFs that end a record.
func appendRecord(buf *bytes.Buffer, headers [][2]string, contentType string, block []byte) {
	buf.WriteString("WARC/1.0\r\n")
	for _, h := range headers {
		buf.WriteString(h[0])
		buf.WriteString(": ")
		buf.WriteString(h[1])
		buf.WriteString("\r\n")
	}
	buf.WriteString("Content-Type: ")
	buf.WriteString(contentType)
	buf.WriteString("\r\nContent-Length: ")
	buf.WriteString(strconv.Itoa(len(block)))
	buf.WriteString("\r\n\r\n")
	buf.Write(block)
	buf.WriteString("\r\n\r\n")
}

// writeWARC writes documents [lo, hi) as a WET or WARC file named name,
// preceded by a warcinfo record. With opts.Gzip every record is its own
// gzip member.
func writeWARC(g *Generator, w io.Writer, opts WriteOptions, name string, idx, lo, hi int) error {
	var zw *gzip.Writer
	if opts.Gzip {
		zw = gzip.NewWriter(io.Discard)
	}
	var buf bytes.Buffer
	emit := func() error {
		if zw == nil {
			_, err := w.Write(buf.Bytes())
			return err
		}
		zw.Reset(w)
		if _, err := zw.Write(buf.Bytes()); err != nil {
			return err
		}
		return zw.Close()
	}

	infoIndex := 2 * idx
	if opts.Format == FormatWET {
		infoIndex++
	}
	infoID := g.recordUUID(recWarcinfo, infoIndex)
	info := "software: neardup gencorpus\r\n" +
		"format: WARC File Format 1.0\r\n" +
		"conformsTo: https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.0/\r\n" +
		"isPartOf: neardup-synthetic-seed-" + strconv.FormatUint(g.cfg.Seed, 10) + "\r\n" +
		"description: synthetic corpus with planted near-duplicates, documents " +
		strconv.Itoa(lo) + " to " + strconv.Itoa(hi-1) + " of " + strconv.Itoa(g.Len()) + "\r\n" +
		"publisher: neardup\r\n"
	appendRecord(&buf, [][2]string{
		{"WARC-Type", "warcinfo"},
		{"WARC-Date", time.Date(2025, time.January, 1, 0, 0, 0, 0, time.UTC).Format(warcTime)},
		{"WARC-Filename", name},
		{"WARC-Record-ID", infoID},
	}, "application/warc-fields", []byte(info))
	if err := emit(); err != nil {
		return fmt.Errorf("write warcinfo record: %w", err)
	}

	for i := lo; i < hi; i++ {
		buf.Reset()
		d := g.Doc(i)
		date := g.Date(i)
		if opts.Format == FormatWET {
			block := []byte(d.Text)
			appendRecord(&buf, [][2]string{
				{"WARC-Type", "conversion"},
				{"WARC-Target-URI", d.URL},
				{"WARC-Date", date.Format(warcTime)},
				{"WARC-Record-ID", g.recordUUID(recConversion, i)},
				{"WARC-Refers-To", g.recordUUID(recResponse, i)},
				{"WARC-Block-Digest", blockDigest(block)},
				{"WARC-Identified-Content-Language", "eng"},
			}, "text/plain", block)
		} else {
			page := []byte(g.page(d))
			var resp bytes.Buffer
			resp.WriteString("HTTP/1.1 200 OK\r\nDate: ")
			resp.WriteString(date.Format(httpTime))
			resp.WriteString("\r\nServer: nginx\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: ")
			resp.WriteString(strconv.Itoa(len(page)))
			resp.WriteString("\r\nConnection: close\r\n\r\n")
			resp.Write(page)
			appendRecord(&buf, [][2]string{
				{"WARC-Type", "response"},
				{"WARC-Date", date.Format(warcTime)},
				{"WARC-Record-ID", g.recordUUID(recResponse, i)},
				{"WARC-Warcinfo-ID", infoID},
				{"WARC-Target-URI", d.URL},
				{"WARC-Payload-Digest", blockDigest(page)},
				{"WARC-Block-Digest", blockDigest(resp.Bytes())},
				{"WARC-Identified-Payload-Type", "text/html"},
			}, "application/http; msgtype=response", resp.Bytes())
		}
		if err := emit(); err != nil {
			return fmt.Errorf("write record of %s: %w", d.ID, err)
		}
	}
	return nil
}

// HTML returns the HTML page that a WARC response record carries for the
// document at position i.
func (g *Generator) HTML(i int) string {
	return g.page(g.Doc(i))
}

// page renders d as an HTML page: its paragraphs become <p> elements inside
// an <article>, surrounded by a <style> block, a <script> block, a <nav>
// menu and a comment, none of which belong to the extracted text.
func (g *Generator) page(d Doc) string {
	host := ""
	if u, err := url.Parse(d.URL); err == nil {
		host = u.Host
	}
	title := strings.Fields(d.Text)
	if len(title) > 8 {
		title = title[:8]
	}
	if len(title) == 0 {
		title = []string{"Untitled"}
	}
	var b strings.Builder
	b.Grow(len(d.Text) + 2048)
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>")
	b.WriteString(html.EscapeString(strings.Join(title, " ")))
	b.WriteString("</title>\n<style>\n")
	b.WriteString("body { font-family: Georgia, \"Times New Roman\", serif; margin: 0 auto; max-width: 42em; }\n")
	b.WriteString("nav ul { list-style: none; padding: 0; }\nnav li { display: inline; margin-right: 1em; }\n")
	b.WriteString("article p:first-child::first-letter { font-size: 200%; }\n</style>\n<script>\n")
	b.WriteString("window.dataLayer = window.dataLayer || [];\n")
	b.WriteString("function track(name) { window.dataLayer.push({event: name, page: \"")
	b.WriteString(d.ID)
	b.WriteString("\"}); }\n")
	b.WriteString("document.addEventListener(\"DOMContentLoaded\", function () { track(\"pageview\"); });\n")
	b.WriteString("var teaser = \"<p>Subscribe to our newsletter for more stories like this one.</p>\";\n")
	b.WriteString("</script>\n</head>\n<body>\n<nav class=\"site-nav\"><ul>")
	b.WriteString("<li><a href=\"/\">")
	b.WriteString(html.EscapeString(host))
	b.WriteString("</a></li><li><a href=\"/news/\">News</a></li><li><a href=\"/about/\">About</a></li>")
	b.WriteString("<li><a href=\"/contact/\">Contact</a></li><li><a href=\"/login\">Sign in</a></li></ul></nav>\n")
	b.WriteString("<main>\n<article>\n")
	for _, para := range strings.Split(d.Text, paraBreak) {
		if strings.TrimSpace(para) == "" {
			continue
		}
		b.WriteString("<p>")
		b.WriteString(html.EscapeString(para))
		b.WriteString("</p>\n")
	}
	b.WriteString("</article>\n</main>\n<!-- served by cache node 7 -->\n</body>\n</html>\n")
	return b.String()
}
