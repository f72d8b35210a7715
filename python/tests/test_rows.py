"""The readers of a finished job's outputs: the rows of each dataset,
checked against DuckDB's reading of the same Parquet files."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import time
from typing import Any, Dict, List

import pytest

import neardup
from conftest import skip_or_fail

HERE = pathlib.Path(__file__).resolve().parent


def duckdb_rows(tmp_path: pathlib.Path, sql: str) -> List[Dict[str, Any]]:
    """The rows of sql (selecting to_json of each row) as DuckDB gives
    them, through its Node.js package (NEARDUP_NODE_MODULES, as the e2e
    tests have it)."""
    modules = os.environ.get("NEARDUP_NODE_MODULES")
    if not modules or not shutil.which("node"):
        skip_or_fail("NEARDUP_NODE_MODULES is not set or node is missing: run scripts/install-test-tools.sh to compare the rows with DuckDB's")
    work = tmp_path / "duckdb"
    work.mkdir(exist_ok=True)
    script = work / "duckdb_rows.mjs"
    shutil.copy(HERE / "duckdb_rows.mjs", script)
    if not (work / "node_modules").exists():
        (work / "node_modules").symlink_to(modules)  # node resolves packages from the script's folder up
    out = subprocess.run(["node", str(script), sql], cwd=work, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines()]


def job_of(dataset: str, request: pytest.FixtureRequest) -> "neardup.Result":
    """The sample job with the rows of dataset: the one run with the
    paragraph pass for paragraphs/."""
    if dataset == "paragraphs":
        return request.getfixturevalue("paragraphs_job")
    return request.getfixturevalue("sample_job")[0]


@pytest.mark.parametrize("dataset", ["pairs", "clusters", "duplicates", "rejects", "paragraphs"])
def test_rows_equal_duckdb(dataset, request, tmp_path) -> None:
    res = job_of(dataset, request)
    rows = getattr(neardup, dataset)(res.out)
    got = list(rows)
    assert got, f"the sample job has no {dataset}: nothing is compared"
    assert got == list(getattr(res, dataset)())  # Result's reader: the same
    want = duckdb_rows(tmp_path, f"SELECT to_json(t)::VARCHAR FROM read_parquet('{rows.glob}') t")
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, f"{dataset} row {i + 1}: {g} != DuckDB's {w}"
        assert list(g) == [c.name for c in rows.columns], f"{dataset} row {i + 1}: members not in the columns' order"


def test_columns_equal_duckdb(request, tmp_path) -> None:
    types = {"INTEGER": "int32", "BIGINT": "int64", "DOUBLE": "double", "VARCHAR": "string", "BOOLEAN": "bool"}
    for dataset in ("pairs", "clusters", "duplicates", "rejects", "paragraphs"):
        rows = neardup.Rows(job_of(dataset, request).out, dataset)
        want = duckdb_rows(tmp_path, f"SELECT to_json({{'name': column_name, 'type': column_type}})::VARCHAR FROM (DESCRIBE SELECT * FROM read_parquet('{rows.glob}'))")
        assert [(c.name, c.type) for c in rows.columns] == [(w["name"], types[w["type"]]) for w in want], dataset


def test_to_pandas(sample_job, tmp_path) -> None:
    try:
        import pandas  # noqa: F401
    except ImportError:
        skip_or_fail("pandas is not installed (Debian: python3-pandas)")
    res, _ = sample_job
    df = res.pairs().to_pandas()
    rows = list(res.pairs())
    assert len(df) == len(rows) == res.counts.pairs
    assert list(df.columns) == list(rows[0])
    assert str(df["a"].dtype) == "int64" and str(df["similarity"].dtype) == "float64"
    assert str(df["hamming"].dtype) == "Int32" and df["hamming"].isna().all()  # MinHash: null
    assert str(df["bands_collided"].dtype) == "int32" and df["a_job"].isna().all()
    assert df.iloc[5]["a_id"] == rows[5]["a_id"] and df.iloc[5]["similarity"] == rows[5]["similarity"]
    kept = res.clusters().to_pandas()
    assert str(kept["keep"].dtype) == "bool" and len(kept) == res.counts.clustered_docs
    # Every document of duplicates.parquet is in a cluster and is not kept.
    dups = res.duplicates().to_pandas()
    merged = dups.merge(kept, on="doc")
    assert len(merged) == len(dups) == res.counts.duplicates and not merged["keep"].any()


def test_to_pandas_empty(tmp_path) -> None:
    try:
        import pandas  # noqa: F401
    except ImportError:
        skip_or_fail("pandas is not installed (Debian: python3-pandas)")
    docs = tmp_path / "two.jsonl"
    docs.write_text(
        json.dumps({"id": "a", "text": "one text about the weather in the hills this spring and its long rains"}) + "\n"
        + json.dumps({"id": "b", "text": "another about the price of bread in the town market over the winter"}) + "\n"
    )
    res = neardup.run([docs], tmp_path / "out", workers=1)
    assert res.counts.pairs == 0
    df = res.pairs().to_pandas()
    assert len(df) == 0 and list(df.columns)[:3] == ["a", "b", "a_id"]
    assert str(df["a"].dtype) == "int64" and str(df["hamming"].dtype) == "Int32"


def test_not_complete(tmp_path) -> None:
    with pytest.raises(neardup.Error) as e:
        list(neardup.pairs(tmp_path))
    assert e.value.exit_code == 1
    assert "not a complete job" in e.value.message and str(tmp_path) in e.value.message


def test_stop_early(sample_job) -> None:
    res, _ = sample_job
    t0 = time.monotonic()
    for _ in range(3):
        for n, _row in enumerate(res.pairs()):
            if n == 10:
                break
    assert time.monotonic() - t0 < 10


def test_bad_dataset(sample_out) -> None:
    with pytest.raises(ValueError, match="dataset 'exact'"):
        neardup.Rows(sample_out, "exact")


def test_to_arrow(sample_job) -> None:
    pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed (not packaged by Debian; not run in CI)")
    res, _ = sample_job
    t = res.pairs().to_arrow()
    assert t.num_rows == res.counts.pairs and t.schema.field("hamming").type == pa.int32()


def test_to_duckdb(sample_job) -> None:
    pytest.importorskip("duckdb", reason="duckdb is not installed (not packaged by Debian; not run in CI)")
    res, _ = sample_job
    rel = res.duplicates().to_duckdb()
    assert rel.count("*").fetchone()[0] == res.counts.duplicates
