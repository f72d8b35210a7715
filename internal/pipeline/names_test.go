package pipeline

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/index"
	"github.com/neardup/neardup/internal/job"
)

// TestForgedIndexNames edits the earlier job's index so that one band file
// of a partition is named outside its output, by ".." and by an absolute
// path, with that file's bytes copied there (so that reading it would go
// unnoticed), and checks that a job --against it fails naming the forged
// name as leaving its store, on the worker that reads the list.
func TestForgedIndexNames(t *testing.T) {
	in, _ := genCorpus(t, 200, 5, 2)
	ctx := context.Background()
	base := t.TempDir()
	out1 := filepath.Join(base, "jobs", "first")
	if _, err := Run(ctx, testConfig(t, in, out1, 1)); err != nil {
		t.Fatal(err)
	}
	partFile := filepath.Join(out1, filepath.FromSlash(job.TaskInputFile(job.InputsReduce, 0)))
	orig, err := os.ReadFile(partFile)
	if err != nil {
		t.Fatal(err)
	}
	var entries []index.PartEntry
	if err := json.Unmarshal(orig, &entries); err != nil {
		t.Fatal(err)
	}
	i := 0
	for i < len(entries) && entries[i].File == nil {
		i++
	}
	if i == len(entries) {
		t.Fatal("partition 0 lists no band file")
	}
	data, err := os.ReadFile(filepath.Join(out1, filepath.FromSlash(entries[i].File.Name)))
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(base, "outside", "secret.parquet")
	if err := os.MkdirAll(filepath.Dir(secret), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"../../outside/secret.parquet", secret} {
		t.Run(name, func(t *testing.T) {
			forged := append([]index.PartEntry(nil), entries...)
			f := *forged[i].File
			f.Name = name
			forged[i].File = &f
			data, err := json.Marshal(forged)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(partFile, data, 0o644); err != nil {
				t.Fatal(err)
			}
			defer os.WriteFile(partFile, orig, 0o644)
			cfg := testConfig(t, in, filepath.Join(t.TempDir(), "second"), 1)
			cfg.Against = []string{out1}
			_, err = Run(ctx, cfg)
			t.Logf("%v", err)
			if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "leaves its store") {
				t.Fatalf("job against a forged index: %v, want an error naming %q as leaving its store", err, name)
			}
		})
	}
}
