package pipeline_test

import (
	"context"
	"errors"
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
