package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestKeptCorpus runs the README's sample command, then the commands of
// the section "Writing the deduplicated corpus" (docs/usage.md) as written
// (the ```sh kept blocks of README.md and docs/*.md): a job on the sample
// that writes its corpus (--write-kept), the sample's corpus without its
// duplicates, as Parquet and annotated, and a job on a generated Parquet
// table whose corpus is Parquet. It checks the counts of every kept.json
// against the jobs' manifests, then runs the section's SQL (```sql kept)
// in DuckDB: the Parquet corpus holds the table's documents minus its
// duplicates.
func TestKeptCorpus(t *testing.T) {
	dir, _ := sampleJob(t)
	if ran := runDocCommands(t, dir, "sh kept"); ran < 6 {
		t.Fatalf("the ```sh kept blocks of README.md and docs/*.md hold %d commands, want the sample's corpus (a job's and write-kept's) and the Parquet table's", ran)
	}
	for kept, job := range map[string]string{
		"out/sample-kept": "out/sample", "out/sample-annotated": "out/sample", "out/sample-parquet": "out/sample",
		"out/sample-job-kept": "out/sample-job",
		"out/table-kept":      "out/table", "out/table-annotated": "out/table",
	} {
		counts := readCounts(t, filepath.Join(dir, job))
		var sum struct {
			Annotate                        bool
			Docs, Kept, Dropped, Duplicates int64
		}
		data, err := os.ReadFile(filepath.Join(dir, kept, "kept.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &sum); err != nil {
			t.Fatal(err)
		}
		wantKept := counts["docs"] - counts["duplicates"]
		if sum.Annotate {
			wantKept = counts["docs"]
		}
		if sum.Docs != counts["docs"] || sum.Duplicates != counts["duplicates"] || sum.Kept != wantKept || sum.Kept+sum.Dropped != sum.Docs {
			t.Errorf("%s: kept.json counts %+v; the job's manifest: docs %d, duplicates %d", kept, sum, counts["docs"], counts["duplicates"])
		}
		if _, err := os.Stat(filepath.Join(dir, kept, "_SUCCESS")); err != nil {
			t.Errorf("%s: %v", kept, err)
		}
	}
	out := duckdbBlocks(t, dir, "sql kept")
	golden(t, "duckdb-kept.golden", out)
	var counts struct {
		Kept                string `json:"kept"`
		DocsMinusDuplicates string `json:"docs_minus_duplicates"`
		DuplicatesKept      string `json:"duplicates_kept"`
	}
	for _, line := range bytes.Split(out, []byte("\n")) {
		if bytes.HasPrefix(line, []byte("{")) && (bytes.Contains(line, []byte(`"docs_minus_duplicates"`)) || bytes.Contains(line, []byte(`"duplicates_kept"`))) {
			json.Unmarshal(line, &counts)
		}
	}
	if counts.Kept == "" || counts.Kept != counts.DocsMinusDuplicates || counts.DuplicatesKept != "0" {
		t.Errorf("DuckDB: %+v: the Parquet corpus is not the table's documents minus its duplicates\n%s", counts, out)
	}
}
