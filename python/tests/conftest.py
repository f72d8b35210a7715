"""Fixtures of the package's tests: they run against the installed wheel
(scripts/build-wheel, pip install --no-index), on the repository's
sample corpus. e2e/python_test.go runs them in a fresh venv."""

from __future__ import annotations

import os
import pathlib
from typing import List, Tuple

import pytest

import neardup

#: The repository: the tests are python/tests/ in it.
REPO = pathlib.Path(__file__).resolve().parents[2]
SAMPLE = REPO / "testdata" / "sample"


def skip_or_fail(why: str) -> None:
    """Skips a test whose tool is missing, except in CI (CI=true), where
    the tool must have been installed: there it fails."""
    if os.environ.get("CI") == "true":
        pytest.fail("in CI: " + why)
    pytest.skip(why)


@pytest.fixture(scope="session")
def sample_job(tmp_path_factory: pytest.TempPathFactory) -> Tuple[neardup.Result, List[neardup.Progress]]:
    """The README's sample job, run once through neardup.run, with the
    progress events its callback received."""
    events: List[neardup.Progress] = []
    out = tmp_path_factory.mktemp("sample") / "out"
    res = neardup.run([str(SAMPLE)], out=out, workers=2, progress=events.append)
    return res, events


@pytest.fixture(scope="session")
def paragraphs_job(tmp_path_factory: pytest.TempPathFactory) -> neardup.Result:
    """The sample job run with the paragraph pass (``paragraphs=True``),
    whose ``paragraphs/`` has rows."""
    out = tmp_path_factory.mktemp("paragraphs") / "out"
    return neardup.run([str(SAMPLE)], out=out, workers=2, paragraphs=True, progress=False)


@pytest.fixture(scope="session")
def sample_out(sample_job: Tuple[neardup.Result, List[neardup.Progress]]) -> str:
    return sample_job[0].out
