package kept_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/kept"
	"github.com/neardup/neardup/internal/manifest"
	"github.com/neardup/neardup/internal/storage"
)

// files lists the names in dir, sorted.
func files(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestClaim checks which directories a corpus is written into: an empty
// one; the corpus of the same epoch of the same job (a job resumed),
// whose files stay but whose markers of completion go; another's only
// with overwrite, emptied; never one holding other files.
func TestClaim(t *testing.T) {
	ctx := context.Background()
	job := kept.Marker{Job: "/jobs/w48", Epoch: "e1"}
	corpus := []string{"00000-a.jsonl.gz", "00001-b.parquet", kept.SummaryFile, kept.SuccessFile}
	tests := []struct {
		name      string
		had       *kept.Marker // the directory's marker; nil: none
		other     string       // a file that is no corpus's
		overwrite bool
		err       error
		left      []string // the corpus's files left
	}{
		{name: "empty"},
		{name: "the same epoch", had: &job, left: []string{"00000-a.jsonl.gz", "00001-b.parquet", kept.SummaryFile}},
		{name: "another epoch", had: &kept.Marker{Job: job.Job, Epoch: "e0"}, err: kept.ErrNotEmpty},
		{name: "another epoch, overwrite", had: &kept.Marker{Job: job.Job, Epoch: "e0"}, overwrite: true},
		{name: "write-kept's", had: &kept.Marker{Job: job.Job}, err: kept.ErrNotEmpty},
		{name: "other files", other: "notes.txt", overwrite: true, err: kept.ErrNotEmpty},
		{name: "other files in a corpus", had: &job, other: "notes.txt", left: []string{"00000-a.jsonl.gz", "00001-b.parquet", kept.SummaryFile, "notes.txt"}},
		{name: "other files in another corpus", had: &kept.Marker{Job: "/jobs/w47"}, other: "notes.txt", overwrite: true, err: kept.ErrNotEmpty},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "kept")
			os.MkdirAll(dir, 0o755)
			if tt.had != nil {
				d, err := kept.Claim(ctx, dir, *tt.had, false)
				if err != nil {
					t.Fatal(err)
				}
				for _, name := range corpus {
					storage.WriteFile(ctx, d, name, []byte(name))
				}
				d.Close()
			}
			if tt.other != "" {
				os.WriteFile(filepath.Join(dir, tt.other), nil, 0o644)
			}
			before := files(t, dir)
			d, err := kept.Claim(ctx, dir, job, tt.overwrite)
			if !errors.Is(err, tt.err) {
				t.Fatalf("Claim: %v, want %v", err, tt.err)
			}
			if err != nil {
				if got := files(t, dir); !slices.Equal(got, before) {
					t.Errorf("a refused Claim changed the directory: %v, was %v", got, before)
				}
				return
			}
			d.Close()
			want := append(slices.Clone(tt.left), kept.MarkerFile)
			slices.Sort(want)
			if got := files(t, dir); !slices.Equal(got, want) {
				t.Errorf("files %v, want %v", got, want)
			}
		})
	}
}

// TestComplete checks the end of a corpus written by tasks: the files of
// an earlier run that the summary does not list go, and the temporary
// files of writers that were killed; the summary is written.
func TestComplete(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d, err := kept.Claim(ctx, dir, kept.Marker{Job: "/j", Epoch: "e"}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, name := range []string{"00000-a.jsonl.gz", "00001-b.txt", "00002-c.parquet"} {
		storage.WriteFile(ctx, d, name, []byte(name))
	}
	w, err := d.Create(ctx, "00003-d.parquet")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("killed while writing")) // never committed
	sum := &kept.Summary{Job: "/j", Files: []kept.FileSummary{
		{KeptFile: manifest.KeptFile{Input: "a.jsonl", Outputs: []string{"00000-a.jsonl.gz"}}},
		{KeptFile: manifest.KeptFile{Input: "b.txt", Outputs: []string{}}}, // dropped whole since
		{KeptFile: manifest.KeptFile{Input: "c.parquet", Outputs: []string{"00002-c.parquet"}}},
	}}
	if err := kept.Complete(ctx, d, sum); err != nil {
		t.Fatal(err)
	}
	want := []string{"00000-a.jsonl.gz", "00002-c.parquet", kept.MarkerFile, kept.SummaryFile}
	if got := files(t, dir); !slices.Equal(got, want) {
		t.Errorf("files %v, want %v", got, want)
	}
}
