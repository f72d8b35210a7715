package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runDocCommands runs, in dir, the `go run ./cmd/...` lines of the
// blocks of README.md and docs/*.md with the info string lang, as the
// built commands, and returns how many it ran; one that fails fails the
// test.
func runDocCommands(t *testing.T, dir, lang string) int {
	t.Helper()
	ran := 0
	for _, b := range docBlocks(t, lang) {
		for _, line := range strings.Split(b, "\n") {
			rest, ok := strings.CutPrefix(line, "go run ./cmd/")
			if !ok {
				continue
			}
			f := strings.Fields(rest)
			cmd := command(f[0], f[1:]...)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", line, err, out)
			}
			ran++
		}
	}
	return ran
}

// TestParagraphsDocs runs the commands of the section "Repeated lines and
// paragraphs" (docs/usage.md) as written (its ```sh paragraphs blocks): a
// generated corpus of site pages and a job on it with --paragraphs. Then
// it runs the section's SQL (```sql paragraphs) in DuckDB, compares what
// it prints with e2e/testdata/duckdb-paragraphs.golden, and checks that
// DuckDB counts in paragraphs/ the occurrences and bytes the manifest
// counts.
func TestParagraphsDocs(t *testing.T) {
	dir := t.TempDir()
	if ran := runDocCommands(t, dir, "sh paragraphs"); ran < 4 {
		t.Fatalf("the ```sh paragraphs blocks of docs/*.md hold %d commands, want the corpus's, the job's, write-kept's and --shingle-after-strip's", ran)
	}
	if docs := readCounts(t, filepath.Join(dir, "out/sites-sketched"))["docs"]; docs != readCounts(t, filepath.Join(dir, "out/sites"))["docs"] {
		t.Errorf("the job with --shingle-after-strip read %d documents, the job with --paragraphs %d", docs, readCounts(t, filepath.Join(dir, "out/sites"))["docs"])
	}
	data, err := os.ReadFile(filepath.Join(dir, "out/sites/manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var man struct {
		Paragraphs struct {
			Occurrences   int64 `json:"occurrences"`
			RowsNotListed int64 `json:"rows_not_listed"`
			RepeatedBytes int64 `json:"repeated_bytes"`
			ExtraBytes    int64 `json:"extra_bytes"`
			Repeated      int64 `json:"repeated"`
		} `json:"paragraphs"`
	}
	if err := json.Unmarshal(data, &man); err != nil {
		t.Fatal(err)
	}
	m := man.Paragraphs
	if m.Repeated == 0 || m.RowsNotListed != 0 {
		t.Fatalf("manifest: %+v: want repeated units, every occurrence listed", m)
	}
	var sum struct {
		Docs, Kept, Dropped, Duplicates, Short, Stripped int64
	}
	data, err = os.ReadFile(filepath.Join(dir, "out/sites-stripped/kept.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	if docs := readCounts(t, filepath.Join(dir, "out/sites"))["docs"]; sum.Docs != docs || sum.Kept+sum.Dropped+sum.Short != docs || sum.Stripped == 0 {
		t.Errorf("the stripped corpus's kept.json: %+v; the job read %d documents", sum, docs)
	}
	out := duckdbBlocks(t, dir, "sql paragraphs")
	golden(t, "duckdb-paragraphs.golden", out)
	var got struct {
		Occurrences      json.Number `json:"occurrences"`
		RepeatedBytes    json.Number `json:"repeated_bytes"`
		BytesBeyondFirst json.Number `json:"bytes_beyond_first"`
	}
	for _, line := range bytes.Split(out, []byte("\n")) {
		if bytes.HasPrefix(line, []byte("{")) && bytes.Contains(line, []byte(`"bytes_beyond_first"`)) {
			if err := json.Unmarshal(line, &got); err != nil {
				t.Fatal(err)
			}
		}
	}
	occ, _ := got.Occurrences.Int64()
	rb, _ := got.RepeatedBytes.Int64()
	eb, _ := got.BytesBeyondFirst.Int64()
	if occ != m.Occurrences || rb != m.RepeatedBytes || eb != m.ExtraBytes {
		t.Errorf("DuckDB counts %d occurrences, %d bytes, %d beyond the first document; the manifest %d, %d, %d\n%s",
			occ, rb, eb, m.Occurrences, m.RepeatedBytes, m.ExtraBytes, out)
	}
}
