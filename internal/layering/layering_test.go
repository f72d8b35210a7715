// Package layering holds the test of the project's dependency policy, in
// the style of Go's go/build/deps_test.go: the allowed imports between
// neardup's packages are one statement, checked against the source.
package layering

import (
	"bytes"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// policy says which of neardup's packages each package may import: "A, B
// < C, D" lets C and D import A and B and everything A and B may import.
// NONE lists the packages that import no other of neardup's. The layers
// run from the kernels (tokens, sketches, bands) through records and
// formats, the job's vocabulary, the stages and the control plane, to the
// public API (pkg/pipeline; the module root "." is a package doc) and the command
// line. A new package must be placed here.
const policy = `
NONE < ., internal/fileinfo, pkg/shingle, pkg/minhash, pkg/simhash, pkg/records, internal/localfile,
       internal/unionfind, internal/radix, internal/sigfile, internal/textstore, internal/redact, internal/transient,
       internal/buildinfo, internal/procstat, internal/gctune,
       internal/metrics/metricstest, internal/redact/redacttest, internal/benchtext, internal/corpus,
       internal/s3test, internal/golden, internal/configfile, internal/nettest, e2e;

# reading local files: only regular ones, never blocking on a FIFO
internal/localfile < pkg/formats, internal/storage;

# kernels
pkg/minhash < pkg/bands;
pkg/shingle < internal/reference, internal/paragraph;

# files, records and the task queue, a worker's data roots
internal/redact < internal/storage;
internal/redact < internal/metrics;
internal/buildinfo, internal/fileinfo, internal/storage < internal/pqfile;
internal/redact, internal/transient < internal/queue;
internal/storage < internal/faults;
internal/redact, internal/storage < internal/dataroot;

# the job's vocabulary, its document model and verdict, its manifest, and
# what reads finished jobs
internal/paragraph, internal/pqfile, pkg/bands, pkg/formats, pkg/shingle, pkg/simhash < internal/job;
internal/job, internal/sigfile, internal/textstore, pkg/minhash < internal/sketch;
internal/job, internal/radix, pkg/records < internal/workfile;
internal/workfile < internal/worktest;
internal/job, internal/storage < internal/manifest;
internal/pqfile, internal/sketch, internal/workfile, pkg/records < internal/index;
internal/dataroot, internal/job, internal/manifest, pkg/records < internal/kept;
internal/kept < internal/kepttest;
internal/manifest, pkg/bands, pkg/records, pkg/shingle < internal/report;
internal/index, internal/manifest < internal/series;
internal/manifest, internal/pqfile < internal/rates;

# the stages: the contract and driver, each stage its own package (which
# imports no other stage's), their sequence; and what their tests share
internal/index, internal/job, internal/manifest, internal/sketch, internal/workfile, internal/sigfile, internal/textstore, internal/transient, internal/radix, pkg/minhash, pkg/records < internal/stage;
internal/rates < internal/stage/mapper; # map writes the rates pass's facts (rates.FactsWriter)
internal/stage < internal/stage/mapper, internal/stage/paragraphs, internal/stage/reduce, internal/stage/gather, internal/stage/verify;
internal/stage, internal/unionfind < internal/stage/cluster;
internal/stage, internal/kept < internal/stage/writekept;
internal/stage/mapper, internal/stage/paragraphs, internal/stage/reduce, internal/stage/gather, internal/stage/verify, internal/stage/cluster, internal/stage/writekept < internal/stages;
internal/stage/reduce, internal/stage/gather, internal/worktest < internal/stagetest;
internal/index < internal/query;

# the control plane, and the report's page of example pairs it writes
internal/index, internal/report < internal/examples;
internal/dataroot, internal/examples, internal/faults, internal/index, internal/queue, internal/rates, internal/report, internal/stages < internal/control;

# the public API: package pipeline (only commands and e2e may ever import
# it); the module root is its package doc alone
internal/control, internal/query < pkg/pipeline;

# tools and commands
internal/corpus, internal/reference, internal/control < internal/accuracy;
internal/configfile, internal/gctune, internal/kept, internal/metrics, internal/procstat, internal/query, internal/control, internal/series, pkg/pipeline < internal/cli;
internal/cli < cmd/coordinator, cmd/worker;
internal/accuracy < cmd/accuracy;
internal/corpus < cmd/gencorpus;
internal/s3test < cmd/s3test;
`

// module is the import path of the module.
const module = "github.com/neardup/neardup"

// parsePolicy returns, for every package the policy names, the packages
// it may import (transitively allowed through the rules).
func parsePolicy(t *testing.T, text string) map[string]map[string]bool {
	t.Helper()
	allowed := map[string]map[string]bool{}
	var stmts []string
	for _, line := range strings.Split(text, "\n") {
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		stmts = append(stmts, line)
	}
	for _, rule := range strings.Split(strings.Join(stmts, " "), ";") {
		if strings.TrimSpace(rule) == "" {
			continue
		}
		lo, hi, ok := strings.Cut(rule, "<")
		if !ok {
			t.Fatalf("policy rule %q has no <", strings.TrimSpace(rule))
		}
		for _, p := range list(hi) {
			if allowed[p] == nil {
				allowed[p] = map[string]bool{}
			}
			for _, q := range list(lo) {
				if q == "NONE" {
					continue
				}
				below, known := allowed[q]
				if !known {
					t.Fatalf("policy: %s is used before its rule", q)
				}
				allowed[p][q] = true
				for r := range below {
					allowed[p][r] = true
				}
			}
		}
	}
	return allowed
}

// list splits a comma-separated list of package names.
func list(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// TestDependencyPolicy checks every package of the module (test files
// aside) against the policy: it must be named there, and import only what
// the policy allows.
func TestDependencyPolicy(t *testing.T) {
	allowed := parsePolicy(t, policy)
	root := moduleRoot(t)
	seen := 0
	walkPackages(t, root, func(rel string, pkg *build.Package) {
		if rel == "internal/layering" {
			return
		}
		seen++
		may, named := allowed[rel]
		if !named {
			t.Errorf("%s is not in the dependency policy: place it in internal/layering", rel)
			return
		}
		for _, imp := range pkg.Imports {
			dep, ok := strings.CutPrefix(imp, module+"/")
			if imp == module {
				dep, ok = ".", true
			}
			if !ok {
				continue
			}
			if !may[dep] {
				t.Errorf("%s imports %s, which the dependency policy does not allow", rel, dep)
			}
		}
	})
	if seen < 20 {
		t.Fatalf("checked %d packages: is the module root %s?", seen, root)
	}
	for p := range allowed {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err != nil {
			t.Errorf("the policy names %s, which does not exist", p)
		}
	}
}

// Sizes a newcomer can read (design.md, "Code map"): no source file over
// maxFileLines lines, no package over maxPackageLines, and none over
// maxPackageShare of the module's lines (test files aside).
const (
	maxFileLines    = 500
	maxPackageLines = 4000
	maxPackageShare = 0.15
)

// TestSizes checks the module's files and packages against those bounds.
func TestSizes(t *testing.T) {
	root := moduleRoot(t)
	packages := map[string]int{}
	total := 0
	walkPackages(t, root, func(rel string, pkg *build.Package) {
		for _, name := range pkg.GoFiles {
			data, err := os.ReadFile(filepath.Join(pkg.Dir, name))
			if err != nil {
				t.Fatal(err)
			}
			n := bytes.Count(data, []byte("\n"))
			if n > maxFileLines {
				t.Errorf("%s/%s has %d lines, more than %d: split it", rel, name, n, maxFileLines)
			}
			packages[rel] += n
			total += n
		}
	})
	if total < 10000 {
		t.Fatalf("counted %d lines: is the module root %s?", total, root)
	}
	for rel, n := range packages {
		if n > maxPackageLines || float64(n) > maxPackageShare*float64(total) {
			t.Errorf("package %s has %d of the module's %d lines, more than %d or %.0f%%: split it", rel, n, total, maxPackageLines, 100*maxPackageShare)
		}
	}
}

// moduleRoot is the module's directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// walkPackages calls fn for every package of the module under root
// (other modules, testdata and hidden directories aside), with its path
// relative to root.
func walkPackages(t *testing.T, root string, fn func(rel string, pkg *build.Package)) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(path, "go.mod")); path != root && err == nil {
			return filepath.SkipDir // another module (bench/peers/...): not a package of this one
		}
		pkg, err := build.ImportDir(path, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(root, path)
		fn(filepath.ToSlash(rel), pkg)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPolicyParse checks the reading of rules on a small policy.
func TestPolicyParse(t *testing.T) {
	got := parsePolicy(t, "NONE < a, b; a < c; # a comment\nc, b < d;")
	want := map[string][]string{"a": nil, "b": nil, "c": {"a"}, "d": {"a", "b", "c"}}
	for p, deps := range want {
		var have []string
		for q := range got[p] {
			have = append(have, q)
		}
		slices.Sort(have)
		if !slices.Equal(have, deps) {
			t.Errorf("%s may import %v, want %v", p, have, deps)
		}
	}
}

// TestStagesApart checks that no stage's package imports another's: the
// stages hand over through typed results in internal/stage and files, and
// internal/stages alone knows them all.
func TestStagesApart(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := os.ReadDir(filepath.Join(root, "internal", "stage"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range dirs {
		if !d.IsDir() || d.Name() == "testdata" {
			continue
		}
		pkg, err := build.ImportDir(filepath.Join(root, "internal", "stage", d.Name()), 0)
		if err != nil {
			t.Fatal(err)
		}
		n++
		for _, imp := range pkg.Imports {
			if other, ok := strings.CutPrefix(imp, module+"/internal/stage/"); ok {
				t.Errorf("internal/stage/%s imports internal/stage/%s: a stage may not import another stage's package", d.Name(), other)
			}
		}
	}
	if n < 5 {
		t.Errorf("%d stage packages under internal/stage, want the five", n)
	}
}
