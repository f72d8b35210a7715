package e2e

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// bin holds the built commands.
var bin string

func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == mcName {
		os.Exit(fakeMC(os.Args[1:], os.Stdout, os.Stderr))
	}
	flag.Parse()
	dir, err := os.MkdirTemp("", "neardup-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = dir
	cmd := exec.Command("go", "build", "-o", dir+string(os.PathSeparator), "../cmd/coordinator", "../cmd/worker", "../cmd/gencorpus")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the commands:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func command(name string, args ...string) *exec.Cmd {
	exe := filepath.Join(bin, name)
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	return exec.Command(exe, args...)
}

// run runs a command to completion and fails the test on error.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := command(name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out.String())
	}
	return out.String()
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from its golden file (run with -update if the change is intended)\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// skipOrFail skips a test whose tool is missing, except in CI (CI=true),
// where the tool must have been installed and its absence is a failure.
func skipOrFail(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal("in CI: " + why)
	}
	t.Skip(why)
}
