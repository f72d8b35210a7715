package pipeline_test

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/pkg/pipeline"
)

// TestOutputs runs a job on the sample and checks that each dataset read
// with the package is what parquet-go reads from its files.
func TestOutputs(t *testing.T) {
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "out")
	res, err := pipeline.Run(ctx, pipeline.Options{Inputs: []string{"../../testdata/sample"}, Out: out, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete() || res.Out != out || res.Job == "" || res.Duration <= 0 {
		t.Errorf("result %+v", res)
	}

	pairs := collect(t, pipeline.Pairs(ctx, out))
	if want := readParquet[pipeline.Pair](t, out, "pairs/*.parquet"); !reflect.DeepEqual(pairs, want) {
		t.Errorf("Pairs gave %d pairs, pairs/ holds %d, or they differ", len(pairs), len(want))
	}
	if int64(len(pairs)) != res.Counts.Pairs || len(pairs) == 0 {
		t.Errorf("%d pairs, the result counts %d", len(pairs), res.Counts.Pairs)
	}
	dups := collect(t, pipeline.Duplicates(ctx, out))
	if want := readParquet[pipeline.Duplicate](t, out, "duplicates.parquet"); !reflect.DeepEqual(dups, want) || int64(len(dups)) != res.Counts.Duplicates {
		t.Errorf("Duplicates gave %d rows, duplicates.parquet holds %d, the result counts %d", len(dups), len(want), res.Counts.Duplicates)
	}
	clusters := collect(t, pipeline.Clusters(ctx, out))
	if want := readParquet[pipeline.Cluster](t, out, "clusters.parquet"); !reflect.DeepEqual(clusters, want) {
		t.Errorf("Clusters gave %d rows, clusters.parquet holds %d", len(clusters), len(want))
	}
	rejects := collect(t, pipeline.Rejects(ctx, out))
	if want := readParquet[pipeline.Reject](t, out, "rejects/*.parquet"); !reflect.DeepEqual(rejects, want) || int64(len(rejects)) != res.Counts.Rejected {
		t.Errorf("Rejects gave %d rows, rejects/ holds %d, the result counts %d", len(rejects), len(want), res.Counts.Rejected)
	}
	if paras := collect(t, pipeline.Paragraphs(ctx, out)); len(paras) != 0 {
		t.Errorf("a job without the paragraph pass: %d rows of paragraphs/, want none", len(paras))
	}
	for range pipeline.Pairs(ctx, out) {
		break // stopping early is fine
	}

	_, err = pipeline.Run(ctx, pipeline.Options{Inputs: []string{"../../testdata/sample"}, Out: out, Workers: 1})
	if !errors.Is(err, pipeline.ErrComplete) {
		t.Errorf("a second run into a complete output: %v, want ErrComplete", err)
	}

	if err := os.Remove(filepath.Join(out, "_SUCCESS")); err != nil {
		t.Fatal(err)
	}
	if err := firstErr(pipeline.Pairs(ctx, out)); !errors.Is(err, pipeline.ErrNotComplete) || !strings.Contains(err.Error(), "not finished") {
		t.Errorf("pairs of an output without _SUCCESS: %v, want ErrNotComplete saying it is not finished", err)
	}
}

// TestParagraphs runs the job of the sample's JSONL file with the paragraph pass and a kept
// corpus, once as it is and once stripped of the units two documents or
// more hold: Paragraphs reads paragraphs/ as parquet-go does, and the
// stripped corpus holds the same documents with less text, none with
// more.
func TestParagraphs(t *testing.T) {
	ctx := context.Background()
	run := func(strip *pipeline.StripRule) (out string, kept map[string]string) {
		dir := t.TempDir()
		out, keptDir := filepath.Join(dir, "out"), filepath.Join(dir, "kept")
		res, err := pipeline.Run(ctx, pipeline.Options{Inputs: []string{"../../testdata/sample/sample.jsonl.gz"}, Out: out, Workers: 2,
			Paragraphs: true, WriteKept: keptDir, KeptFormat: pipeline.CorpusJSONL, StripParagraphs: strip})
		if err != nil || !res.Complete() {
			t.Fatalf("job with the paragraph pass, strip %+v: %v (%+v)", strip, err, res)
		}
		return out, keptTexts(t, keptDir)
	}
	out, whole := run(nil)
	paras := collect(t, pipeline.Paragraphs(ctx, out))
	if want := readParquet[pipeline.Paragraph](t, out, "paragraphs/*.parquet"); len(paras) == 0 || !reflect.DeepEqual(paras, want) {
		t.Errorf("Paragraphs gave %d rows, paragraphs/ holds %d, or they differ", len(paras), len(want))
	}
	for _, p := range paras {
		if p.Holders < 2 {
			t.Fatalf("row %+v: a unit of fewer than 2 documents", p)
		}
	}
	_, stripped := run(&pipeline.StripRule{MinCount: 2})
	if len(stripped) != len(whole) || len(whole) == 0 {
		t.Fatalf("kept %d documents stripped, %d whole", len(stripped), len(whole))
	}
	shorter, wholeBytes, strippedBytes := 0, 0, 0
	for id, text := range whole {
		s, ok := stripped[id]
		switch {
		case !ok:
			t.Fatalf("document %q kept whole but not stripped", id)
		case len(s) > len(text):
			t.Errorf("document %q: %d bytes stripped, %d whole", id, len(s), len(text))
		case len(s) < len(text):
			shorter++
		}
		wholeBytes += len(text)
		strippedBytes += len(s)
	}
	if shorter == 0 {
		t.Errorf("no kept document lost text to stripping (%d documents, %d rows of paragraphs/)", len(whole), len(paras))
	}
	t.Logf("%d of %d kept documents stripped: %d bytes of text of %d", shorter, len(whole), strippedBytes, wholeBytes)
}

// keptTexts reads the text of every document of the JSONL kept corpus in
// dir, by id.
func keptTexts(t *testing.T, dir string) map[string]string {
	t.Helper()
	texts := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(path, ".jsonl.gz") {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		dec := json.NewDecoder(zr)
		for {
			var d struct{ ID, Text string }
			if err := dec.Decode(&d); errors.Is(err, io.EOF) {
				return nil
			} else if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			texts[d.ID] = d.Text
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return texts
}

// TestNotComplete checks that reading an output without a complete job
// fails, saying what the output holds.
func TestNotComplete(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		files []string // created under the output
		want  string   // in the error
	}{
		{"empty", nil, "holds no job"},
		{"unfinished", []string{"_work/job.json"}, "not finished"},
		{"manifest only", []string{"manifest.json", "duplicates.parquet"}, "not finished"},
		{"partial", []string{"_PARTIAL", "manifest.json", "duplicates.parquet"}, "partial"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			for _, f := range tt.files {
				p := filepath.Join(out, filepath.FromSlash(f))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			n := 0
			for d, err := range pipeline.Duplicates(ctx, out) {
				n++
				if err == nil {
					t.Fatalf("row %+v, want an error", d)
				}
				if !errors.Is(err, pipeline.ErrNotComplete) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), out) {
					t.Errorf("error %q, want ErrNotComplete naming %s and saying %q", err, out, tt.want)
				}
			}
			if n != 1 {
				t.Errorf("%d errors, want 1", n)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "nothing")
		if err := firstErr(pipeline.Clusters(ctx, out)); !errors.Is(err, fs.ErrNotExist) || !errors.Is(err, pipeline.ErrNotComplete) {
			t.Errorf("error %v, want one wrapping ErrNotComplete and fs.ErrNotExist", err)
		}
		if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("reading created the output: %v", err)
		}
	})
}

// collect returns the rows of seq, failing t at an error.
func collect[T any](t *testing.T, seq iter.Seq2[T, error]) []T {
	t.Helper()
	var rows []T
	for r, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	return rows
}

// firstErr returns the first error seq yields.
func firstErr[T any](seq iter.Seq2[T, error]) error {
	for _, err := range seq {
		if err != nil {
			return err
		}
	}
	return nil
}

// readParquet reads the files of out that pattern matches, in the order
// of their names, with parquet-go.
func readParquet[T any](t *testing.T, out, pattern string) []T {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(out, pattern))
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: no files (%v)", pattern, err)
	}
	var rows []T
	for _, f := range files {
		r, err := parquet.ReadFile[T](f)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r...)
	}
	return rows
}
