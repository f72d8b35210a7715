package query

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/control"
	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/queue"
	"github.com/neardup/neardup/pkg/formats"
)

// v2Fixture is an index of layout version 2 (signature files) made by an
// earlier build, and the corpus it was made of.
const v2Fixture = "../../testdata/index-v2"

// readCorpus reads the documents of files as a job reads them.
func readCorpus(t *testing.T, files []string) []Doc {
	t.Helper()
	var docs []Doc
	for _, name := range files {
		kind, err := formats.DetectKind(name)
		if err != nil {
			t.Fatal(err)
		}
		piece := formats.Piece{Path: name, Kind: kind, Start: 0, End: -1, StartLine: 1}
		err = formats.Read(context.Background(), piece, job.DefaultParams().ReadOptions(), func(d formats.Doc) error {
			docs = append(docs, Doc{ID: d.ID, Text: bytes.Clone(d.Text)})
			return nil
		}, func(r formats.Reject) error { return fmt.Errorf("%s: %s", name, r.Reason) })
		if err != nil {
			t.Fatal(err)
		}
	}
	return docs
}

// TestQueryV2Index queries every document of a corpus in an index of
// layout version 2 (signature files, made by an earlier build) and in an
// index of this build (text stores) over the same corpus with the same
// parameters: the matches are the same, similarities included.
func TestQueryV2Index(t *testing.T) {
	ctx := context.Background()
	v2 := filepath.Join(t.TempDir(), "v2")
	if err := os.CopyFS(v2, os.DirFS(filepath.Join(v2Fixture, "out"))); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(v2Fixture, "corpus", "*.jsonl.gz"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus in %s: %v", v2Fixture, err)
	}
	p := job.DefaultParams()
	p.Partitions = 2
	qc := queue.DefaultConfig()
	qc.AckWait = 5 * time.Second
	v3 := filepath.Join(t.TempDir(), "v3")
	if _, err := control.Run(ctx, control.Config{Out: v3, Inputs: files, Params: p, Workers: 2, Queue: qc}); err != nil {
		t.Fatal(err)
	}
	docs := readCorpus(t, files)
	results := map[string][]Result{}
	for name, loc := range map[string]string{"v2": v2, "v3": v3} {
		s, err := Open(ctx, []string{loc}, Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		res, _, err := s.Query(ctx, docs)
		s.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i := range res {
			for j := range res[i].Matches {
				res[i].Matches[j].Index, res[i].Matches[j].Job = "", ""
			}
		}
		results[name] = res
	}
	matches := 0
	for i, r2 := range results["v2"] {
		r3 := results["v3"][i]
		if r2.ID != r3.ID || len(r2.Matches) != len(r3.Matches) {
			t.Fatalf("%s: %d matches in the v2 index, %s: %d in the v3 index", r2.ID, len(r2.Matches), r3.ID, len(r3.Matches))
		}
		for j := range r2.Matches {
			if r2.Matches[j] != r3.Matches[j] {
				t.Errorf("%s: match %d: v2 %+v, v3 %+v", r2.ID, j, r2.Matches[j], r3.Matches[j])
			}
		}
		matches += len(r2.Matches)
	}
	if matches <= len(docs) {
		t.Fatalf("%d documents, %d matches: no document matched more than itself", len(docs), matches)
	}

	// The v3 index refuses a build with another document model.
	name := filepath.Join(v3, job.IndexFile)
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var ix struct{ Model string }
	if err := json.Unmarshal(data, &ix); err != nil || ix.Model == "" {
		t.Fatalf("%s records no model: %v", name, err)
	}
	changed := strings.Replace(string(data), ix.Model, "00000000deadbeef", 1)
	if err := os.WriteFile(name, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, []string{v3}, Options{}); err == nil || !strings.Contains(err.Error(), "another document model") {
		t.Errorf("an index of another document model: error %v", err)
	}
}
