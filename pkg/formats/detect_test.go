package formats

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestDetect detects the fixtures under testdata/detect, whose names do
// not tell their kind, by their content, or with a kind given; each one
// detected is then read.
func TestDetect(t *testing.T) {
	const jsonLines = `{"id":"a","text":"one document"}` + "\n" + `{"id":"b","text":"another"}` + "\n"
	tests := []struct {
		file    string
		want    Kind // KindAuto: detect
		kind    Kind // "" when the kind is unknown
		comp    string
		docs    int
		text    string // of the first document, when given
		unknown string // part of the reason
	}{
		{file: "crawl-wet.gz", want: KindAuto, kind: KindWET, comp: "gzip", docs: 1},
		{file: "crawl-wet", want: KindAuto, kind: KindWET, comp: "none", docs: 1},
		{file: "crawl-wet.zstd", want: KindAuto, kind: KindWET, comp: "zstd", docs: 1},
		{file: "crawl-warc.gz", want: KindAuto, kind: KindWARC, comp: "gzip", docs: 1},
		{file: "crawl-warc", want: KindAuto, kind: KindWARC, comp: "none", docs: 1},
		{file: "warcinfo-only.gz", want: KindAuto, kind: KindWARC, comp: "gzip", docs: 0},
		{file: "lines.json", want: KindAuto, kind: KindJSONL, comp: "none", docs: 2},
		{file: "lines.json.gz", want: KindAuto, kind: KindJSONL, comp: "gzip", docs: 2},
		{file: "lines.zstd", want: KindAuto, kind: KindJSONL, comp: "zstd", docs: 2},
		{file: "truncated-object", want: KindAuto, kind: KindJSONL, comp: "none", docs: 1},
		{file: "table.pq", want: KindAuto, kind: KindParquet, comp: "none", docs: 2},
		{file: "array.json.gz", want: KindAuto, unknown: `gzip-compressed, content starts with "[{`},
		{file: "pretty.json", want: KindAuto, unknown: "not one (JSON Lines need one object per line)"},
		{file: "table.csv", want: KindAuto, unknown: `content starts with "id,text`},
		{file: "empty.dat", want: KindAuto, unknown: "empty file"},
		{file: "notgzip.gz", want: KindAuto, unknown: "starts like a gzip stream but"},
		// A kind given: the content tells the compression only.
		{file: "crawl-wet.gz", want: KindWET, kind: KindWET, comp: "", docs: 1}, // by its name
		{file: "crawl-wet", want: KindWARC, kind: KindWARC, comp: "none", docs: 0},
		{file: "lines.json", want: KindJSONL, kind: KindJSONL, comp: "none", docs: 2},
		{file: "table.csv", want: KindText, kind: KindText, comp: "none", docs: 1},
		{file: "lines.json.gz", want: KindText, kind: KindText, comp: "", docs: 1, text: jsonLines},
		{file: "lines.zstd", want: KindText, kind: KindText, comp: "zstd", docs: 1, text: jsonLines},
		{file: "table.pq", want: KindParquet, kind: KindParquet, docs: 2},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.file+"/"+string(tt.want), func(t *testing.T) {
			path := filepath.Join("testdata", "detect", tt.file)
			f, err := Detect(ctx, nil, path, tt.want)
			if tt.unknown != "" {
				if !IsUnknownKind(err) || !strings.Contains(err.Error(), tt.unknown) || !strings.Contains(err.Error(), path) {
					t.Fatalf("Detect = %+v, %v; want an unknown kind naming the file, because %s", f, err, tt.unknown)
				}
				return
			}
			if err != nil || f.Kind != tt.kind || f.Compression != tt.comp {
				t.Fatalf("Detect = %+v, %v; want %s, compression %q", f, err, tt.kind, tt.comp)
			}
			res := readAll(t, Piece{Path: path, Kind: f.Kind, End: -1, StartLine: 1, Compression: f.Compression}, Options{})
			if res.err != nil || len(res.docs) != tt.docs || len(res.rejects) != 0 {
				t.Fatalf("read %d documents (want %d), rejects %q, err %v", len(res.docs), tt.docs, reasons(res.rejects), res.err)
			}
			if tt.text != "" && string(res.docs[0].Text) != tt.text {
				t.Errorf("text %q, want %q", res.docs[0].Text, tt.text)
			}
		})
	}
}

// TestDetectByName checks that a name that tells the kind decides without
// reading the file (which does not exist).
func TestDetectByName(t *testing.T) {
	f, err := Detect(context.Background(), nil, "nowhere/x.warc.wet.gz", KindAuto)
	if err != nil || f != (Format{Kind: KindWET}) {
		t.Errorf("Detect = %+v, %v", f, err)
	}
	if _, err := Detect(context.Background(), nil, "nowhere/x.wet.gz", KindAuto); err == nil || IsUnknownKind(err) {
		t.Errorf("Detect of a missing file with an unknown name: %v, want the open error", err)
	}
}

func TestParseKind(t *testing.T) {
	for in, want := range map[string]Kind{"auto": KindAuto, "WET": KindWET, "warc": KindWARC, "jsonl": KindJSONL, "parquet": KindParquet, "text": KindText} {
		if got, err := ParseKind(in); err != nil || got != want {
			t.Errorf("ParseKind(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseKind("csv"); err == nil || !strings.Contains(err.Error(), "--input-format") {
		t.Errorf("ParseKind(csv): %v", err)
	}
}

// TestKindSet checks that *Kind is a flag.Value: Set reads what ParseKind
// reads, keeps the kind unchanged on a bad value, and String gives back a
// name Set reads as the same kind.
func TestKindSet(t *testing.T) {
	tests := []struct {
		in      string
		want    Kind
		wantErr bool
	}{
		{"auto", KindAuto, false},
		{"warc", KindWARC, false},
		{"WET", KindWET, false},
		{"jsonl", KindJSONL, false},
		{"parquet", KindParquet, false},
		{"text", KindText, false},
		{"txt", KindText, false},
		{"csv", KindJSONL, true},
		{"", KindJSONL, true},
	}
	for _, tt := range tests {
		k := KindJSONL
		err := k.Set(tt.in)
		if (err != nil) != tt.wantErr || k != tt.want {
			t.Errorf("Set(%q): %q, %v; want %q, error %v", tt.in, k, err, tt.want, tt.wantErr)
		}
		if tt.wantErr {
			if err == nil || !strings.Contains(err.Error(), "--input-format") {
				t.Errorf("Set(%q): error %v does not name --input-format", tt.in, err)
			}
			continue
		}
		var again Kind
		if err := again.Set(k.String()); err != nil || again != k {
			t.Errorf("Set(%q).String() = %q reads as %q, %v", tt.in, k.String(), again, err)
		}
	}
}
