package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/pkg/records"
)

// TestWriteKeptConfined runs a job on a directory of two inputs, then
// write-kept on a copy of its output forged to name, in its manifest and
// docs/, a file outside that directory in place of one of them: refused
// (exit 1, the file named, nothing written) whether the roots are the
// INPUT, a --data-root or both. The job as it was is written, with the
// same roots; a --dir inside the job is refused and leaves it whole.
func TestWriteKeptConfined(t *testing.T) {
	t.Setenv("NATS_URL", "")
	t.Setenv("NATS_CREDS", "")
	base := t.TempDir()
	data, secret := filepath.Join(base, "data"), filepath.Join(base, "secret.txt")
	notes := filepath.Join(data, "notes.txt")
	for path, text := range map[string]string{
		filepath.Join(data, "a.jsonl"): `{"id":"a1","text":"a line of words that the file holds once"}` + "\n",
		notes:                          "notes the job reads as one document\n",
		secret:                         "a file the job never read\n",
	} {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	jobDir := filepath.Join(base, "job")
	var stdout, stderr bytes.Buffer
	if code := Main("coordinator", []string{"--out", jobDir, "--quiet", data}, Coordinator(), &stdout, &stderr); code != 0 {
		t.Fatalf("the job: exit %d\n%s", code, stderr.String())
	}
	forged := forgeInput(t, jobDir, notes, secret)

	writeKept := func(t *testing.T, job, dir string, more ...string) (int, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		code := Main("coordinator", append([]string{"write-kept", "--job", job, "--dir", dir}, more...), Coordinator(), &stdout, &stderr)
		var res struct{ Error string }
		json.Unmarshal(stdout.Bytes(), &res)
		return code, res.Error
	}
	for _, roots := range [][]string{{data}, {"--data-root", data}, {"--data-root", base, data}} {
		t.Run("forged "+strings.Join(roots, " "), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "kept")
			code, msg := writeKept(t, forged, dir, roots...)
			if code != 1 || !strings.Contains(msg, secret) {
				t.Fatalf("exit %d, error %q; want exit 1 and an error naming %s", code, msg, secret)
			}
			if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a refused write-kept left %s: %v", dir, err)
			}
		})
		t.Run("as it was "+strings.Join(roots, " "), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "kept")
			if code, msg := writeKept(t, jobDir, dir, roots...); code != 0 {
				t.Fatalf("exit %d: %s", code, msg)
			}
			if got, err := os.ReadFile(filepath.Join(dir, "00001-notes.txt")); err != nil || !strings.HasPrefix(string(got), "notes") {
				t.Errorf("00001-notes.txt: %q, %v", got, err)
			}
		})
	}
	t.Run("into the job's docs/", func(t *testing.T) {
		docs, _ := filepath.Glob(filepath.Join(jobDir, job.DocsDir, "*.parquet"))
		code, msg := writeKept(t, jobDir, filepath.Join(jobDir, job.DocsDir), "--overwrite", data)
		if code != 1 || !strings.Contains(msg, "into the job") {
			t.Fatalf("exit %d, error %q; want exit 1 and a refusal", code, msg)
		}
		if after, _ := filepath.Glob(filepath.Join(jobDir, job.DocsDir, "*.parquet")); len(docs) == 0 || len(after) != len(docs) {
			t.Errorf("docs/ held %d files, now %d", len(docs), len(after))
		}
	})
}

// forgeInput copies the job at jobDir and makes its manifest and docs/
// name path, with its size, where they named input.
func forgeInput(t *testing.T, jobDir, input, path string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "forged")
	if err := os.CopyFS(dir, os.DirFS(jobDir)); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, job.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var man map[string]any
	json.Unmarshal(data, &man)
	n := 0
	for _, in := range man["inputs"].([]any) {
		if in := in.(map[string]any); in["path"] == input {
			in["path"], in["size"] = path, st.Size()
			n++
		}
	}
	data, _ = json.Marshal(man)
	os.WriteFile(filepath.Join(dir, job.ManifestFile), data, 0o644)
	chunks, _ := filepath.Glob(filepath.Join(dir, job.DocsDir, "*.parquet"))
	for _, f := range chunks {
		rows, err := parquet.ReadFile[records.DocRecord](f)
		if err != nil {
			t.Fatal(err)
		}
		for i := range rows {
			if rows[i].File == input {
				rows[i].File = path
				n++
			}
		}
		if err := parquet.WriteFile(f, rows); err != nil {
			t.Fatal(err)
		}
	}
	if n != 2 {
		t.Fatalf("%s named %d times in the manifest and docs/, want 2", input, n)
	}
	return dir
}
