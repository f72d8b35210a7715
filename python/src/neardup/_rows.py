"""Readers of a finished job's outputs, with no third-party package: the
bundled binary streams a dataset's rows as JSON Lines (``coordinator rows
DATASET OUT``, read by the Go API's readers)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Union

from ._binary import Process, last_message, run_to_end
from ._errors import Error

if TYPE_CHECKING:  # pragma: no cover
    import duckdb
    import pandas
    import pyarrow

#: The datasets the readers read, and their file or folder under the
#: output.
DATASETS = {
    "pairs": "pairs",
    "clusters": "clusters.parquet",
    "duplicates": "duplicates.parquet",
    "rejects": "rejects",
    "paragraphs": "paragraphs",
}

Row = Dict[str, Any]


def join(out: str, name: str) -> str:
    """``out/name``: with ``/`` for an object-store URL, os.path.join for
    a local path."""
    if "://" in out:
        return out.rstrip("/") + "/" + name
    return os.path.join(out, name)


@dataclass(frozen=True)
class Column:
    """A column of a dataset: its name, its type (``int32``, ``int64``,
    ``double``, ``string`` or ``bool``) and whether it may be null."""

    name: str
    type: str
    nullable: bool


# The types of each column type in pandas (a nullable integer column as
# pandas' own nullable integer) and in Arrow.
_PANDAS_TYPES = {"int32": "int32", "int64": "int64", "double": "float64", "string": "object", "bool": "bool"}
_PANDAS_NULLABLE = {"int32": "Int32", "int64": "Int64", "bool": "boolean"}


class Rows:
    """The rows of a dataset of a complete job: iterate it for one dict a
    row (its keys the Parquet columns, None for a null), streamed from
    the bundled binary without holding them all; or take them all as a
    pandas DataFrame, an Arrow table or a DuckDB relation, when those
    packages are installed.

    A job that is not complete (no ``_SUCCESS``) or a file that does not
    read raises Error, naming it.
    """

    def __init__(self, out: Union[str, "os.PathLike[str]"], dataset: str) -> None:
        if dataset not in DATASETS:
            raise ValueError(f"dataset {dataset!r}: want one of {sorted(DATASETS)}")
        self.out = os.fspath(out)
        self.dataset = dataset
        self._columns: Optional[List[Column]] = None

    def __repr__(self) -> str:
        return f"Rows({self.out!r}, {self.dataset!r})"

    def __iter__(self) -> Iterator[Row]:
        p = Process(["rows", self.dataset, self.out])
        done = False
        try:
            for line in p.stdout:
                yield json.loads(line)
            done = True
        finally:
            # Closed first: a process stopped while it writes ends at its
            # next write.
            p.close_pipes()
            if not done:  # the caller stopped early, or failed
                p.stop()
            code = p.wait()
        if code != 0:
            tail = p.stderr_tail()
            raise Error(last_message(tail) or f"coordinator rows {self.dataset} failed", exit_code=code, stderr=tail)

    @property
    def columns(self) -> List[Column]:
        """The dataset's columns, in the files' order (whatever the job)."""
        if self._columns is None:
            cols = json.loads(run_to_end(["rows", "--columns", self.dataset]))
            self._columns = [Column(c["name"], c["type"], c["nullable"]) for c in cols]
        return self._columns

    @property
    def path(self) -> str:
        """The dataset's file, or folder of ``*.parquet`` files."""
        return join(self.out, DATASETS[self.dataset])

    @property
    def glob(self) -> str:
        """The glob of its Parquet files, for DuckDB, Polars or Spark."""
        p = self.path
        return p if p.endswith(".parquet") else join(p, "*.parquet")

    def to_list(self) -> List[Row]:
        """Every row, in the files' order."""
        return list(self)

    def to_pandas(self) -> "pandas.DataFrame":
        """The rows as a pandas DataFrame with the dataset's columns, in
        order and typed (a nullable integer column as pandas' ``Int32`` or
        ``Int64``), even with no rows. Needs pandas (no Parquet engine)."""
        import pandas as pd

        cols = self.columns
        df = pd.DataFrame.from_records(self.to_list(), columns=[c.name for c in cols])
        types = {}
        for c in cols:
            t = _PANDAS_NULLABLE.get(c.type) if c.nullable else None
            types[c.name] = t or _PANDAS_TYPES[c.type]
        return df.astype(types)

    def to_arrow(self) -> "pyarrow.Table":
        """The rows as an Arrow table with the dataset's schema (types and
        nullability), even with no rows. Needs pyarrow; with it, reading
        the Parquet files themselves (``pyarrow.parquet.read_table``
        on ``self.path``) is faster for large outputs."""
        import pyarrow as pa

        types = {"int32": pa.int32(), "int64": pa.int64(), "double": pa.float64(), "string": pa.string(), "bool": pa.bool_()}
        schema = pa.schema([pa.field(c.name, types[c.type], nullable=c.nullable) for c in self.columns])
        return pa.Table.from_pylist(self.to_list(), schema=schema)

    def to_duckdb(self, connection: "Optional[duckdb.DuckDBPyConnection]" = None) -> "duckdb.DuckDBPyRelation":
        """A DuckDB relation over the dataset's Parquet files (DuckDB reads
        them itself, as docs/usage.md's queries do), on connection or
        DuckDB's default one. Needs duckdb; for an object-store output,
        DuckDB's httpfs and its credentials. A local output must hold a
        complete job (``_SUCCESS``)."""
        import duckdb

        if "://" not in self.out and not os.path.exists(join(self.out, "_SUCCESS")):
            raise Error(f"{self.out} is not a complete job: it has no _SUCCESS")
        con = connection if connection is not None else duckdb.default_connection
        return con.read_parquet(self.glob)


def pairs(out: Union[str, "os.PathLike[str]"]) -> Rows:
    """Every near-duplicate pair of the complete job in ``out``, once
    (``pairs/``): ``a``, ``b`` (ordinals, a < b), ``a_id``, ``b_id``,
    ``similarity``, ``estimate``, ``method``, ``hamming``,
    ``bands_collided``, ``first_band``, ``a_url``, ``b_url``, ``a_job``,
    ``a_out``."""
    return Rows(out, "pairs")


def clusters(out: Union[str, "os.PathLike[str]"]) -> Rows:
    """Every document in a cluster of two or more (``clusters.parquet``):
    ``doc``, ``id``, ``cluster``, ``cluster_size``, ``keep``."""
    return Rows(out, "clusters")


def duplicates(out: Union[str, "os.PathLike[str]"]) -> Rows:
    """The documents to drop (``duplicates.parquet``), each with the one
    kept in its place: ``doc``, ``id``, ``url``, ``cluster``,
    ``kept_doc``, ``kept_id``."""
    return Rows(out, "duplicates")


def rejects(out: Union[str, "os.PathLike[str]"]) -> Rows:
    """The input records skipped, and why (``rejects/``): ``chunk``,
    ``file``, ``byte_offset``, ``line``, ``reason``."""
    return Rows(out, "rejects")


def paragraphs(out: Union[str, "os.PathLike[str]"]) -> Rows:
    """The occurrences of the lines or paragraphs that two documents or
    more hold (``paragraphs/``, a job run with ``paragraphs=True``):
    ``unit_hash``, ``doc``, ``unit_index``, ``id``, ``byte_offset``,
    ``byte_length``, ``holders``, ``first_doc``, ``first_job``. A job
    without the pass has none."""
    return Rows(out, "paragraphs")
