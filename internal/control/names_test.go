package control

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
// is named outside its output, by ".." and by an absolute
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
	ixFile := filepath.Join(out1, filepath.FromSlash(job.IndexFile))
	orig, err := os.ReadFile(ixFile)
	if err != nil {
		t.Fatal(err)
	}
	var ix index.Index
	if err := json.Unmarshal(orig, &ix); err != nil {
		t.Fatal(err)
	}
	if len(ix.BandFiles) == 0 {
		t.Fatal("the index lists no band file")
	}
	data, err := os.ReadFile(filepath.Join(out1, filepath.FromSlash(ix.BandFiles[0].File.Name)))
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
			forged := ix
			forged.BandFiles = append([]index.BandFile(nil), ix.BandFiles...)
			forged.BandFiles[0].File.Name = name
			data, err := json.Marshal(&forged)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(ixFile, data, 0o644); err != nil {
				t.Fatal(err)
			}
			defer os.WriteFile(ixFile, orig, 0o644)
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
