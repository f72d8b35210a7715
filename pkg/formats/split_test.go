package formats

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// splitFixture builds a JSONL file with lines of varied length, some
// without id, some blank, some bad.
func splitFixture(trailingNewline bool) string {
	var b strings.Builder
	for i := 1; i <= 150; i++ {
		switch {
		case i%17 == 0:
			b.WriteString("\n")
		case i%23 == 0:
			b.WriteString(`{"id":"broken",` + "\n")
		case i%3 == 0:
			fmt.Fprintf(&b, `{"text":"line %d %s"}`+"\n", i, strings.Repeat("w ", i%40))
		default:
			fmt.Fprintf(&b, `{"id":"d%d","text":"line %d %s"}`+"\n", i, i, strings.Repeat("v ", (i*7)%50))
		}
	}
	s := b.String()
	if !trailingNewline {
		s = strings.TrimSuffix(s, "\n")
	}
	return s
}

func TestSplitJSONL(t *testing.T) {
	dir := t.TempDir()
	for _, trailing := range []bool{true, false} {
		data := splitFixture(trailing)
		path := writeFile(t, dir, fmt.Sprintf("split-%v.jsonl", trailing), []byte(data))
		whole := readFile(t, path, Options{})
		if whole.err != nil {
			t.Fatal(whole.err)
		}
		if len(whole.docs) < 100 || len(whole.rejects) == 0 {
			t.Fatalf("fixture too small: %d docs %d rejects", len(whole.docs), len(whole.rejects))
		}
		for _, target := range []int64{1, 7, 64, 100, 333, 1000, 4096, int64(len(data)) - 1, int64(len(data)), 1 << 30, 0} {
			pieces, err := Split(context.Background(), nil, path, KindJSONL, target)
			if err != nil {
				t.Fatal(err)
			}
			checkPieces(t, data, pieces)
			var all result
			for _, p := range pieces {
				res := readAll(t, p, Options{})
				if res.err != nil {
					t.Fatalf("target %d, piece %+v: %v", target, p, res.err)
				}
				all.docs = append(all.docs, res.docs...)
				all.rejects = append(all.rejects, res.rejects...)
			}
			if !reflect.DeepEqual(summarize(all.docs), summarize(whole.docs)) {
				t.Errorf("trailing %v, target %d: %d pieces give docs\n%+v\nwant\n%+v", trailing, target, len(pieces), summarize(all.docs), summarize(whole.docs))
			}
			if !reflect.DeepEqual(all.rejects, whole.rejects) {
				t.Errorf("trailing %v, target %d: rejects %+v, want %+v", trailing, target, all.rejects, whole.rejects)
			}
		}
		// Id-less lines are named by file and line.
		found := false
		for _, d := range whole.docs {
			if d.ID == fmt.Sprintf("%s:%d", path, d.Line) {
				found = true
				if !strings.HasPrefix(string(d.Text), fmt.Sprintf("line %d ", d.Line)) {
					t.Errorf("doc %q has text %q", d.ID, d.Text)
				}
			}
		}
		if !found {
			t.Error("no id-less document")
		}
	}
}

// checkPieces checks that pieces tile the file, start at line starts, and
// carry the right line numbers.
func checkPieces(t *testing.T, data string, pieces []Piece) {
	t.Helper()
	var next int64
	for i, p := range pieces {
		if p.Start != next {
			t.Fatalf("piece %d starts at %d, want %d", i, p.Start, next)
		}
		if p.Start > 0 && data[p.Start-1] != '\n' {
			t.Errorf("piece %d starts mid-line at %d", i, p.Start)
		}
		if want := int64(strings.Count(data[:p.Start], "\n")) + 1; p.StartLine != want {
			t.Errorf("piece %d StartLine %d, want %d", i, p.StartLine, want)
		}
		last := i == len(pieces)-1
		if last != (p.End == -1) {
			t.Errorf("piece %d of %d has End %d", i, len(pieces), p.End)
		}
		if !last && p.End <= p.Start {
			t.Errorf("piece %d empty: %+v", i, p)
		}
		next = p.End
	}
}

func TestSplitWhole(t *testing.T) {
	dir := t.TempDir()
	big := []byte(strings.Repeat(`{"text":"x"}`+"\n", 100))
	for _, name := range []string{"a.jsonl.gz", "a.warc", "a.warc.wet.gz", "a.txt", "a.parquet"} {
		path := writeFile(t, dir, name, big)
		kind, _ := DetectKind(path)
		pieces, err := Split(context.Background(), nil, path, kind, 10)
		want := []Piece{{Path: path, Kind: kind, Start: 0, End: -1, StartLine: 1}}
		if err != nil || !reflect.DeepEqual(pieces, want) {
			t.Errorf("Split(%s) = %+v, %v; want %+v", name, pieces, err, want)
		}
	}
	if _, err := Split(context.Background(), nil, dir+"/missing.jsonl", KindJSONL, 10); err == nil || !strings.Contains(err.Error(), "missing.jsonl") {
		t.Errorf("Split of a missing file: %v", err)
	}
}

func TestReadBadRanges(t *testing.T) {
	path := writeFile(t, t.TempDir(), "a.warc", []byte(warcinfo()))
	for _, p := range []Piece{
		{Path: path, Kind: KindWARC, Start: 10, End: 20},
		{Path: path, Kind: KindWARC},                    // End 0 is an empty range, not the whole file
		{Path: path, Kind: KindJSONL, Start: 5, End: 5}, // empty
		{Path: path, Kind: KindJSONL, Start: -1, End: -1},
	} {
		res := readAll(t, p, Options{})
		if res.err == nil || !strings.Contains(res.err.Error(), path) {
			t.Errorf("%+v: err = %v", p, res.err)
		}
	}
}
