"""The ```python blocks of docs/python.md run, in order, from a folder
that has the repository's testdata/ (```python example-only blocks need
packages the test machine does not have, and are not run)."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO


def python_blocks() -> list:
    blocks, cur = [], None
    for line in (REPO / "docs" / "python.md").read_text(encoding="utf-8").splitlines():
        if cur is None and line.strip() == "```python":
            cur = []
        elif cur is not None and line.strip() == "```":
            blocks.append("\n".join(cur) + "\n")
            cur = None
        elif cur is not None:
            cur.append(line)
    return blocks


def test_python_md_runs(tmp_path) -> None:
    blocks = python_blocks()
    assert len(blocks) == 2, "docs/python.md's runnable blocks: the job and the index"
    (tmp_path / "testdata").symlink_to(REPO / "testdata")
    outputs = []
    for i, block in enumerate(blocks):
        p = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True)
        assert p.returncode == 0, f"block {i + 1}:\n{block}\n{p.stderr}"
        outputs.append(p.stdout)
    # What the first block's comments say it prints.
    assert outputs[0].splitlines()[0] == "complete 2601 1703 615"
    assert outputs[0].splitlines()[1] == "out/py-sample/pairs out/py-sample/clusters.parquet"
    assert "IndexInfo(index='out/py-sample'" in outputs[1] and "docs=2601, threshold=0.8)" in outputs[1]
