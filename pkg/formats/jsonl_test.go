package formats

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// lineOffsets returns the offset of every line of data (1-based index).
func lineOffsets(data []byte) []int64 {
	offs := []int64{0, 0}
	for i, c := range data {
		if c == '\n' && i+1 < len(data) {
			offs = append(offs, int64(i+1))
		}
	}
	return offs
}

func TestReadJSONLSample(t *testing.T) {
	const path = "testdata/sample.jsonl"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	off := lineOffsets(data)
	wantDocs := []docSummary{
		{"a1", "https://example.com/a", "The quick brown fox jumps over the lazy dog.", off[1], 1},
		{"2", "", "Numeric ids are kept as their JSON text.", off[2], 2},
		{path + ":4", "", "No id here: the id is the file and line.", off[4], 4},
		{"b3", "", "Escapes: \"quoted\" tab\there é 😀 slash/ newline\nend", off[7], 7},
		{"c4", "", "", off[10], 10},
	}
	wantRejects := []Reject{
		{path, off[5], 5, "invalid JSON: unexpected end of JSON input (at byte 33)", 0, 0},
		{path, off[6], 6, `missing text field "text"`, 0, 0},
		{path, off[9], 9, `text field "text" is not a string but a number`, 0, 0},
	}
	res := readFile(t, path, Options{})
	if res.err != nil {
		t.Fatal(res.err)
	}
	if got := summarize(res.docs); !reflect.DeepEqual(got, wantDocs) {
		t.Errorf("docs:\n got %+v\nwant %+v", got, wantDocs)
	}
	if !reflect.DeepEqual(res.rejects, wantRejects) {
		t.Errorf("rejects:\n got %+v\nwant %+v", res.rejects, wantRejects)
	}
}

// TestReadJSONLCompressed checks that the gzip (one or many members) and
// zstd variants of a file read the same as the plain file.
func TestReadJSONLCompressed(t *testing.T) {
	data, err := os.ReadFile("testdata/sample.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	plain := readFile(t, writeFile(t, dir, "s.jsonl", data), Options{})
	lines := strings.SplitAfter(string(data), "\n")
	variants := map[string][]byte{
		"s.jsonl.gz":   gzipMembers(t, string(data)),
		"s.ndjson.gz":  gzipMembers(t, lines...),
		"s.jsonl.zst":  zstdBytes(t, data),
		"s.ndjson.zst": zstdBytes(t, data),
	}
	for name, content := range variants {
		path := writeFile(t, dir, name, content)
		got := readFile(t, path, Options{})
		if got.err != nil {
			t.Errorf("%s: %v", name, got.err)
			continue
		}
		for i := range got.docs {
			got.docs[i].ID = strings.Replace(got.docs[i].ID, path, plain.rejects[0].File, 1)
		}
		for i := range got.rejects {
			got.rejects[i].File = plain.rejects[0].File
		}
		if !reflect.DeepEqual(summarize(got.docs), summarize(plain.docs)) || !reflect.DeepEqual(got.rejects, plain.rejects) {
			t.Errorf("%s: got %+v %+v\nwant %+v %+v", name, summarize(got.docs), got.rejects, summarize(plain.docs), plain.rejects)
		}
	}
}

func TestReadJSONLRejects(t *testing.T) {
	long := `{"id":"long","text":"` + strings.Repeat("x", 70<<10) + `"}`
	tests := []struct {
		name    string
		input   string
		opts    Options
		docs    []string // ids
		rejects []string // reasons, as prefixes
		lines   []int64  // line numbers of the rejects
	}{
		{name: "invalid UTF-8", input: "{\"id\":\"u\",\"text\":\"ok \xff\xfe bad\"}\n{\"id\":\"v\",\"text\":\"fine\"}\n",
			docs: []string{"v"}, rejects: []string{"invalid UTF-8 in text at byte 3"}, lines: []int64{1}},
		{name: "invalid UTF-8 in id", input: "{\"id\":\"\xff\",\"text\":\"t\"}\n",
			rejects: []string{`invalid UTF-8 in id field "id"`}, lines: []int64{1}},
		{name: "too large", input: `{"id":"big","text":"0123456789abc"}` + "\n" + `{"id":"small","text":"0123456789"}`,
			opts: Options{MaxDocBytes: 10}, docs: []string{"small"},
			rejects: []string{"document of 13 bytes exceeds --max-doc-bytes 10"}, lines: []int64{1}},
		{name: "escapes count after decoding", input: `{"id":"e","text":"\u00e9\u00e9\u00e9\u00e9\u00e9"}`,
			opts: Options{MaxDocBytes: 10}, docs: []string{"e"}},
		{name: "line too long", input: long + "\n" + `{"id":"after","text":"t"}` + "\n",
			opts: Options{MaxDocBytes: 100}, docs: []string{"after"},
			rejects: []string{"line of 71704 bytes exceeds the limit of 65736 bytes"}, lines: []int64{1}},
		{name: "long line within limit", input: long + "\n", docs: []string{"long"}},
		{name: "not an object", input: "[1,2]\n\"s\"\n{\"text\":\"t\",\"id\":\"o\"}\n", docs: []string{"o"},
			rejects: []string{"invalid JSON: line is a JSON an array, not an object", "invalid JSON: line is a JSON a string, not an object"},
			lines:   []int64{1, 2}},
		{name: "syntax error", input: "{\"id\":\"x\" \"text\":\"t\"}\n",
			rejects: []string{"invalid JSON: invalid character '\"' after object key:value pair (at byte 11)"}, lines: []int64{1}},
		{name: "null text", input: `{"id":"n","text":null}`, rejects: []string{`text field "text" is not a string but null`}, lines: []int64{1}},
		{name: "bad id type", input: `{"id":true,"text":"t"}`, rejects: []string{`id field "id" is not a string or number but a boolean`}, lines: []int64{1}},
		{name: "null id", input: `{"id":null,"text":"t"}`, docs: []string{"FILE:1"}},
		{name: "CRLF and BOM", input: "\xef\xbb\xbf{\"id\":\"a\",\"text\":\"t\"}\r\n\r\n{\"id\":\"b\",\"text\":\"u\"}\r\n", docs: []string{"a", "b"}},
		{name: "custom fields", input: `{"doc_id":"k","content":"t","id":"ignored"}`,
			opts: Options{IDField: "doc_id", TextField: "content"}, docs: []string{"k"}},
	}
	dir := t.TempDir()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, dir, filepath.Base(t.Name())+string(rune('a'+i))+".jsonl", []byte(tt.input))
			res := readFile(t, path, tt.opts)
			if res.err != nil {
				t.Fatal(res.err)
			}
			var ids []string
			for _, d := range res.docs {
				ids = append(ids, strings.Replace(d.ID, path, "FILE", 1))
			}
			if !reflect.DeepEqual(ids, tt.docs) {
				t.Errorf("doc ids = %q, want %q", ids, tt.docs)
			}
			if len(res.rejects) != len(tt.rejects) {
				t.Fatalf("rejects = %+v, want %q", res.rejects, tt.rejects)
			}
			for j, r := range res.rejects {
				if !strings.HasPrefix(r.Reason, tt.rejects[j]) || r.Line != tt.lines[j] || r.File != path {
					t.Errorf("reject %d = %+v, want reason %q line %d", j, r, tt.rejects[j], tt.lines[j])
				}
			}
		})
	}
}

func TestReadJSONLNoTrailingNewline(t *testing.T) {
	path := writeFile(t, t.TempDir(), "x.jsonl", []byte(`{"id":"a","text":"one"}`+"\n"+`{"id":"b","text":"two"}`))
	res := readFile(t, path, Options{})
	want := []docSummary{{"a", "", "one", 0, 1}, {"b", "", "two", 24, 2}}
	if res.err != nil || !reflect.DeepEqual(summarize(res.docs), want) {
		t.Errorf("got %+v, %v; want %+v", summarize(res.docs), res.err, want)
	}
}

// TestReadJSONLGzipDamage checks that damage to a gzip file loses no record
// silently: the records before it are read, one reject covers the rest, and
// the error names the file and offset.
func TestReadJSONLGzipDamage(t *testing.T) {
	var lines []string
	for i := 0; i < 40; i++ {
		lines = append(lines, `{"id":"`+string(rune('A'+i%26))+`","text":"`+strings.Repeat("lorem ipsum ", 20+i)+`"}`+"\n")
	}
	whole := gzipMembers(t, lines...)
	memberLen := len(gzipMembers(t, lines[0]))

	truncated := whole[:len(whole)-len(whole)/3]
	corrupt := bytes.Clone(whole)
	corrupt[memberLen+memberLen/2] ^= 0xff // inside the second member's data
	badCRC := gzipMembers(t, lines[:3]...)
	badCRC[memberLen-8] ^= 0x01 // first member's CRC-32

	tests := []struct {
		name    string
		data    []byte
		minDocs int
		reason  string
	}{
		{"truncated", truncated, 20, "truncated gzip stream at compressed byte"},
		{"corrupt member", corrupt, 1, "corrupt gzip member at compressed byte"},
		{"bad CRC", badCRC, 0, "corrupt gzip member at compressed byte"},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, dir, strings.ReplaceAll(tt.name, " ", "_")+".jsonl.gz", tt.data)
			res := readFile(t, path, Options{})
			if res.err == nil {
				t.Fatal("no error")
			}
			if !strings.HasPrefix(res.err.Error(), path+": offset ") {
				t.Errorf("error %q does not start with the file and offset", res.err)
			}
			// Data of a damaged member is only known bad at the member's end,
			// so a garbled line may be rejected before the gzip error.
			if len(res.docs) < tt.minDocs || len(res.rejects) == 0 {
				t.Fatalf("%d docs, rejects %+v", len(res.docs), res.rejects)
			}
			r := res.rejects[len(res.rejects)-1]
			if !strings.HasPrefix(r.Reason, tt.reason) || !strings.HasSuffix(r.Reason, "; rest of file not read") {
				t.Errorf("reject reason %q", r.Reason)
			}
			if r.Line != int64(len(res.docs)+len(res.rejects)) {
				t.Errorf("reject at line %d after %d docs", r.Line, len(res.docs))
			}
			if len(res.docs) > 0 && res.docs[len(res.docs)-1].Offset >= r.Offset {
				t.Errorf("reject offset %d not after the last doc's %d", r.Offset, res.docs[len(res.docs)-1].Offset)
			}
		})
	}
}

func TestReadJSONLZstdTruncated(t *testing.T) {
	var data []byte
	for i := 0; i < 200; i++ {
		data = append(data, `{"text":"some text that repeats a little, line `+strings.Repeat("z", i)+`"}`+"\n"...)
	}
	z := zstdBytes(t, data)
	path := writeFile(t, t.TempDir(), "t.jsonl.zst", z[:len(z)*2/3])
	res := readFile(t, path, Options{})
	if res.err == nil || len(res.rejects) != 1 || !strings.Contains(res.rejects[0].Reason, "zstd") {
		t.Fatalf("err %v, rejects %+v", res.err, res.rejects)
	}
}
