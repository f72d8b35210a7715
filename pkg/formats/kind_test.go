package formats

import (
	"strings"
	"testing"
)

func TestDetectKind(t *testing.T) {
	tests := []struct {
		path string
		want Kind
	}{
		{"crawl/CC-MAIN-1.warc.wet.gz", KindWET},
		{"x.warc.wet", KindWET},
		{"x.WARC.GZ", KindWARC},
		{"x.warc", KindWARC},
		{"x.jsonl", KindJSONL},
		{"x.jsonl.gz", KindJSONL},
		{"x.jsonl.zst", KindJSONL},
		{"x.ndjson", KindJSONL},
		{"x.ndjson.gz", KindJSONL},
		{"x.ndjson.zst", KindJSONL},
		{"data/part-0.parquet", KindParquet},
		{"notes.txt", KindText},
	}
	for _, tt := range tests {
		got, err := DetectKind(tt.path)
		if err != nil || got != tt.want {
			t.Errorf("DetectKind(%q) = %q, %v; want %q", tt.path, got, err, tt.want)
		}
	}
}

func TestDetectKindUnsupported(t *testing.T) {
	for _, path := range []string{"data/table.csv", "x.json", "x.txt.gz", "x.wet.bz2", "noext"} {
		_, err := DetectKind(path)
		if err == nil {
			t.Errorf("DetectKind(%q): no error", path)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, path) {
			t.Errorf("DetectKind(%q) error %q does not name the file", path, msg)
		}
		for _, k := range []string{"wet", "warc", "jsonl", "parquet", "txt"} {
			if !strings.Contains(msg, k) {
				t.Errorf("DetectKind(%q) error %q does not list kind %s", path, msg, k)
			}
		}
	}
}

func TestCompressed(t *testing.T) {
	tests := map[string]bool{
		"a.jsonl": false, "a.jsonl.gz": true, "a.jsonl.zst": true, "a.warc.GZ": true,
		"a.parquet": false, "a.txt": false,
	}
	for path, want := range tests {
		if got := Compressed(path); got != want {
			t.Errorf("Compressed(%q) = %v, want %v", path, got, want)
		}
	}
}
