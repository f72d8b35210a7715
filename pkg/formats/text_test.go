package formats

import (
	"reflect"
	"strings"
	"testing"
)

func TestReadText(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, content string
		opts          Options
		docs          []docSummary
		rejects       []string
	}{
		{"sample", "", Options{}, []docSummary{{"testdata/sample.txt", "", "A plain text document.\nIt has two lines.\n", 0, 0}}, nil},
		{"bad.txt", "ok \xff", Options{}, nil, []string{"invalid UTF-8 in text at byte 3"}},
		{"big.txt", strings.Repeat("x", 11), Options{MaxDocBytes: 10}, nil, []string{"document of 11 bytes exceeds --max-doc-bytes 10"}},
		{"empty.txt", "", Options{}, []docSummary{{"EMPTY", "", "", 0, 0}}, nil},
	}
	for _, tt := range tests {
		path := "testdata/sample.txt"
		if tt.name != "sample" {
			path = writeFile(t, dir, tt.name, []byte(tt.content))
		}
		res := readFile(t, path, tt.opts)
		if res.err != nil {
			t.Fatal(res.err)
		}
		for i := range tt.docs {
			if tt.docs[i].ID == "EMPTY" {
				tt.docs[i].ID = path
			}
		}
		if got := summarize(res.docs); len(got)+len(tt.docs) > 0 && !reflect.DeepEqual(got, tt.docs) {
			t.Errorf("%s: docs %+v, want %+v", tt.name, got, tt.docs)
		}
		if got := reasons(res.rejects); !reflect.DeepEqual(got, tt.rejects) {
			t.Errorf("%s: rejects %q, want %q", tt.name, got, tt.rejects)
		}
	}
}

func TestReadErrors(t *testing.T) {
	res := readAll(t, Piece{Path: "testdata/does-not-exist.jsonl", Kind: KindJSONL, End: -1}, Options{})
	if res.err == nil || !strings.Contains(res.err.Error(), "testdata/does-not-exist.jsonl") {
		t.Errorf("missing file: %v", res.err)
	}
	res = readAll(t, Piece{Path: "testdata/sample.txt", Kind: "csv", End: -1}, Options{})
	if res.err == nil || !strings.Contains(res.err.Error(), "testdata/sample.txt") {
		t.Errorf("bad kind: %v", res.err)
	}
}
