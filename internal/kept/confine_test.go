package kept_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/job"
	"github.com/neardup/neardup/internal/kept"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// confined is a job on a directory of two inputs, data/a.jsonl (a
// duplicate in it) and data/notes.txt, and beside data/ a file the job
// never read, secret/secret.txt.
type confined struct {
	base, data, secret, job string
}

func newConfined(t *testing.T) confined {
	t.Helper()
	c := confined{base: t.TempDir()}
	c.data = filepath.Join(c.base, "data")
	c.secret = filepath.Join(c.base, "secret", "secret.txt")
	lines := `{"id":"a1","text":"one line of words that two documents of this file share in full"}` + "\n" +
		`{"id":"a2","text":"one line of words that two documents of this file share in full"}` + "\n" +
		`{"id":"a3","text":"and a document of its own, with nothing in common with the others"}` + "\n"
	for path, text := range map[string]string{
		filepath.Join(c.data, "a.jsonl"):   lines,
		filepath.Join(c.data, "notes.txt"): "notes that the job reads as one document\n",
		c.secret:                           "what the operator's account may read, and the job's workers may not\n",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c.job = runJob(t, 32<<20, c.data)
	return c
}

// forge returns a copy of the job whose manifest and docs/ name path
// (its size as the manifest's) where they named data/notes.txt: what a
// worker that can write the job's directory can do.
func (c confined) forge(t *testing.T, path string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "job")
	if err := os.CopyFS(dir, os.DirFS(c.job)); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	notes, _ := filepath.Abs(filepath.Join(c.data, "notes.txt"))
	manPath := filepath.Join(dir, job.ManifestFile)
	data, err := os.ReadFile(manPath)
	if err != nil {
		t.Fatal(err)
	}
	var man map[string]any
	if err := json.Unmarshal(data, &man); err != nil {
		t.Fatal(err)
	}
	forged := 0
	for _, in := range man["inputs"].([]any) {
		if in := in.(map[string]any); in["path"] == notes {
			in["path"], in["size"] = path, st.Size()
			forged++
		}
	}
	data, _ = json.Marshal(man)
	if err := os.WriteFile(manPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	docs, _ := filepath.Glob(filepath.Join(dir, job.DocsDir, "*.parquet"))
	for _, f := range docs {
		rewrite(t, f, func(rows []records.DocRecord) []records.DocRecord {
			for i := range rows {
				if rows[i].File == notes {
					rows[i].File = path
					forged++
				}
			}
			return rows
		})
	}
	if forged != 2 {
		t.Fatalf("%s named in %d places of the manifest and docs/, want 2", notes, forged)
	}
	return dir
}

// TestForgedInputs forges a job's manifest and docs/ to name a file the
// job never read, outside the inputs it was run with (by its absolute
// path, by ".." and through a symbolic link): Write refuses, naming it,
// and writes nothing. With no roots, or empty ones, it reads nothing. An
// input replaced by a link out of the roots between the check and the
// open is refused too.
// The job as it was writes its corpus, notes.txt in it.
func TestForgedInputs(t *testing.T) {
	c := newConfined(t)
	link := filepath.Join(c.data, "link.txt")
	if err := os.Symlink(c.secret, link); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dataRoots, baseRoots := rootsAt(t, c.data), rootsAt(t, filepath.Join(c.base, "data"), c.base)
	tests := []struct {
		name  string
		path  string       // forged in place of data/notes.txt; "" keeps it
		roots []kept.Roots // baseRoots: both must admit an input
		want  string
	}{
		{"an absolute path outside the roots", c.secret, dataRoots, c.secret},
		{"a path that climbs out by ..", filepath.Join(c.data, "sub") + "/../../secret/secret.txt", dataRoots, "/../../secret/secret.txt"},
		{"a symbolic link out of the roots", link, dataRoots, link},
		{"outside one of two roots", c.secret, append(dataRoots, baseRoots...), c.secret},
		{"no roots", "", nil, "no roots"},
		{"empty roots", "", rootsAt(t), "empty roots"},
	}
	if err := os.Mkdir(filepath.Join(c.data, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := c.job
			if tt.path != "" {
				dir = c.forge(t, tt.path)
			}
			out := filepath.Join(t.TempDir(), "kept")
			_, err := kept.Write(ctx, kept.Options{Job: dir, Dir: out, Roots: tt.roots, Inputs: []string{c.data}})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Write: %v, want an error naming %q", err, tt.want)
			}
			if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a refused Write left %s: %v", out, err)
			}
		})
	}
	t.Run("an input swapped for a link after the check", func(t *testing.T) {
		notes := filepath.Join(c.data, "notes.txt")
		want, _ := os.ReadFile(notes)
		other := filepath.Join(c.base, "secret", "same-size.txt")
		if err := os.WriteFile(other, []byte(strings.Repeat("s", len(want)-1)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.WriteFile(notes, want, 0o644)
		open := func(ctx context.Context, path string) (storage.File, error) {
			if path == notes { // checked already: now a link out of the roots
				if err := errors.Join(os.Remove(notes), os.Symlink(other, notes)); err != nil {
					return nil, err
				}
				defer func() { os.Remove(notes); os.WriteFile(notes, want, 0o644) }()
			}
			return storage.OpenFile(ctx, path)
		}
		_, err := kept.Write(ctx, kept.Options{Job: c.job, Dir: filepath.Join(t.TempDir(), "kept"), Roots: dataRoots, Open: open})
		if err == nil || !strings.Contains(err.Error(), "was opened as "+other) {
			t.Fatalf("Write: %v, want an error naming %s", err, other)
		}
	})
	t.Run("the job as it was", func(t *testing.T) {
		dir, _ := writeCorpus(t, c.job, kept.Options{Roots: dataRoots, Inputs: []string{c.data}})
		c.check(t, dir)
	})
}

// check checks the corpus of the job in dir: its summary counts the four
// documents, the duplicate dropped, and notes.txt is there as it was.
func (c confined) check(t *testing.T, dir string) {
	t.Helper()
	sum := readSummary(t, dir)
	if sum.Docs != 4 || sum.Dropped != 1 || len(sum.Files) != 2 {
		t.Errorf("kept.json: docs %d, dropped %d, %d files; want 4, 1 and 2", sum.Docs, sum.Dropped, len(sum.Files))
	}
	want, _ := os.ReadFile(filepath.Join(c.data, "notes.txt"))
	if got, err := os.ReadFile(filepath.Join(dir, "00001-notes.txt")); err != nil || string(got) != string(want) {
		t.Errorf("00001-notes.txt: %q, %v; want the input's %q", got, err, want)
	}
}

// TestOutputPlacement writes, with Overwrite, into the job, its docs/ and
// index/, a directory holding the job, the inputs' directory, an input,
// a directory under an input directory named as an INPUT, and docs/
// through a symbolic link: each is refused, and the job and its inputs
// are as they were. A directory of other files is refused, even with
// Overwrite, and its files kept; a corpus write-kept wrote (with its
// marker, or kept.json from a build before it) is replaced.
func TestOutputPlacement(t *testing.T) {
	c := newConfined(t)
	ctx := context.Background()
	link := filepath.Join(t.TempDir(), "docs-link")
	if err := os.Symlink(filepath.Join(c.job, job.DocsDir), link); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, c.base, c.job)
	for _, tt := range []struct {
		name, dir, want string
	}{
		{"the job", c.job, "into the job"},
		{"the job's docs/", filepath.Join(c.job, job.DocsDir), "into the job"},
		{"the job's index/", filepath.Join(c.job, "index"), "into the job"},
		{"a directory holding the job", filepath.Dir(c.job), "holds the job"},
		{"the inputs' directory", c.data, "holds input 0 of the job"},
		{"an input", filepath.Join(c.data, "a.jsonl"), "into input 0 of the job"},
		{"under an INPUT", filepath.Join(c.data, "kept"), "into an INPUT"},
		{"docs/ through a link", link, "into the job"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := kept.Write(ctx, kept.Options{Job: c.job, Dir: tt.dir, Roots: rootsAt(t, c.data), Inputs: []string{c.data}, Overwrite: true})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Write into %s: %v, want an error saying %q", tt.dir, err, tt.want)
			}
			if after := snapshot(t, c.base, c.job); after != before {
				t.Fatalf("a refused Write changed the job or its inputs:\nbefore\n%s\nafter\n%s", before, after)
			}
		})
	}

	roots := rootsAt(t, c.data)
	corpus := func(t *testing.T) string {
		dir, _ := writeCorpus(t, c.job, kept.Options{Roots: roots, ShardDocs: 1})
		return dir
	}
	for _, tt := range []struct {
		name    string
		prepare func(t *testing.T) string // returns the directory
		foreign string                    // a file Write must leave there; "" when it replaces the corpus
	}{
		{"other files only", func(t *testing.T) string {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "notes.md"), []byte("mine"), 0o644)
			return dir
		}, "notes.md"},
		{"a corpus and another file", func(t *testing.T) string {
			dir := corpus(t)
			os.WriteFile(filepath.Join(dir, "notes.md"), []byte("mine"), 0o644)
			return dir
		}, "notes.md"},
		{"a corpus and another folder", func(t *testing.T) string {
			dir := corpus(t)
			os.MkdirAll(filepath.Join(dir, "mine"), 0o755)
			os.WriteFile(filepath.Join(dir, "mine", "00001-x.txt"), []byte("mine"), 0o644)
			return dir
		}, "mine/00001-x.txt"},
		{"files named as outputs, no marker", func(t *testing.T) string {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "00001-notes.txt"), []byte("mine"), 0o644)
			return dir
		}, "00001-notes.txt"},
		{"a corpus", corpus, ""},
		{"a corpus of a build before the marker", func(t *testing.T) string {
			dir := corpus(t)
			os.Remove(filepath.Join(dir, kept.MarkerFile))
			return dir
		}, ""},
	} {
		t.Run("overwrite "+tt.name, func(t *testing.T) {
			dir := tt.prepare(t)
			_, err := kept.Write(ctx, kept.Options{Job: c.job, Dir: dir, Roots: roots, Overwrite: true})
			if tt.foreign == "" {
				if err != nil {
					t.Fatal(err)
				}
				c.check(t, dir)
				if left, _ := filepath.Glob(filepath.Join(dir, "*-00001.*")); len(left) != 0 {
					t.Errorf("the corpus replaced left %v", left)
				}
				return
			}
			if !errors.Is(err, kept.ErrNotEmpty) || !strings.Contains(err.Error(), tt.foreign) {
				t.Fatalf("Write: %v, want ErrNotEmpty naming %s", err, tt.foreign)
			}
			if data, err := os.ReadFile(filepath.Join(dir, tt.foreign)); err != nil || string(data) != "mine" {
				t.Errorf("%s: %q, %v: not left as it was", tt.foreign, data, err)
			}
		})
	}
}

// snapshot lists the files under dirs with their modes and sizes.
func snapshot(t *testing.T, dirs ...string) string {
	t.Helper()
	var b strings.Builder
	for _, dir := range dirs {
		if err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			info, err := e.Info()
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "%s %s %d\n", p, info.Mode(), info.Size())
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}
