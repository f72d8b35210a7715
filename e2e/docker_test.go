package e2e

import (
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
)

// imageBuild is what the Dockerfile does with Go: one go build command
// whose output directory is copied into the final image.
type imageBuild struct {
	env      []string // VAR=value words before go
	args     []string // after "go"
	outIndex int      // of the -o directory in args
	commands []string // the commands built, from their ./cmd/NAME packages
	binDir   string   // where the final image has them, ending in /
	// buildArgs are the ARGs of the build stage with their defaults,
	// which docker build --build-arg NAME=VALUE replaces.
	buildArgs map[string]string
}

// expand returns the build's go arguments with the build arguments in
// them (${NAME}) replaced as the RUN command's shell would: by set's
// value, else by the ARG's default.
func (ib imageBuild) expand(set map[string]string) []string {
	args := make([]string, len(ib.args))
	for i, a := range ib.args {
		args[i] = os.Expand(a, func(name string) string {
			if v, ok := set[name]; ok {
				return v
			}
			return ib.buildArgs[name]
		})
	}
	return args
}

// readDockerfile finds the Dockerfile's `RUN ... go build -o DIR
// ./cmd/...` and the `COPY --from=STAGE DIR BINDIR` that puts its output
// into the final image.
func readDockerfile(t *testing.T) imageBuild {
	t.Helper()
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	ib := imageBuild{buildArgs: map[string]string{}}
	outDir := ""
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "ARG":
			name, def, _ := strings.Cut(f[1], "=")
			ib.buildArgs[name] = def
		case len(f) > 2 && f[0] == "RUN" && slices.Contains(f, "go") && slices.Contains(f, "build"):
			i := slices.Index(f, "go")
			ib.env, ib.args = f[1:i], f[i+1:]
			for j, a := range ib.args {
				if a == "-o" && j+1 < len(ib.args) {
					ib.outIndex, outDir = j+1, ib.args[j+1]
				}
				if name, ok := strings.CutPrefix(a, "./cmd/"); ok {
					ib.commands = append(ib.commands, name)
				}
			}
		case len(f) == 4 && f[0] == "COPY" && strings.HasPrefix(f[1], "--from=") && outDir != "" && f[2] == outDir:
			ib.binDir = f[3]
		}
	}
	if ib.args == nil || outDir == "" || ib.binDir == "" || !strings.HasSuffix(ib.binDir, "/") {
		t.Fatalf("the Dockerfile has no `RUN go build -o DIR ./cmd/...` whose DIR a `COPY --from=... DIR BINDIR/` puts in the image (build %q, copied to %q)", ib.args, ib.binDir)
	}
	return ib
}

// dockerContext returns a matcher for the paths .dockerignore keeps out of
// the build context.
func dockerContext(t *testing.T) *patternmatcher.PatternMatcher {
	t.Helper()
	f, err := os.Open("../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	patterns, err := ignorefile.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		t.Fatal(err)
	}
	return pm
}

// excluded reports whether .dockerignore keeps the slash-separated path
// (relative to the repository root) out of the build context.
func excluded(t *testing.T, pm *patternmatcher.PatternMatcher, p string) bool {
	t.Helper()
	out, err := pm.MatchesOrParentMatches(p)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDockerBuildContext checks what .dockerignore sends to the image
// build, then builds the Dockerfile's packages, with its go build command,
// from a copy of only that context, with a REVISION build argument, and
// runs the gencorpus it built where no repository is around, as in the
// image, and the coordinator's --version, which must name the revision.
func TestDockerBuildContext(t *testing.T) {
	pm := dockerContext(t)
	for _, tc := range []struct {
		path string
		in   bool
	}{
		{".git/HEAD", false},
		{".git", false},
		{".cache/test-tools/node_modules/x.js", false},
		{"data/in/sample.jsonl.gz", false},
		{"data/out/_SUCCESS", false},
		{"out/sample/_SUCCESS", false},
		{"coordinator", false},
		{"testdata/sample/sample.jsonl.gz", false},
		{"pkg/shingle/testdata/Isaac.Newton-Opticks.txt", false},
		{"internal/corpus/corpus_test.go", false},
		{"e2e/doc.go", false},
		{"README.md", false},
		{"docs/usage.md", false},
		{"go.mod", true},
		{"go.sum", true},
		{"cmd/gencorpus/main.go", true},
		{"internal/corpus/prose/kjv-selections.txt", true},
		{"internal/control/run.go", true},
		{"scripts/image-rootfs", true},
		{"scripts/test", false},
		{"Dockerfile.prebuilt", false},
	} {
		if got := !excluded(t, pm, tc.path); got != tc.in {
			t.Errorf("%s: in the build context = %v, want %v", tc.path, got, tc.in)
		}
	}

	// The context, as the daemon would receive it.
	ctx := filepath.Join(t.TempDir(), "src")
	var exceptions []string
	for _, p := range pm.Patterns() {
		if p.Exclusion() {
			exceptions = append(exceptions, p.String())
		}
	}
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == ".." {
			return err
		}
		rel, _ := filepath.Rel("..", p)
		rel = filepath.ToSlash(rel)
		if excluded(t, pm, rel) {
			// A directory no exception reaches into is skipped whole.
			if d.IsDir() && !slices.ContainsFunc(exceptions, func(e string) bool { return strings.HasPrefix(e, rel+"/") }) {
				return filepath.SkipDir
			}
			return nil
		}
		dst := filepath.Join(ctx, filepath.FromSlash(rel))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		// A file let through inside a directory that is not (scripts/).
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return copyFile(p, dst)
	})
	if err != nil {
		t.Fatal(err)
	}

	// The Dockerfile's build, offline: only the module cache is there.
	ib := readDockerfile(t)
	for _, name := range []string{"coordinator", "worker", "gencorpus"} {
		if !slices.Contains(ib.commands, name) {
			t.Errorf("the Dockerfile does not build ./cmd/%s", name)
		}
	}
	out := t.TempDir()
	const revision = "0123456789abcdef0123456789abcdef01234567"
	args := ib.expand(map[string]string{"REVISION": revision})
	args[ib.outIndex] = out + string(os.PathSeparator)
	build := exec.Command("go", args...)
	build.Dir = ctx
	build.Env = append(os.Environ(), append(ib.env, "GOPROXY=off", "GOFLAGS=-mod=readonly")...)
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go %s in the build context: %v\n%s", strings.Join(args, " "), err, b)
	}
	gen := exec.Command(filepath.Join(out, "gencorpus"), "-n", "50", "-q", "-out", filepath.Join(t.TempDir(), "corpus"))
	gen.Dir = t.TempDir()
	if b, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("the image's gencorpus, away from the repository: %v\n%s", err, b)
	}
	version, err := exec.Command(filepath.Join(out, "coordinator"), "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(version), "revision "+revision+" ") {
		t.Errorf("the image's coordinator --version, built with --build-arg REVISION=%s: %q, %v", revision, version, err)
	}
}

// copyFile copies the regular file src to dst.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	w, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, in); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// binary returns the built command that the absolute path imagePath names
// in the image, or "" when it names none.
func (ib imageBuild) binary(imagePath string) string {
	name, ok := strings.CutPrefix(path.Clean(imagePath), ib.binDir)
	if !ok || !slices.Contains(ib.commands, name) {
		return ""
	}
	return name
}
