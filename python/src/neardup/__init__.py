"""neardup from Python: near-duplicate documents in web crawls and text
corpora.

The package carries neardup's coordinator as a static binary and runs it:
a job (:func:`run`), its outputs read without a Parquet package
(:func:`pairs`, :func:`clusters`, :func:`duplicates`, :func:`rejects`,
:func:`paragraphs`),
lookups in finished jobs' indexes by one long-lived process
(:class:`Index`), and the command line (the ``neardup`` console script).

A minimal program::

    import neardup

    res = neardup.run(["crawl/"], out="out")
    print(res.counts.docs, "documents,", res.counts.duplicates, "to drop")
    for d in res.duplicates():
        print(d["id"], "is a near-duplicate of", d["kept_id"])

docs/python.md in the repository has more; the command line, the columns
of every dataset and the method are in its README.md and docs/.
"""

from ._binary import binary
from ._errors import (
    AlreadyCompleteError,
    BusyError,
    Error,
    JobFailedError,
    PartialJobError,
    QueryError,
    UsageError,
)
from ._index import Index, IndexInfo, Match, QueryResult
from ._rows import Column, Rows, clusters, duplicates, pairs, paragraphs, rejects
from ._run import Counts, Paths, Progress, Result, run
from ._version import __version__

__all__ = [
    "AlreadyCompleteError",
    "BusyError",
    "Column",
    "Counts",
    "Error",
    "Index",
    "IndexInfo",
    "JobFailedError",
    "Match",
    "PartialJobError",
    "Paths",
    "Progress",
    "QueryError",
    "QueryResult",
    "Result",
    "Rows",
    "UsageError",
    "__version__",
    "binary",
    "clusters",
    "duplicates",
    "pairs",
    "paragraphs",
    "rejects",
    "run",
]
