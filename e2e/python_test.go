package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// debianPython is the interpreter the Python package is built and tested
// with: Debian's, whose python3-venv, python3-setuptools, python3-wheel,
// python3-pytest and python3-pandas .ci/run installs (the python3 first on
// PATH may be another one, without them).
const debianPython = "/usr/bin/python3"

// TestPythonPackage builds the Python package's wheel offline
// (scripts/build-wheel), installs it with pip --no-index into a fresh
// venv (with Debian's site packages, for pytest and pandas) and runs the
// package's tests (python/tests) against the installed wheel: the sample
// job through neardup.run, the readers' rows against DuckDB's reading of
// the same files, Index queries against `coordinator query`, and the
// errors of each exit status. It skips where Debian's Python packages are
// missing, except in CI (CI=true), where .ci/run installs them.
func TestPythonPackage(t *testing.T) {
	if _, err := os.Stat(debianPython); err != nil {
		skipOrFail(t, debianPython+" is missing: the Python package is built and tested with Debian's python3")
	}
	probe := exec.Command(debianPython, "-c", "import ensurepip, setuptools, wheel, pytest")
	if out, err := probe.CombinedOutput(); err != nil {
		skipOrFail(t, "Debian's Python packages are missing ("+strings.TrimSpace(lastLine(out))+"): apt-get install python3-venv python3-setuptools python3-wheel python3-pytest")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	dist := filepath.Join(dir, "dist")
	sh := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
		}
		return out.String()
	}
	t.Log(strings.TrimSpace(sh("bash", filepath.Join(root, "scripts", "build-wheel"), dist)))
	wheels, err := filepath.Glob(filepath.Join(dist, "neardup-*-py3-none-manylinux_2_17_*.whl"))
	if err != nil || len(wheels) != 1 {
		t.Fatalf("scripts/build-wheel made %v, want one neardup wheel: %v", wheels, err)
	}
	venv := filepath.Join(dir, "venv")
	cmd := exec.Command(debianPython, "-m", "venv", "--system-site-packages", venv)
	if out, err := cmd.CombinedOutput(); err != nil {
		if bytes.Contains(out, []byte("ensurepip is not available")) {
			skipOrFail(t, "python3-venv is missing: apt-get install python3-venv")
		}
		t.Fatalf("venv: %v\n%s", err, out)
	}
	py := filepath.Join(venv, "bin", "python")
	sh(py, "-m", "pip", "install", "--no-index", "--quiet", wheels[0])
	out := sh(py, "-m", "pytest", "-p", "no:cacheprovider", "-rs", "-q", filepath.Join(root, "python", "tests"))
	t.Log(out)
	if os.Getenv("CI") == "true" {
		// In CI only the packages Debian does not have may be missing.
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "SKIPPED") && !strings.Contains(line, "not packaged by Debian") {
				t.Errorf("in CI a test skipped: %s", line)
			}
		}
	}
}

// lastLine returns the last non-blank line of b.
func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}
