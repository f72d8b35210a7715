"""neardup.Index: finished jobs' indexes, queried by one long-lived
binary process (``coordinator query --serve``)."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from ._binary import Process, last_message
from ._errors import Error, QueryError
from ._logs import log_line

#: Documents a request carries at most, and about how many bytes of JSON:
#: a request is one batch of the serving process (its reads shared) and
#: one line of at most 64 MiB.
REQUEST_DOCS = 256
REQUEST_BYTES = 16 << 20

Doc = Union[str, Tuple[str, str], Mapping[str, str]]


@dataclass(frozen=True)
class Match:
    """An indexed document found near a queried one.

    Attributes:
        index: the index's location, as given to Index.
        job: its job's name.
        doc: the document's ordinal in its job (the ``doc`` column).
        id: its id; url: its url ("" when it has none).
        similarity: the exact Jaccard similarity of the shingle sets
            (``method`` ``"exact"``), or the signatures' estimate when the
            index holds no sets.
        estimate: the signatures' estimate.
        method: ``exact``, ``minhash`` or ``simhash``.
    """

    index: str
    job: str
    doc: int
    id: str
    url: str
    similarity: float
    estimate: float
    method: str


@dataclass(frozen=True)
class QueryResult:
    """What a query found for one document: its matches, most similar
    first (then by index and ordinal); empty when there are none."""

    id: str
    matches: List[Match]


@dataclass(frozen=True)
class IndexInfo:
    """An open index: its location, job, documents and job threshold."""

    index: str
    job: str
    docs: int
    threshold: float


class Index:
    """The indexes of one or more finished jobs (their ``index/``), open
    for queries in one process of the bundled binary that keeps them
    open, with its cache, until ``close()`` (or the end of a ``with``
    block). Not for use by several threads at once (calls are serialised).

    Args:
        location: a finished job's output directory or URL; more may
            follow.
        threshold: report matches at or above this similarity (None: each
            index's own job threshold).
        cache_mb: memory for band files and decoded text frames kept
            between queries (None: the binary's default, 256).
        tokenizer: if given, refuse an index made with another tokenizer.

    Raises:
        Error: an index cannot be opened (the binary's message and exit
            status).
    """

    def __init__(
        self,
        location: Union[str, "os.PathLike[str]"],
        *more: Union[str, "os.PathLike[str]"],
        threshold: Optional[float] = None,
        cache_mb: Optional[int] = None,
        tokenizer: Optional[str] = None,
    ) -> None:
        args = ["query", "--serve", "--log-format", "json"]
        for loc in (location, *more):
            args += ["--index", os.fspath(loc)]
        if threshold is not None:
            args += ["--threshold", repr(float(threshold))]
        if cache_mb is not None:
            args += ["--cache-mb", str(int(cache_mb))]
        if tokenizer is not None:
            args += ["--tokenizer", tokenizer]
        self._lock = threading.Lock()
        self._proc: Optional[Process] = Process(args, on_line=log_line, stdin=subprocess.PIPE)
        ready = self._read_line()
        if not ready.get("ready"):
            self.close()
            raise Error(f"coordinator query --serve began with {ready!r}, not its ready line")
        self.indexes = [IndexInfo(i["index"], i["job"], i["docs"], i["threshold"]) for i in ready["indexes"]]

    def __enter__(self) -> "Index":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def query(self, docs: Iterable[Doc], *, batch: int = REQUEST_DOCS) -> List[QueryResult]:
        """Looks up the near-duplicates of docs in the indexes.

        Args:
            docs: texts (each one's id is its position, ``"0"``,
                ``"1"``, ...), ``(id, text)`` pairs, or mappings with
                ``id`` and ``text``.
            batch: documents sent a request at most: a request's
                documents are looked up together, sharing their reads.

        Returns:
            One QueryResult per document, in the order of docs.

        Raises:
            QueryError: the process refused a request (a text over 16
                MiB); it goes on serving.
            Error: the process ended (its message and exit status).
        """
        if batch < 1:
            raise ValueError(f"batch {batch}: want at least 1")
        results: List[QueryResult] = []
        with self._lock:
            pending: List[str] = []
            size = 0
            for i, d in enumerate(docs):
                doc = json.dumps(_doc(i, d), ensure_ascii=False)
                if pending and (len(pending) >= batch or size + len(doc) > REQUEST_BYTES):
                    results += self._request(pending)
                    pending, size = [], 0
                pending.append(doc)
                size += len(doc)
            if pending:
                results += self._request(pending)
        return results

    def close(self) -> None:
        """Ends the serving process (its input closed, it exits) and waits
        for it. Idempotent."""
        p, self._proc = self._proc, None
        if p is None:
            return
        try:
            if p.popen.stdin is not None:
                p.popen.stdin.close()
        except OSError:
            pass
        try:
            p.popen.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.stop()
        p.close_pipes()
        p.wait()

    def _request(self, docs: Sequence[str]) -> List[QueryResult]:
        p = self._live()
        line = '{"docs":[' + ",".join(docs) + "]}\n"
        assert p.popen.stdin is not None
        try:
            try:
                p.popen.stdin.write(line.encode("utf-8"))
                p.popen.stdin.flush()
            except BrokenPipeError:
                self._ended()
            resp = self._read_line()
        except Error:
            raise
        except BaseException:
            # Interrupted with the request out (Ctrl-C): its answer would
            # be read as the next one's. The process goes with it.
            self._abort()
            raise
        if "error" in resp:
            raise QueryError(resp["error"])
        return [
            QueryResult(r["id"], [Match(m["index"], m["job"], m["doc"], m["id"], m.get("url", ""), m["similarity"], m["estimate"], m["method"]) for m in r["matches"]])
            for r in resp["results"]
        ]

    def _abort(self) -> None:
        """Ends the serving process at once; the index is then closed."""
        p, self._proc = self._proc, None
        if p is not None:
            p.close_pipes()
            p.popen.kill()
            p.popen.wait()

    def _live(self) -> Process:
        if self._proc is None:
            raise Error("the index is closed")
        return self._proc

    def _read_line(self) -> Dict[str, Any]:
        line = self._live().stdout.readline()
        if not line:
            self._ended()
        return json.loads(line)

    def _ended(self) -> None:
        """Raises Error for a serving process that has ended."""
        p = self._live()
        p.close_pipes()
        code = p.wait()
        self._proc = None
        tail = p.stderr_tail()
        raise Error(last_message(tail) or "coordinator query --serve ended", exit_code=code, stderr=tail)


def _doc(i: int, d: Doc) -> Dict[str, str]:
    if isinstance(d, str):
        return {"id": str(i), "text": d}
    if isinstance(d, Mapping):
        if "text" not in d:
            raise ValueError(f"document {i}: a mapping without a 'text' key")
        return {"id": str(d.get("id", i)), "text": d["text"]}
    doc_id, text = d
    return {"id": str(doc_id), "text": text}
