package pipeline

import (
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
	roots, err := ResolveRoots([]string{root})
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
	if err := (DataRoots{}).Check(filepath.Join(outside, "secret.jsonl")); err != nil {
		t.Errorf("no roots: %v", err)
	}
	if _, err := ResolveRoots([]string{filepath.Join(base, "missing")}); err == nil {
		t.Error("a missing root was accepted")
	}
}
