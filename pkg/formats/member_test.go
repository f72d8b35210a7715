package formats

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// readMember reads the gzip member of length n at off in path, as an HTTP
// range request would, and returns what it decompresses to. It fails when
// the bytes are not exactly one gzip member.
func readMember(t *testing.T, path string, off, n int64) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	raw := make([]byte, n)
	if _, err := f.ReadAt(raw, off); err != nil {
		t.Fatalf("reading %d bytes at %d: %v", n, off, err)
	}
	br := bytes.NewReader(raw)
	zr, err := gzip.NewReader(br)
	if err != nil {
		t.Fatalf("bytes %d..%d: %v", off, off+n, err)
	}
	zr.Multistream(false)
	record, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("bytes %d..%d: %v", off, off+n, err)
	}
	if br.Len() != 0 {
		t.Fatalf("bytes %d..%d: %d bytes after the gzip member", off, off+n, br.Len())
	}
	return record
}

// TestCompressedLocation reads WET and WARC files whose records are gzip
// members of their own, and reads each document's record back from its
// compressed offset and length alone, also after a damaged member;
// records that share a member (a single-stream gzip file, two records in
// one member) and uncompressed files have none.
func TestCompressedLocation(t *testing.T) {
	wet := []string{
		warcinfo(),
		conversion("<urn:uuid:1>", "http://a.example/", "First document."),
		warcRecord("metadata", "WARC-Type: metadata", "WARC-Record-ID: <urn:uuid:m>"),
		conversion("<urn:uuid:2>", "http://b.example/", "Zweites Dokument: Grüße."),
		conversion("<urn:uuid:3>", "http://c.example/", strings.Repeat("long text ", 20000)),
	}
	warc := []string{
		warcinfo(),
		response("<urn:uuid:r1>", "http://a.example/", "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n", "<p>one page</p>"),
		response("<urn:uuid:r2>", "http://b.example/", "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n", "<p>another page</p>"),
	}
	dir := t.TempDir()
	tests := []struct {
		name string
		data []byte
		want []bool // whether each document is its own member
		lost int    // records lost to damage
	}{
		{name: "members.warc.wet.gz", data: gzipMembers(t, wet...), want: []bool{true, true, true}},
		{name: "members.warc.gz", data: gzipMembers(t, warc...), want: []bool{true, true}},
		{name: "single.warc.wet.gz", data: gzipMembers(t, strings.Join(wet, "")), want: []bool{false, false, false}},
		{name: "pairs.warc.wet.gz", data: gzipMembers(t, wet[0]+wet[1], wet[2], wet[3]+wet[4]), want: []bool{false, false, false}},
		{name: "last-alone.warc.gz", data: gzipMembers(t, warc[0]+warc[1], warc[2]), want: []bool{false, true}},
		{name: "damaged.warc.wet.gz", lost: 1, want: []bool{true, true},
			data: damageMember(t, wet, 1, func(m []byte) { copy(m[len(m)/2:], bytes.Repeat([]byte{0xff}, 8)) })},
		{name: "plain.warc.wet", data: []byte(strings.Join(wet, "")), want: []bool{false, false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, dir, tt.name, tt.data)
			res := readFile(t, path, Options{})
			if res.err != nil || len(res.rejects) != tt.lost {
				t.Fatalf("err %v, rejects %q", res.err, reasons(res.rejects))
			}
			if len(res.docs) != len(tt.want) {
				t.Fatalf("%d documents, want %d", len(res.docs), len(tt.want))
			}
			kind, _ := DetectKind(path)
			for i, d := range res.docs {
				if own := d.CompressedLength > 0; own != tt.want[i] {
					t.Errorf("document %s: compressed offset %d length %d; want a member of its own: %v", d.ID, d.CompressedOffset, d.CompressedLength, tt.want[i])
				}
				if d.CompressedLength == 0 {
					continue
				}
				record := readMember(t, path, d.CompressedOffset, d.CompressedLength)
				one := writeFile(t, t.TempDir(), "one."+string(kind), record)
				back := readAll(t, Piece{Path: one, Kind: kind, End: -1, StartLine: 1}, Options{})
				if back.err != nil || len(back.docs) != 1 {
					t.Fatalf("document %s: the record read back gives %d documents (err %v)", d.ID, len(back.docs), back.err)
				}
				if b := back.docs[0]; b.ID != d.ID || b.URL != d.URL || !bytes.Equal(b.Text, d.Text) {
					t.Errorf("document %s: the record read back is %s %s %.40q, want %.40q", d.ID, b.ID, b.URL, b.Text, d.Text)
				}
			}
		})
	}
}

// TestCompressedLocationSample checks the sample's WET and WARC files,
// written by cmd/gencorpus with a gzip member per record: every document
// is its own member, read back whole.
func TestCompressedLocationSample(t *testing.T) {
	for _, name := range []string{"sample.warc.wet.gz", "sample.warc.gz"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("..", "..", "testdata", "sample", name)
			res := readFile(t, path, Options{})
			if res.err != nil || len(res.docs) == 0 {
				t.Fatalf("%d documents, err %v", len(res.docs), res.err)
			}
			for _, d := range res.docs {
				if d.CompressedLength == 0 {
					t.Fatalf("document %s at %d: no compressed location", d.ID, d.Offset)
				}
				record := readMember(t, path, d.CompressedOffset, d.CompressedLength)
				if !bytes.HasPrefix(record, []byte("WARC/1.")) || !bytes.Contains(record, []byte(d.ID)) {
					t.Fatalf("document %s: member at %d is not its record: %.60q", d.ID, d.CompressedOffset, record)
				}
			}
		})
	}
}
