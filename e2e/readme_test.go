package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// docFiles are the Markdown files whose code blocks the tests run, in
// this order: README.md, then every docs/*.md by name.
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(docs)
	return append([]string{"../README.md"}, docs...)
}

// docBlocks returns the fenced code blocks with the given info string of
// README.md and then of every docs/*.md, in name order (docFiles).
func docBlocks(t *testing.T, lang string) []string {
	t.Helper()
	var blocks []string
	for _, path := range docFiles(t) {
		blocks = append(blocks, fileBlocks(t, path, lang)...)
	}
	return blocks
}

// fileBlocks returns the fenced code blocks of the Markdown file path with
// the given info string.
func fileBlocks(t *testing.T, path, lang string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks []string
	var cur *strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```"+lang:
			cur = &strings.Builder{}
		case cur != nil && strings.TrimSpace(line) == "```":
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line + "\n")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return blocks
}

// sampleJob runs the README's sample command, as written, in a scratch
// directory that sees the repository's testdata, and returns that directory.
func sampleJob(t *testing.T) (dir, out string) {
	t.Helper()
	dir, out, _ = readmeJob(t, sampleArgs(t))
	return dir, out
}

// readmeJob runs the coordinator with args in a scratch directory that
// sees the repository's testdata, and returns that directory, the job's
// output directory (--out) in it and the coordinator's log.
func readmeJob(t *testing.T, args []string) (dir, out, log string) {
	t.Helper()
	dir = t.TempDir()
	wd, _ := os.Getwd()
	if err := os.Symlink(filepath.Join(wd, "..", "testdata"), filepath.Join(dir, "testdata")); err != nil {
		t.Fatal(err)
	}
	for i, a := range args {
		if a == "--out" && i+1 < len(args) {
			out = filepath.Join(dir, args[i+1])
		}
	}
	cmd := command("coordinator", args...)
	cmd.Dir = dir
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		t.Fatalf("coordinator %v failed: %v\n%s", args, err, buf.String())
	}
	if _, err := os.Stat(filepath.Join(out, "_SUCCESS")); err != nil {
		t.Fatalf("coordinator %v wrote no _SUCCESS in %s\n%s", args, out, buf.String())
	}
	return dir, out, buf.String()
}

// sampleArgs are the arguments of the README's sample command: the last
// `go run ./cmd/coordinator` line of README.md's ```sh blocks (the sample
// is the front page's first command, so it is looked for there only).
func sampleArgs(t *testing.T) []string {
	t.Helper()
	var args []string
	for _, b := range fileBlocks(t, "../README.md", "sh") {
		for _, line := range strings.Split(b, "\n") {
			if rest, ok := strings.CutPrefix(line, "go run ./cmd/coordinator "); ok {
				args = strings.Fields(rest)
			}
		}
	}
	if args == nil {
		t.Fatal("README.md has no `go run ./cmd/coordinator ...` command in a ```sh block")
	}
	return args
}

// TestSampleOutputs runs the README's sample job, reads every output file
// back with Apache Arrow's Parquet reader and checks schemas and row counts,
// then runs the SQL of README.md and docs/*.md in DuckDB and checks the
// results. The front page's first command logs no warning: the sample's
// README.md is documentation, not an input missed.
func TestSampleOutputs(t *testing.T) {
	dir, out, log := readmeJob(t, sampleArgs(t))
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "level=WARN") {
			t.Errorf("the README's first command logs a warning: %s", line)
		}
	}
	counts := readCounts(t, out)
	checkDatasets(t, out, counts)
	checkSummary(t, log, counts)
	duckdbQueries(t, dir, "duckdb.golden")
}

// checkSummary checks that the counts of the coordinator's last log line
// are the manifest's, under the same names.
func checkSummary(t *testing.T, log string, counts map[string]int64) {
	t.Helper()
	var summary string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, `msg="job complete"`) {
			summary = line
		}
	}
	if summary == "" {
		t.Fatalf("no \"job complete\" line in the log:\n%s", log)
	}
	// Not counts: the output directory and the measures of the run.
	notCounts := map[string]bool{"time": true, "level": true, "msg": true, "out": true, "seconds": true, "MB/s": true, "peak_rss_mib": true}
	checked := 0
	for _, f := range strings.Fields(summary) {
		key, value, ok := strings.Cut(f, "=")
		if !ok || notCounts[key] {
			continue
		}
		want, ok := counts[key]
		if !ok {
			t.Errorf("the log's %s=%s is no count of the manifest", key, value)
			continue
		}
		if value != strconv.FormatInt(want, 10) {
			t.Errorf("the log's %s=%s, the manifest's counts.%s = %d", key, value, key, want)
		}
		checked++
	}
	if checked == 0 {
		t.Errorf("no counts in the log's summary %q", summary)
	}
}

// TestEmptyDatasets runs the README's sample command on a few distinct
// documents, a job with no duplicates and no rejects: every dataset the
// docs list (docs/usage.md, "Output") must still exist with the schemas of
// the sample's, and every query of README.md and docs/*.md must run, giving
// zero rows or zero counts.
func TestEmptyDatasets(t *testing.T) {
	var args []string
	for _, a := range sampleArgs(t) {
		if a == "testdata/sample" {
			a, _ = filepath.Abs("testdata/distinct")
		}
		args = append(args, a)
	}
	dir, out, _ := readmeJob(t, args)
	counts := readCounts(t, out)
	for _, name := range []string{"rejected", "candidate_rows", "pairs", "exact_groups", "clustered_docs", "duplicates"} {
		if counts[name] != 0 {
			t.Errorf("counts.%s = %d: the input is meant to have no duplicates and no rejects", name, counts[name])
		}
	}
	if counts["docs"] == 0 {
		t.Error("counts.docs = 0")
	}
	checkDatasets(t, out, counts)
	duckdbQueries(t, dir, "duckdb-empty.golden")
}

// readCounts reads the counts of a job's manifest.
func readCounts(t *testing.T, out string) map[string]int64 {
	t.Helper()
	var man struct {
		Counts map[string]int64 `json:"counts"`
	}
	data, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &man); err != nil {
		t.Fatal(err)
	}
	return man.Counts
}

// checkDatasets reads every dataset of the Output section (docs/usage.md)
// in out with Apache Arrow's Parquet reader: each must have files, one
// schema, the schemas of schemas.golden, and the rows the manifest's
// counts say.
func checkDatasets(t *testing.T, out string, counts map[string]int64) {
	t.Helper()
	datasets := []struct {
		glob string
		rows int64 // what the manifest's counts say the rows add up to
	}{
		{"docs/*.parquet", counts["docs"]},
		{"bands/*.parquet", counts["band_records"]},
		{"candidates/*.parquet", counts["candidate_rows"]},
		{"pairs/*.parquet", counts["pairs"]},
		{"exact.parquet", counts["exact_groups"] + counts["exact_duplicates"]},
		{"clusters.parquet", counts["clustered_docs"]},
		{"duplicates.parquet", counts["duplicates"]},
		{"rejects/*.parquet", counts["rejected"]},
	}
	var report strings.Builder
	for _, ds := range datasets {
		files, _ := filepath.Glob(filepath.Join(out, ds.glob))
		if len(files) == 0 {
			t.Errorf("no files match %s", ds.glob)
			continue
		}
		var rows int64
		schema := ""
		for _, f := range files {
			s, n := arrowRead(t, f)
			if schema != "" && s != schema {
				t.Fatalf("%s: schema %s differs from %s", f, s, schema)
			}
			schema, rows = s, rows+n
		}
		if rows != ds.rows {
			t.Errorf("%s: %d rows, the manifest's counts say %d", ds.glob, rows, ds.rows)
		}
		fmt.Fprintf(&report, "%s\n%s\n", ds.glob, schema)
	}
	golden(t, "schemas.golden", []byte(report.String()))
}

// arrowRead reads a whole Parquet file with pqarrow and returns its Arrow
// schema and row count.
func arrowRead(t *testing.T, path string) (string, int64) {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 1024}, memory.DefaultAllocator)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer tbl.Release()
	var fields []string
	for _, f := range tbl.Schema().Fields() {
		fields = append(fields, fmt.Sprintf("  %s: %s", f.Name, f.Type))
	}
	return strings.Join(fields, "\n"), tbl.NumRows()
}

// duckdbQueries runs every ```sql block of README.md and docs/*.md
// (docBlocks) with DuckDB (through its Node.js package) in dir and
// compares the results with the golden file name.
func duckdbQueries(t *testing.T, dir, name string) {
	t.Helper()
	golden(t, name, duckdbBlocks(t, dir, "sql"))
}

// duckdbBlocks runs every block of README.md and docs/*.md with the info
// string lang with DuckDB in dir and returns what it printed: each query
// and its rows as JSON lines.
func duckdbBlocks(t *testing.T, dir, lang string) []byte {
	t.Helper()
	modules := os.Getenv("NEARDUP_NODE_MODULES")
	if modules == "" {
		skipOrFail(t, "NEARDUP_NODE_MODULES is not set: run scripts/install-test-tools.sh and scripts/test to check the SQL of README.md and docs/*.md with DuckDB")
	}
	queries := docBlocks(t, lang)
	if len(queries) == 0 {
		t.Fatalf("README.md and docs/*.md have no ```%s blocks", lang)
	}
	return duckdbRun(t, dir, queries)
}

// duckdbRun runs queries with DuckDB (through its Node.js package, from
// $NEARDUP_NODE_MODULES) in dir and returns what it printed: each query
// and its rows as JSON lines. A query that fails fails the test.
func duckdbRun(t *testing.T, dir string, queries []string) []byte {
	t.Helper()
	modules := os.Getenv("NEARDUP_NODE_MODULES")
	if modules == "" {
		skipOrFail(t, "NEARDUP_NODE_MODULES is not set: run scripts/install-test-tools.sh and scripts/test to run DuckDB")
	}
	qfile := filepath.Join(dir, "queries.json")
	qdata, _ := json.Marshal(queries)
	if err := os.WriteFile(qfile, qdata, 0o644); err != nil {
		t.Fatal(err)
	}
	script, _ := filepath.Abs("testdata/duckdb-run.mjs")
	// Node resolves packages from the script's folder upwards: link them in.
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	local := filepath.Join(dir, "duckdb-run.mjs")
	sdata, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(local, sdata, 0o644)
	cmd := exec.Command("node", local, qfile)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("DuckDB: %v\n%s", err, stderr.String())
	}
	return stdout.Bytes()
}
