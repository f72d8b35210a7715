package e2e

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestColumnsUnquoted runs the README's sample job with its kept corpus
// as Parquet (--write-kept) and the paragraph pass (--paragraphs), and `coordinator write-kept --annotate` after
// it, then, for every Parquet dataset they wrote (every folder's or top
// file's, the work area aside), DuckDB runs a SELECT naming every column
// of its files unquoted: a column named by a reserved word (offset,
// group) is a syntax error there. The datasets must include every one
// docs/usage.md lists, so that none is missed.
func TestColumnsUnquoted(t *testing.T) {
	args := append(sampleArgs(t), "--write-kept", "kept", "--kept-format", "parquet", "--paragraphs")
	dir, out, _ := readmeJob(t, args)
	ann := filepath.Join(dir, "annotated")
	run(t, "coordinator", "write-kept", "--job", out, "--dir", ann, "--annotate", "--format", "parquet", "--data-root", filepath.Join(dir, "testdata"))

	datasets := map[string][]string{} // glob -> columns
	kept := filepath.Join(dir, "kept")
	for _, root := range []string{out, kept, ann} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "_work" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".parquet") {
				return nil
			}
			glob := path
			// A dataset is a folder's files, but for the kept corpus,
			// whose files have the columns of their inputs.
			if filepath.Dir(path) != root && root != kept {
				glob = filepath.Join(filepath.Dir(path), "*.parquet")
			}
			cols := parquetColumns(t, path)
			if prev, ok := datasets[glob]; ok && !slices.Equal(prev, cols) {
				t.Errorf("%s: columns %v, another file of %s has %v", path, cols, glob, prev)
			}
			datasets[glob] = cols
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	for glob := range datasets {
		rel, _ := filepath.Rel(dir, glob)
		names = append(names, rel)
	}
	slices.Sort(names)
	for _, want := range []string{
		"out/sample/docs/*.parquet", "out/sample/bands/*.parquet", "out/sample/candidates/*.parquet",
		"out/sample/pairs/*.parquet", "out/sample/exact.parquet", "out/sample/clusters.parquet",
		"out/sample/duplicates.parquet", "out/sample/rejects/*.parquet", "out/sample/index/*.parquet",
		"out/sample/paragraphs/*.parquet", "out/sample/index/units/*.parquet", "annotated/annotations/*.parquet",
	} {
		if !slices.Contains(names, want) {
			t.Errorf("no dataset %s among %v", want, names)
		}
	}
	// The corpus of the sample's four inputs (JSONL, WARC, WET).
	if n := len(slices.DeleteFunc(slices.Clone(names), func(s string) bool { return !strings.HasPrefix(s, "kept/") })); n < 3 {
		t.Errorf("%d files of the kept corpus among %v, want one per input of the sample", n, names)
	}
	var queries []string
	for _, glob := range slices.Sorted(maps.Keys(datasets)) {
		cols := datasets[glob]
		for _, c := range cols {
			if strings.ContainsAny(c, ".\" ") {
				t.Errorf("%s: column %q is not a plain name", glob, c)
			}
		}
		rel, _ := filepath.Rel(dir, glob)
		queries = append(queries, fmt.Sprintf("SELECT %s FROM read_parquet('%s') LIMIT 1", strings.Join(cols, ", "), rel))
	}
	printed := string(duckdbRun(t, dir, queries))
	for _, q := range queries {
		if !strings.Contains(printed, "-- "+q) {
			t.Errorf("DuckDB did not run %s:\n%s", q, printed)
		}
	}
	if t.Failed() {
		os.Stderr.WriteString(strings.Join(queries, "\n") + "\n")
	}
}

// parquetColumns are the names of the leaf columns of a Parquet file.
func parquetColumns(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var cols []string
	for _, p := range pf.Schema().Columns() {
		cols = append(cols, strings.Join(p, "."))
	}
	return cols
}
