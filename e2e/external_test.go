package e2e

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// externalProgram uses only package pkg/pipeline, as a program of another
// module would: it runs a job over the sample, reads its pairs, queries
// its index with the text of one document of a pair and prints what it
// found.
const externalProgram = `package main

import (
	"context"
	"fmt"
	"os"

	"github.com/neardup/neardup/pkg/pipeline"
)

func main() {
	ctx := context.Background()
	res, err := pipeline.Run(ctx, pipeline.Options{Inputs: []string{os.Args[1]}, Out: os.Args[2]})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pairs, first := 0, ""
	for p, err := range pipeline.Pairs(ctx, res.Out) {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if pairs == 0 {
			first = p.BID
		}
		pairs++
	}
	ix, err := pipeline.OpenIndex(ctx, pipeline.IndexOptions{}, res.Out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer ix.Close()
	text, err := os.ReadFile(os.Args[3])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	found, err := ix.Query(ctx, []pipeline.Doc{{ID: "probe", Text: string(text)}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	self := ""
	for _, m := range found[0].Matches {
		if m.Similarity == 1 {
			self = m.ID
		}
	}
	fmt.Printf("status=%s docs=%d pairs=%d listed=%d first_b=%s identical=%s\n", res.Status, res.Counts.Docs, res.Counts.Pairs, pairs, first, self)
}
`

// TestExternalModule builds a program in a module of its own that
// requires neardup (replaced by this checkout) and imports only
// pkg/pipeline: the public API is enough to run a job, read its pairs and
// query its index, and no internal package is needed.
func TestExternalModule(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gomod := "module example.com/user\n\ngo 1.26\n\nrequire github.com/neardup/neardup v0.0.0\n\nreplace github.com/neardup/neardup => " + root + "\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	// The probe is the text of the sample's first document.
	probe := filepath.Join(dir, "probe.txt")
	text, id := firstSampleDoc(t, filepath.Join(root, "testdata", "sample", "sample.jsonl.gz"))
	for name, data := range map[string]string{"go.mod": gomod, "go.sum": string(sum), "main.go": externalProgram, "probe.txt": text} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The module's requirements are neardup's, resolved from its go.sum
	// and the module cache (-mod=mod lets go complete go.mod).
	tidy := exec.Command("go", "mod", "tidy")
	tidy.Dir = dir
	tidy.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	if out, err := tidy.CombinedOutput(); err != nil {
		t.Fatalf("go mod tidy: %v\n%s", err, out)
	}
	list := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".")
	list.Dir = dir
	deps, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, d := range strings.Fields(string(deps)) {
		if strings.HasPrefix(d, "github.com/neardup/neardup/") && !strings.Contains(d, "/internal/") && !strings.HasPrefix(d, "github.com/neardup/neardup/pkg/") {
			t.Errorf("the program depends on %s, neither pkg/ nor internal to pkg/pipeline", d)
		}
	}
	run := exec.Command("go", "run", ".", filepath.Join(root, "testdata", "sample"), filepath.Join(dir, "out"), probe)
	run.Dir = dir
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("go run: %v\n%s", err, out)
	}
	line := string(out[strings.LastIndex(strings.TrimSpace(string(out)), "\n")+1:])
	if !strings.Contains(line, "status=complete docs=2601 pairs=1703 listed=1703 ") || !strings.HasSuffix(strings.TrimSpace(line), " identical="+id) {
		t.Errorf("the external program printed %q, want the sample's counts (2601 documents, 1703 pairs, all listed) and %s found at similarity 1", line, id)
	}
}

// firstSampleDoc returns the text and id of the first document of a
// gzipped JSONL file.
func firstSampleDoc(t *testing.T, path string) (text, id string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ ID, Text string }
	if err := json.NewDecoder(zr).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	return doc.Text, doc.ID
}
