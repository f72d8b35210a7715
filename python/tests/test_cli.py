"""The neardup console script and python -m neardup: the coordinator's
command line, its exit status passed through."""

from __future__ import annotations

import os
import subprocess
import sys

import neardup


def script() -> str:
    return os.path.join(os.path.dirname(sys.executable), "neardup")


def test_console_script_version() -> None:
    out = subprocess.run([script(), "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("github.com/neardup/neardup")


def test_exit_status_passed_through() -> None:
    out = subprocess.run([script(), "params", "--threshold", "2"], capture_output=True, text=True)
    assert out.returncode == 2 and "--threshold must be in (0, 1]" in out.stderr


def test_module_runs_the_cli(sample_out) -> None:
    out = subprocess.run([sys.executable, "-m", "neardup", "rows", "duplicates", sample_out], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert len(out.stdout.splitlines()) == len(list(neardup.duplicates(sample_out)))
