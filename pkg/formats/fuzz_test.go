package formats

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzRead reads data as the stream of a whole file of the given name and
// kind, and checks what comes out: every document valid UTF-8 and within
// MaxDocBytes, offsets and lines never going back, rejects and errors
// naming the file.
func fuzzRead(t *testing.T, data []byte, name string, kind Kind, maxDoc uint16) {
	o := Options{MaxDocBytes: int(maxDoc % 2048)}.withDefaults()
	lastOff, lastLine := int64(-1), int64(0)
	check := func(what string, off, line int64) {
		if off < lastOff || line < lastLine {
			t.Fatalf("%s at offset %d line %d after offset %d line %d", what, off, line, lastOff, lastLine)
		}
		lastOff, lastLine = off, line
	}
	r := &pieceReader{
		ctx:  context.Background(),
		path: name,
		o:    o,
		emit: func(d Doc) error {
			if !utf8.Valid(d.Text) {
				t.Fatalf("doc %q: invalid UTF-8 text %q", d.ID, d.Text)
			}
			if o.MaxDocBytes > 0 && len(d.Text) > o.MaxDocBytes {
				t.Fatalf("doc %q: %d bytes > MaxDocBytes %d", d.ID, len(d.Text), o.MaxDocBytes)
			}
			if d.ID == "" {
				t.Fatalf("doc without id at offset %d", d.Offset)
			}
			check("doc", d.Offset, d.Line)
			return nil
		},
		reject: func(rj Reject) error {
			if rj.File != name || rj.Reason == "" {
				t.Fatalf("bad reject %+v", rj)
			}
			check("reject", rj.Offset, rj.Line)
			return nil
		},
	}
	err := r.readStream(bytes.NewReader(data), Piece{Path: name, Kind: kind, End: -1, StartLine: 1})
	if err != nil && !strings.HasPrefix(err.Error(), name+": offset ") {
		t.Fatalf("error %q does not name the file and offset", err)
	}
}

func jsonlSeeds(f *testing.F) [][]byte {
	sample, err := os.ReadFile("testdata/sample.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	return [][]byte{
		sample,
		[]byte("{\"id\":\"a\",\"text\":\"caf\xc3\xa9 \\ud83d\\ude00 \\ud800 x\"}\n\n{\"text\":\"\xff\"}"),
		[]byte("\xef\xbb\xbf{\"id\":1e3,\"text\":\"\",\"url\":\"u\"}\r\n[1]\nnull\n{\"text\":{}}"),
		[]byte(`{"text":"` + strings.Repeat(`\n\"`, 300) + `"}`),
	}
}

func FuzzReadJSONL(f *testing.F) {
	for _, s := range jsonlSeeds(f) {
		f.Add(s, uint16(0))
		f.Add(s, uint16(40))
	}
	f.Fuzz(func(t *testing.T, data []byte, maxDoc uint16) {
		fuzzRead(t, data, "fuzz.jsonl", KindJSONL, maxDoc)
	})
}

func FuzzReadJSONLZstd(f *testing.F) {
	for _, s := range jsonlSeeds(f) {
		f.Add(zstdBytes(f, s), uint16(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, maxDoc uint16) {
		fuzzRead(t, data, "fuzz.jsonl.zst", KindJSONL, maxDoc)
	})
}

// warcSeeds are WET and WARC files, good and damaged.
func warcSeeds(tb testing.TB) []string {
	records, _, _ := wetRecords()
	wet := strings.Join(records, "")
	warc := warcinfo() +
		response("<urn:1>", "http://a/", "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=latin1\r\n", "<p>a<script>x</script>b\xe9</p><br>c") +
		response("<urn:2>", "http://b/", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n", chunk("<html><body>chunked</body></html>", 5)) +
		response("<urn:3>", "http://c/", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Encoding: gzip\r\n", string(gzipMembers(tb, "zipped"))) +
		warcRecord("<p>bare</p>", "WARC-Type: response", "WARC-Record-ID: <urn:4>", "Content-Type: text/html")
	return []string{
		wet, warc,
		wet[:len(wet)/2],
		strings.Replace(wet, "Content-Length", "Content-Lenght", 2),
		strings.ReplaceAll(warc, "\r\n", "\n"),
	}
}

func FuzzReadWARC(f *testing.F) {
	for _, s := range warcSeeds(f) {
		f.Add([]byte(s), false, uint16(0))
		f.Add([]byte(s), true, uint16(30))
	}
	f.Fuzz(func(t *testing.T, data []byte, wet bool, maxDoc uint16) {
		if wet {
			fuzzRead(t, data, "fuzz.warc.wet", KindWET, maxDoc)
		} else {
			fuzzRead(t, data, "fuzz.warc", KindWARC, maxDoc)
		}
	})
}

func FuzzReadWARCGzip(f *testing.F) {
	for _, s := range warcSeeds(f) {
		f.Add(gzipMembers(f, s), false)
		records := strings.SplitAfter(s, "\r\n\r\nWARC/")
		f.Add(gzipMembers(f, records...), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, wet bool) {
		if wet {
			fuzzRead(t, data, "fuzz.warc.wet.gz", KindWET, 0)
		} else {
			fuzzRead(t, data, "fuzz.warc.gz", KindWARC, 0)
		}
	})
}

// FuzzSplitJSONL checks that the pieces of a JSONL file read the same as
// the whole file, whatever the cut size.
func FuzzSplitJSONL(f *testing.F) {
	for _, s := range jsonlSeeds(f) {
		f.Add(s, uint16(1))
		f.Add(s, uint16(50))
	}
	f.Fuzz(func(t *testing.T, data []byte, target uint16) {
		const name = "fuzz.jsonl"
		read := func(p Piece) (out []string) {
			r := &pieceReader{ctx: context.Background(), path: name, o: Options{}.withDefaults(),
				emit: func(d Doc) error {
					out = append(out, d.ID+"\x00"+string(d.Text)+"\x00"+string(rune(d.Offset))+string(rune(d.Line)))
					return nil
				},
				reject: func(rj Reject) error {
					out = append(out, rj.Reason+"\x00"+string(rune(rj.Offset))+string(rune(rj.Line)))
					return nil
				}}
			if err := r.readStream(bytes.NewReader(data[p.Start:]), p); err != nil {
				t.Fatal(err)
			}
			return out
		}
		whole := read(Piece{Path: name, Kind: KindJSONL, End: -1, StartLine: 1})
		pieces, err := splitLines(bytes.NewReader(data), name, int64(target%512)+1)
		if err != nil {
			t.Fatal(err)
		}
		checkPieces(t, string(data), pieces)
		var joined []string
		for _, p := range pieces {
			joined = append(joined, read(p)...)
		}
		if strings.Join(joined, "\n") != strings.Join(whole, "\n") {
			t.Fatalf("pieces %+v read\n%q\nwhole file read\n%q", pieces, joined, whole)
		}
	})
}

// FuzzReadWARCResponse fuzzes the content of well-framed WARC records (the
// HTTP head and payload of a response, the text of a conversion), which
// FuzzReadWARC rarely reaches because Content-Length must match.
func FuzzReadWARCResponse(f *testing.F) {
	f.Add("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=latin1\r\n", []byte("<p>a<script>x</script>b\xe9</p><br>c"), uint16(0))
	f.Add("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n", []byte(chunk("<html><body>chunked</body></html>", 5)), uint16(10))
	f.Add("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Encoding: gzip\r\n", gzipMembers(f, "zipped"), uint16(0))
	f.Add("HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\n", []byte("x\x9c\xcbH\xcd\xc9\xc9\a\x00\x06,\x02\x15"), uint16(0))
	f.Add("HTTP/1.0 404\r\n", []byte("<template><p>t</template><noscript>n</noscript><style>s</style>&amp;&#0;"), uint16(3))
	f.Fuzz(func(t *testing.T, head string, body []byte, maxDoc uint16) {
		data := warcinfo() + response("<urn:1>", "http://a/", head, string(body)) +
			warcRecord(string(body), "WARC-Type: response", "WARC-Record-ID: <urn:2>", "Content-Type: "+head) +
			warcRecord(string(body), "WARC-Type: response", "WARC-Record-ID: <urn:3>")
		fuzzRead(t, []byte(data), "fuzz.warc", KindWARC, maxDoc)
		fuzzRead(t, []byte(conversion("<urn:4>", head, string(body))), "fuzz.warc.wet", KindWET, maxDoc)
	})
}
