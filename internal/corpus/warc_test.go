package corpus

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"html"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// warcRecord is one parsed WARC record.
type warcRecord struct {
	headers map[string]string
	block   []byte
}

// parseWARC parses concatenated uncompressed WARC records, checking the
// version line, Content-Length and the CRLF CRLF record terminator.
func parseWARC(t *testing.T, data []byte) []warcRecord {
	t.Helper()
	br := bufio.NewReader(bytes.NewReader(data))
	var out []warcRecord
	for {
		line, err := br.ReadString('\n')
		if err == io.EOF && line == "" {
			return out
		}
		if line != "WARC/1.0\r\n" {
			t.Fatalf("record %d: version line %q", len(out), line)
		}
		rec := warcRecord{headers: make(map[string]string)}
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("record %d: reading headers: %v", len(out), err)
			}
			if line == "\r\n" {
				break
			}
			k, v, ok := strings.Cut(strings.TrimSuffix(line, "\r\n"), ": ")
			if !ok || !strings.HasSuffix(line, "\r\n") {
				t.Fatalf("record %d: bad header line %q", len(out), line)
			}
			rec.headers[k] = v
		}
		n, err := strconv.Atoi(rec.headers["Content-Length"])
		if err != nil {
			t.Fatalf("record %d: Content-Length %q: %v", len(out), rec.headers["Content-Length"], err)
		}
		rec.block = make([]byte, n)
		if _, err := io.ReadFull(br, rec.block); err != nil {
			t.Fatalf("record %d: block shorter than Content-Length %d: %v", len(out), n, err)
		}
		var end [4]byte
		if _, err := io.ReadFull(br, end[:]); err != nil || string(end[:]) != "\r\n\r\n" {
			t.Fatalf("record %d: block not followed by CRLF CRLF (Content-Length wrong?): %q %v", len(out), end, err)
		}
		out = append(out, rec)
	}
}

// gzipMembers returns the decompressed content of each gzip member of data.
func gzipMembers(t *testing.T, data []byte) [][]byte {
	t.Helper()
	br := bufio.NewReader(bytes.NewReader(data))
	zr := new(gzip.Reader)
	var out [][]byte
	for {
		if err := zr.Reset(br); err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatalf("gzip member %d: %v", len(out), err)
		}
		zr.Multistream(false)
		b, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("gzip member %d: %v", len(out), err)
		}
		out = append(out, b)
	}
}

// decompressAll returns the content of path, gunzipped if it ends in .gz.
func decompressAll(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(path, ".gz") {
		return data
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}

// extractParagraphs is a deliberately naive HTML-to-text extractor: the
// unescaped contents of the <p> elements inside <article>.
func extractParagraphs(page string) string {
	_, article, _ := strings.Cut(page, "<article>")
	article, _, _ = strings.Cut(article, "</article>")
	var paras []string
	for {
		_, rest, ok := strings.Cut(article, "<p>")
		if !ok {
			break
		}
		p, rest, _ := strings.Cut(rest, "</p>")
		paras = append(paras, html.UnescapeString(p))
		article = rest
	}
	return strings.Join(paras, "\n\n")
}

// normalizeSpace collapses whitespace runs to one space.
func normalizeSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

func TestWriteWARCWellFormed(t *testing.T) {
	const n = 300
	uuidRE := regexp.MustCompile(`^<urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}>$`)
	dateRE := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)
	tests := []struct {
		format Format
		gz     bool
	}{
		{FormatWET, false}, {FormatWET, true}, {FormatWARC, false}, {FormatWARC, true},
	}
	g := testGenerator(t, n, 21)
	for _, tt := range tests {
		t.Run(string(tt.format)+map[bool]string{true: "-gz", false: ""}[tt.gz], func(t *testing.T) {
			dir := t.TempDir()
			w, err := Write(g, WriteOptions{Dir: dir, Format: tt.format, Files: 2, Gzip: tt.gz, Truth: "truth.jsonl"})
			if err != nil {
				t.Fatal(err)
			}
			truth := readTruth(t, w.Truth)
			seenIDs := make(map[string]bool)
			doc := 0
			for _, path := range w.Files {
				raw, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				var recs []warcRecord
				if tt.gz {
					for k, member := range gzipMembers(t, raw) {
						one := parseWARC(t, member)
						if len(one) != 1 {
							t.Fatalf("%s: gzip member %d holds %d records, want 1", path, k, len(one))
						}
						recs = append(recs, one...)
					}
				} else {
					recs = parseWARC(t, raw)
				}
				info := recs[0]
				if info.headers["WARC-Type"] != "warcinfo" || info.headers["WARC-Filename"] != filepath.Base(path) {
					t.Errorf("%s: first record %v, want warcinfo naming the file", path, info.headers)
				}
				for _, rec := range recs[1:] {
					h := rec.headers
					id := h["WARC-Record-ID"]
					if !uuidRE.MatchString(id) || seenIDs[id] {
						t.Errorf("doc %d: bad or repeated WARC-Record-ID %q", doc, id)
					}
					seenIDs[id] = true
					if id != truth[doc].RecordID {
						t.Errorf("doc %d: record id %s, truth says %s", doc, id, truth[doc].RecordID)
					}
					if !dateRE.MatchString(h["WARC-Date"]) {
						t.Errorf("doc %d: WARC-Date %q", doc, h["WARC-Date"])
					}
					if h["WARC-Target-URI"] != g.URL(doc) {
						t.Errorf("doc %d: WARC-Target-URI %q", doc, h["WARC-Target-URI"])
					}
					if h["WARC-Block-Digest"] != blockDigest(rec.block) {
						t.Errorf("doc %d: block digest mismatch", doc)
					}
					text := g.Text(doc)
					if tt.format == FormatWET {
						if h["WARC-Type"] != "conversion" || h["Content-Type"] != "text/plain" {
							t.Errorf("doc %d: headers %v", doc, h)
						}
						if string(rec.block) != text {
							t.Errorf("doc %d: WET block is not the document text", doc)
						}
					} else {
						checkResponse(t, doc, rec, text)
					}
					doc++
				}
			}
			if doc != n {
				t.Errorf("read %d document records, want %d", doc, n)
			}
		})
	}
}

// checkResponse checks that a WARC response record holds a valid HTTP
// response whose HTML page carries text in <p> elements among boilerplate.
func checkResponse(t *testing.T, doc int, rec warcRecord, text string) {
	t.Helper()
	h := rec.headers
	if h["WARC-Type"] != "response" || h["Content-Type"] != "application/http; msgtype=response" {
		t.Errorf("doc %d: headers %v", doc, h)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(rec.block)), nil)
	if err != nil {
		t.Fatalf("doc %d: HTTP response: %v", doc, err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("doc %d: HTTP body: %v", doc, err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" || resp.ContentLength != int64(len(body)) {
		t.Errorf("doc %d: status %d, Content-Type %q, Content-Length %d for %d body bytes",
			doc, resp.StatusCode, resp.Header.Get("Content-Type"), resp.ContentLength, len(body))
	}
	if h["WARC-Payload-Digest"] != blockDigest(body) {
		t.Errorf("doc %d: payload digest mismatch", doc)
	}
	page := string(body)
	for _, want := range []string{"<!DOCTYPE html>", "<script>", "</script>", "<style>", "<nav", "<article>"} {
		if !strings.Contains(page, want) {
			t.Errorf("doc %d: page lacks %s", doc, want)
		}
	}
	if got := extractParagraphs(page); normalizeSpace(got) != normalizeSpace(text) {
		t.Errorf("doc %d: <p> text differs from the document text:\n got %.200q\nwant %.200q", doc, got, text)
	}
}
