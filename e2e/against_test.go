package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"
)

// TestAgainstCommand runs the README's sample job, then the same inputs
// again with --against it, as commands: the second job drops every
// document it read that has text, each in favour of its earlier copy, lists only pairs
// with the earlier job's documents, and keeps an index of its own.
func TestAgainstCommand(t *testing.T) {
	dir, first, _ := readmeJob(t, sampleArgs(t))
	second := filepath.Join(dir, "out", "sample-again")
	cmd := command("coordinator", "--out", second, "--against", first, "--quiet", "testdata/sample")
	cmd.Dir = dir
	if log, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the second job: %v\n%s", err, log)
	}
	c1, c2 := readCounts(t, first), readCounts(t, second)
	// Empty documents (no shingles) match nothing.
	if c2["docs"] != c1["docs"] || c2["duplicates"] != c2["docs"]-c2["empty"] {
		t.Errorf("second job: %d documents (first: %d), %d empty, %d duplicates; want every document with text dropped",
			c2["docs"], c1["docs"], c2["empty"], c2["duplicates"])
	}
	if c2["pairs_against"] == 0 || c2["pairs_against"] != c2["pairs"]-c1["pairs"] {
		t.Errorf("second job: %d pairs, %d against the first (first job: %d pairs); want the first's pairs among its own copies, the rest against it",
			c2["pairs"], c2["pairs_against"], c1["pairs"])
	}
	// duplicates.parquet lists each of them.
	r, err := file.OpenParquetFile(filepath.Join(second, "duplicates.parquet"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.NumRows() != c2["duplicates"] {
		t.Errorf("duplicates.parquet has %d rows, want %d", r.NumRows(), c2["duplicates"])
	}
	if _, err := os.Stat(filepath.Join(second, "index", "index.json")); err != nil {
		t.Errorf("the second job kept no index: %v", err)
	}
}
