package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestGencorpusBuiltInProse runs gencorpus where no prose lies beside it
// (as in the container image, whose working directory is /) and checks
// that, without -prose, it writes byte for byte what -prose with the
// directory the prose is embedded from writes.
func TestGencorpusBuiltInProse(t *testing.T) {
	dir, err := filepath.Abs("../internal/corpus/prose")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ format, seed string }{
		{"jsonl", "3"},
		{"wet", "4"},
		{"warc", "5"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			gen := func(extra ...string) string {
				out := filepath.Join(t.TempDir(), "out")
				cmd := command("gencorpus", append([]string{"-n", "300", "-seed", tc.seed, "-format", tc.format, "-files", "2", "-gzip", "-q", "-out", out}, extra...)...)
				cmd.Dir = t.TempDir()
				if b, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("gencorpus %v: %v\n%s", cmd.Args[1:], err, b)
				}
				return out
			}
			builtIn, fromDir := gen(), gen("-prose", dir)
			files, _ := filepath.Glob(filepath.Join(fromDir, "*"))
			if len(files) != 3 { // two data files and the truth
				t.Fatalf("-prose %s wrote %d files, want 3", dir, len(files))
			}
			for _, f := range files {
				want, _ := os.ReadFile(f)
				got, err := os.ReadFile(filepath.Join(builtIn, filepath.Base(f)))
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("%s: the built-in prose gives other bytes than -prose %s (%v)", filepath.Base(f), dir, err)
				}
			}
		})
	}
}
