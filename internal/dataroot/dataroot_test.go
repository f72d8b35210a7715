package dataroot

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDataRoots checks which paths a worker with data roots accepts:
// paths under a root, and not those that leave it by "..", by a symbolic
// link, or by sharing only a prefix of the root's name.
func TestDataRoots(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "data")
	outside := filepath.Join(base, "private")
	for _, d := range []string{filepath.Join(root, "in"), filepath.Join(outside, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.jsonl"), []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "in"), filepath.Join(base, "alias")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(root+"-other", 0o755); err != nil {
		t.Fatal(err)
	}
	roots, err := Resolve([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		ok   bool
	}{
		{"the root", root, true},
		{"a file under it", filepath.Join(root, "in", "a.jsonl"), true},
		{"a new output directory", filepath.Join(root, "out", "2026", "x"), true},
		{"a link into the root", filepath.Join(base, "alias", "a.jsonl"), true},
		{"dot-dot staying inside", root + "/in/../in/a.jsonl", true},
		{"outside", filepath.Join(outside, "secret.jsonl"), false},
		{"dot-dot escape", root + "/../private/secret.jsonl", false},
		{"dot-dot escape from a new directory", root + "/new/../../private", false},
		{"symlink escape", filepath.Join(root, "escape", "secret.jsonl"), false},
		{"symlink then dot-dot", root + "/escape/sub/../secret.jsonl", false},
		{"a sibling sharing the name's prefix", root + "-other/x", false},
		{"the file system root", "/", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := roots.Check(tt.path)
			if tt.ok && err != nil {
				t.Errorf("Check(%s): %v", tt.path, err)
			}
			if !tt.ok {
				if err == nil {
					t.Fatalf("Check(%s) allowed it", tt.path)
				}
				if !strings.Contains(err.Error(), tt.path) || !strings.Contains(err.Error(), roots.String()) {
					t.Errorf("error does not name the path and the roots: %v", err)
				}
			}
		})
	}
	if err := (Roots{}).Check(filepath.Join(outside, "secret.jsonl")); err != nil {
		t.Errorf("no roots: %v", err)
	}
	if _, err := Resolve([]string{filepath.Join(base, "missing")}); err == nil {
		t.Error("a missing root was accepted")
	}
}

// TestDataRootsManyFiles gives an embedded worker's roots as a job of
// many small files makes them (the output and every input file) and
// checks that a path is judged by a few comparisons, one a path element
// at most, not one per root: 50,000 files took 72% of a 233-second job
// in these comparisons. Files among them, paths under the output, and
// paths outside all of them are judged as before.
func TestDataRootsManyFiles(t *testing.T) {
	base := t.TempDir()
	out, in := filepath.Join(base, "out"), filepath.Join(base, "in")
	const files = 5000
	paths := []string{out}
	for _, d := range []string{out, in} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := range files {
		p := filepath.Join(in, fmt.Sprintf("%05d.txt", i))
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	if err := os.WriteFile(filepath.Join(in, "other.txt"), []byte("not an input\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	roots, err := ForJob(paths)
	if err != nil {
		t.Fatal(err)
	}
	real := func(p string) string {
		r, err := RealPath(p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// At most one comparison a path element (and one for the root).
	limit := strings.Count(real(in), string(filepath.Separator)) + 3
	tests := []struct {
		name string
		path string
		ok   bool
	}{
		{"the first input", paths[1], true},
		{"the last input", paths[files], true},
		{"a file under the output", filepath.Join(out, "pairs", "chunk-000000.parquet"), true},
		{"a file beside the inputs", filepath.Join(in, "other.txt"), false},
		{"the inputs' directory", in, false},
		{"a path elsewhere", filepath.Join(base, "private", "secret.jsonl"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := roots.Check(tt.path); (err == nil) != tt.ok {
				t.Errorf("Check(%s): %v, want allowed %v", tt.path, err, tt.ok)
			}
			ok, compared := roots.covers(real(tt.path))
			if ok != tt.ok || compared > limit {
				t.Errorf("covers(%s) = %v after %d comparisons; want %v after at most %d", tt.path, ok, compared, tt.ok, limit)
			}
		})
	}
}
