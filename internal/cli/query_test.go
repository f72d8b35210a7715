package cli

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/query"
)

// TestQueryCommand runs a job on the sample, then `coordinator query` on
// three of its documents and an unrelated line: one JSON line per
// document, in order, each sample document matching itself exactly, the
// unrelated one nothing.
func TestQueryCommand(t *testing.T) {
	out := runSample(t, filepath.Join("..", "..", "testdata", "sample", "sample.jsonl.gz"))
	var stdout, stderr bytes.Buffer
	f, err := os.Open(filepath.Join("..", "..", "testdata", "sample", "sample.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 16<<20)
	var in strings.Builder
	var ids []string
	for len(ids) < 3 && sc.Scan() {
		var d struct{ ID string }
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.ID)
		in.Write(sc.Bytes())
		in.WriteByte('\n')
	}
	in.WriteString(`{"id":"other","text":"a line of words that is in no document of the sample at all"}` + "\n")
	docs := filepath.Join(t.TempDir(), "docs.jsonl")
	if err := os.WriteFile(docs, []byte(in.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	stdout.Reset()
	stderr.Reset()
	if exit := Main("coordinator", []string{"query", "--index", out, "--batch", "2", docs}, Coordinator(), &stdout, &stderr); exit != 0 {
		t.Fatalf("query: exit %d:\n%s", exit, stderr.String())
	}
	dec := json.NewDecoder(&stdout)
	for i, want := range append(ids, "other") {
		var r query.Result
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if r.ID != want || r.Matches == nil {
			t.Fatalf("line %d: %+v, want document %s with a list of matches", i+1, r, want)
		}
		if want == "other" {
			if len(r.Matches) != 0 {
				t.Errorf("unrelated text matched %+v", r.Matches)
			}
			continue
		}
		self := false
		for _, m := range r.Matches {
			self = self || m.ID == want && m.Similarity == 1 && m.Method == "exact" && m.Index == out && m.Job != ""
		}
		if !self {
			t.Errorf("document %s: matches %+v, want itself at similarity 1", want, r.Matches)
		}
	}
	if dec.More() {
		t.Errorf("more output than one line per document")
	}
	if !strings.Contains(stderr.String(), "query done") || !strings.Contains(stderr.String(), "docs=4") {
		t.Errorf("stderr does not log the run:\n%s", stderr.String())
	}

	// A bad line names the input, the line and its offset: exit 1.
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{\"id\":\"x\",\"text\":\"y\"}\n{\"id\":\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if exit := Main("coordinator", []string{"query", "--index", out, bad}, Coordinator(), &stdout, &stderr); exit != 1 ||
		!strings.Contains(stderr.String(), "bad.jsonl: line 2 (offset 22): invalid JSON") {
		t.Errorf("bad line: exit %d, want 1 naming the line:\n%s", exit, stderr.String())
	}
}
