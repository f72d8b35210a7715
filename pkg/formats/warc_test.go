package formats

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// wetRecords is a WET file's records and the documents and rejects they
// give with MaxDocBytes 100.
func wetRecords() (records []string, docs []docSummary, rejects []string) {
	records = []string{
		warcinfo(),
		conversion("<urn:uuid:1>", "http://a.example/", "First document.\nSecond line."),
		warcRecord("metadata", "WARC-Type: metadata", "WARC-Record-ID: <urn:uuid:m>"),
		conversion("<urn:uuid:2>", "https://b.example/ü", "Zweites Dokument: Grüße, 日本語."),
		conversion("<urn:uuid:3>", "http://c.example/", "bad \xc3\x28 utf-8"),
		conversion("<urn:uuid:4>", "http://d.example/", strings.Repeat("long ", 30)),
		warcRecord("no id", "WARC-Type: conversion"),
		conversion("<urn:uuid:5>", "<http://e.example/>", ""),
	}
	docs = []docSummary{
		{"<urn:uuid:1>", "http://a.example/", "First document.\nSecond line.", 0, 0},
		{"<urn:uuid:2>", "https://b.example/ü", "Zweites Dokument: Grüße, 日本語.", 0, 0},
		{"<urn:uuid:5>", "http://e.example/", "", 0, 0},
	}
	rejects = []string{
		"invalid UTF-8 in text at byte 4",
		"document of 150 bytes exceeds --max-doc-bytes 100",
		"malformed WARC record header: missing WARC-Record-ID",
	}
	return records, docs, rejects
}

func TestReadWET(t *testing.T) {
	records, wantDocs, wantRejects := wetRecords()
	plain := strings.Join(records, "")
	offsetOf := func(id string) int64 { return int64(strings.LastIndex(plain[:strings.Index(plain, id)], "WARC/1.0")) }
	for i := range wantDocs {
		wantDocs[i].Offset = offsetOf(wantDocs[i].ID)
	}
	wantOffsets := []int64{offsetOf("<urn:uuid:3>"), offsetOf("<urn:uuid:4>"), int64(strings.Index(plain, records[6]))}
	dir := t.TempDir()
	files := map[string][]byte{
		"a.warc.wet":          []byte(plain),
		"members.warc.wet.gz": gzipMembers(t, records...),
		"single.warc.wet.gz":  gzipMembers(t, plain),
		"lf-only.warc.wet":    []byte(strings.ReplaceAll(plain, "\r\n", "\n")),
	}
	for name, data := range files {
		t.Run(name, func(t *testing.T) {
			res := readFile(t, writeFile(t, dir, name, data), Options{MaxDocBytes: 100})
			if res.err != nil {
				t.Fatal(res.err)
			}
			if name == "lf-only.warc.wet" {
				// Offsets and the multi-line text differ; check the rest.
				if len(res.docs) != 3 || len(res.rejects) != 3 {
					t.Fatalf("docs %+v rejects %+v", summarize(res.docs), res.rejects)
				}
				return
			}
			if got := summarize(res.docs); !reflect.DeepEqual(got, wantDocs) {
				t.Errorf("docs\n got %+v\nwant %+v", got, wantDocs)
			}
			if got := reasons(res.rejects); !reflect.DeepEqual(got, wantRejects) {
				t.Errorf("rejects %q, want %q", got, wantRejects)
			}
			for i, r := range res.rejects {
				if i < len(wantOffsets) && r.Offset != wantOffsets[i] {
					t.Errorf("reject %d at %d, want %d", i, r.Offset, wantOffsets[i])
				}
			}
		})
	}
}

func TestReadWARC(t *testing.T) {
	const html = `<!DOCTYPE html><html><head><title>Page title</title>
<style>body { color: red }</style><script>var hidden = "script text";</script></head>
<body><h1>Heading</h1><p>First&nbsp;paragraph with <b>bold</b> and <a href="/x">link</a>.</p>
<noscript>Enable JavaScript</noscript><div>Block one</div><div>Block two</div>
<ul><li>item 1</li><li>item 2</li></ul><table><tr><td>cell a</td><td>cell b</td></tr></table>
<script/>still hidden</script><template><p>template text</p></template>after &amp; done</body></html>`
	const htmlText = "Page title\nHeading\nFirst\u00a0paragraph with bold and link.\nBlock one\nBlock two\nitem 1\nitem 2\ncell a cell b\nafter & done"
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("<p>compressed <i>and</i> chunked</p>"))
	zw.Close()
	chunked := chunk(gz.String(), 7)

	records := []string{
		warcinfo(),
		warcRecord("GET / HTTP/1.1\r\nHost: a.example\r\n\r\n", "WARC-Type: request", "WARC-Record-ID: <urn:uuid:r>", "Content-Type: application/http; msgtype=request"),
		response("<urn:uuid:html>", "http://a.example/", "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=UTF-8\r\n", html),
		warcRecord("metadata", "WARC-Type: metadata", "WARC-Record-ID: <urn:uuid:m>"),
		response("<urn:uuid:png>", "http://a.example/x.png", "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n", "\x89PNG\r\n\x1a\n"),
		response("<urn:uuid:404>", "http://a.example/missing", "HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\n", "<p>not found</p>"),
		response("<urn:uuid:plain>", "http://a.example/robots.txt", "HTTP/1.0 200 OK\r\ncontent-type: text/plain\r\n", "User-agent: *\nDisallow:"),
		response("<urn:uuid:sniff>", "http://a.example/s", "HTTP/1.1 200 OK\r\nServer: x\r\n", "<html><body><p>sniffed</p></body></html>"),
		response("<urn:uuid:gz>", "http://a.example/gz", "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n", chunked),
		response("<urn:uuid:latin1>", "http://a.example/l", "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=ISO-8859-1\r\n", "<p>caf\xe9 \x80</p>"),
		response("<urn:uuid:meta>", "http://a.example/m", "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n", `<meta charset="windows-1252"><p>na`+"\xefve</p>"),
		response("<urn:uuid:badutf8>", "http://a.example/b", "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n", "<p>bad \xff</p>"),
		response("<urn:uuid:br>", "http://a.example/br", "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: br\r\n", "xx"),
		warcRecord("garbage", "WARC-Type: response", "WARC-Record-ID: <urn:uuid:badhttp>", "Content-Type: application/http; msgtype=response"),
		warcRecord("<p>bare</p>", "WARC-Type: response", "WARC-Record-ID: <urn:uuid:bare>", "WARC-Target-URI: http://a.example/bare", "Content-Type: text/html"),
		warcRecord("dns answer", "WARC-Type: response", "WARC-Record-ID: <urn:uuid:dns>", "Content-Type: text/dns"),
		warcRecord("HTTP/1.1 200 OK\r\nContent-Type: image/gif\r\n\r\nGIF89a", "WARC-Type: response", "Content-Type: application/http"),
		warcRecord("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>no id</p>", "WARC-Type: response", "Content-Type: application/http"),
	}
	wantDocs := []docSummary{
		{"<urn:uuid:html>", "http://a.example/", htmlText, 0, 0},
		{"<urn:uuid:plain>", "http://a.example/robots.txt", "User-agent: *\nDisallow:", 0, 0},
		{"<urn:uuid:sniff>", "http://a.example/s", "sniffed", 0, 0},
		{"<urn:uuid:gz>", "http://a.example/gz", "compressed and chunked", 0, 0},
		{"<urn:uuid:latin1>", "http://a.example/l", "café €", 0, 0},
		{"<urn:uuid:meta>", "http://a.example/m", "naïve", 0, 0},
		{"<urn:uuid:bare>", "http://a.example/bare", "bare", 0, 0},
	}
	wantRejects := []string{
		"invalid UTF-8 in text at byte 4",
		`unsupported HTTP Content-Encoding "br"`,
		`malformed HTTP response: no end to the status line "garbage"`,
		"malformed WARC record header: missing WARC-Record-ID",
	}
	plain := strings.Join(records, "")
	for i := range wantDocs {
		wantDocs[i].Offset = int64(strings.LastIndex(plain[:strings.Index(plain, wantDocs[i].ID)], "WARC/1.0"))
	}
	dir := t.TempDir()
	for name, data := range map[string][]byte{
		"a.warc":          []byte(plain),
		"members.warc.gz": gzipMembers(t, records...),
	} {
		t.Run(name, func(t *testing.T) {
			res := readFile(t, writeFile(t, dir, name, data), Options{})
			if res.err != nil {
				t.Fatal(res.err)
			}
			if got := summarize(res.docs); !reflect.DeepEqual(got, wantDocs) {
				t.Errorf("docs\n got %+v\nwant %+v", got, wantDocs)
			}
			if got := reasons(res.rejects); !reflect.DeepEqual(got, wantRejects) {
				t.Errorf("rejects %q, want %q", got, wantRejects)
			}
		})
	}
}

// chunk encodes s with the HTTP chunked transfer coding in chunks of n.
func chunk(s string, n int) string {
	var b strings.Builder
	for len(s) > 0 {
		c := s[:min(n, len(s))]
		s = s[len(c):]
		fmt.Fprintf(&b, "%x\r\n%s\r\n", len(c), c)
	}
	b.WriteString("0\r\n\r\n")
	return b.String()
}

func TestReadWARCMalformed(t *testing.T) {
	good := conversion("<urn:uuid:g>", "http://g.example/", "good text")
	after := conversion("<urn:uuid:after>", "http://h.example/", "after text")
	tests := []struct {
		name    string
		input   string
		docs    []string // ids
		rejects []string // reason prefixes
	}{
		{"bad header line, Content-Length readable",
			good + "WARC/1.0\r\nWARC-Type: conversion\r\nthis line has no colon\r\nWARC-Record-ID: <urn:uuid:x>\r\nContent-Length: 5\r\n\r\nhello\r\n\r\n" + after,
			[]string{"<urn:uuid:g>", "<urn:uuid:after>"},
			[]string{`malformed WARC record header: header line without a name: "this line has no colon"`}},
		{"missing Content-Length",
			good + "WARC/1.0\r\nWARC-Type: conversion\r\nWARC-Record-ID: <urn:uuid:x>\r\n\r\nhello\r\n\r\n" + after,
			[]string{"<urn:uuid:g>", "<urn:uuid:after>"},
			[]string{"malformed WARC record header: missing Content-Length; skipped 74 bytes from offset 159 to the next record header"}},
		{"invalid Content-Length",
			good + "WARC/1.0\r\nWARC-Type: conversion\r\nContent-Length: 12x\r\n\r\nhello\r\n\r\n" + after,
			[]string{"<urn:uuid:g>", "<urn:uuid:after>"},
			[]string{`malformed WARC record header: invalid Content-Length "12x"; skipped 65 bytes from offset 159 to the next record header`}},
		{"not a version line",
			good + "garbage here\r\n" + after,
			[]string{"<urn:uuid:g>", "<urn:uuid:after>"},
			[]string{`malformed WARC record: expected a WARC/1.x version line, found "garbage here\r\n"; skipped 14 bytes from offset 159 to the next record header`}},
		{"missing WARC-Type",
			"WARC/1.0\r\nWARC-Record-ID: <urn:uuid:x>\r\nContent-Length: 2\r\n\r\nhi\r\n\r\n" + after,
			[]string{"<urn:uuid:after>"},
			[]string{"malformed WARC record header: missing WARC-Type"}},
		{"truncated block",
			good + after[:len(after)-8],
			[]string{"<urn:uuid:g>"},
			[]string{"truncated WARC record: file ends 6 bytes into a 10-byte block; skipped 157 bytes from offset 159 to the end of the file"}},
		{"truncated header",
			good + "WARC/1.0\r\nWARC-Type: conv",
			[]string{"<urn:uuid:g>"},
			[]string{"truncated WARC record: file ends in the header; skipped 25 bytes from offset 159 to the end of the file"}},
		{"empty file", "", nil, nil},
		{"blank lines only", "\r\n\r\n\n", nil, nil},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, dir, "m.warc.wet", []byte(tt.input))
			res := readFile(t, path, Options{})
			if res.err != nil {
				t.Fatal(res.err)
			}
			var ids []string
			for _, d := range res.docs {
				ids = append(ids, d.ID)
			}
			if !reflect.DeepEqual(ids, tt.docs) {
				t.Errorf("docs %q, want %q", ids, tt.docs)
			}
			if got := reasons(res.rejects); !reflect.DeepEqual(got, tt.rejects) {
				t.Errorf("rejects %q, want %q", got, tt.rejects)
			}
			for _, r := range res.rejects {
				if r.File != path || strings.HasPrefix(tt.input, good) && r.Offset != int64(len(good)) {
					t.Errorf("reject %+v: want file %s offset %d", r, path, len(good))
				}
			}
		})
	}
}

func TestReadWARCGzipDamage(t *testing.T) {
	var records []string
	for i := 0; i < 30; i++ {
		records = append(records, conversion(fmt.Sprintf("<urn:uuid:%d>", i), "http://x.example/", strings.Repeat("words and more words ", 10+i)))
	}
	whole := gzipMembers(t, records...)
	firstLen := len(gzipMembers(t, records[0]))
	corrupt := bytes.Clone(whole)
	copy(corrupt[firstLen*3:], "\x00\x01\x02\x03\x04\x05") // damage the header or data of a later member
	dir := t.TempDir()
	for name, data := range map[string][]byte{
		"truncated.warc.wet.gz": whole[:len(whole)/2],
		"corrupt.warc.wet.gz":   corrupt,
		"notgzip.warc.wet.gz":   []byte(records[0]),
	} {
		t.Run(name, func(t *testing.T) {
			path := writeFile(t, dir, name, data)
			res := readFile(t, path, Options{})
			if name == "corrupt.warc.wet.gz" {
				// The damaged member is skipped; reading goes on with the next.
				if res.err != nil || len(res.docs) != len(records)-1 || len(res.rejects) != 1 || !strings.Contains(res.rejects[0].Reason, "to the next gzip member") {
					t.Fatalf("err %v, %d docs, rejects %+v", res.err, len(res.docs), res.rejects)
				}
				return
			}
			if res.err == nil || !strings.HasPrefix(res.err.Error(), path+": offset ") {
				t.Fatalf("err = %v", res.err)
			}
			if name == "notgzip.warc.wet.gz" {
				return
			}
			if len(res.docs) == 0 || len(res.rejects) != 1 || !strings.Contains(res.rejects[0].Reason, "gzip") {
				t.Fatalf("%d docs, rejects %+v", len(res.docs), res.rejects)
			}
			if res.rejects[0].Offset <= res.docs[len(res.docs)-1].Offset {
				t.Errorf("reject offset %d not after the last doc", res.rejects[0].Offset)
			}
			t.Logf("%d docs; reject %q; error %v", len(res.docs), res.rejects[0].Reason, res.err)
		})
	}
}
