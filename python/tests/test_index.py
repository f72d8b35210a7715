"""neardup.Index: one long-lived process answers queries, with the
results of `coordinator query`."""

from __future__ import annotations

import dataclasses
import gzip
import json
import subprocess

import pytest

import neardup
from conftest import SAMPLE


def sample_docs(n: int):
    """The first n documents of the sample's JSONL file, as (id, text)."""
    docs = []
    with gzip.open(SAMPLE / "sample.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            docs.append((d["id"], d["text"]))
            if len(docs) == n:
                break
    return docs


def test_query_equals_coordinator_query(sample_out, tmp_path) -> None:
    docs = sample_docs(1000)
    with neardup.Index(sample_out) as ix:
        got = ix.query(docs)
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in docs), encoding="utf-8")
    out = subprocess.run([neardup.binary(), "query", "--index", sample_out, str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    want = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(got) == len(want) == 1000
    matched = 0
    for g, w in zip(got, want):
        for m in w["matches"]:
            m.setdefault("url", "")
        assert {"id": g.id, "matches": [dataclasses.asdict(m) for m in g.matches]} == w
        matched += bool(g.matches)
    # Each document finds itself at least.
    assert matched == 1000


def test_one_process(sample_out) -> None:
    docs = sample_docs(20)
    ix = neardup.Index(sample_out, cache_mb=16)
    pid = ix._proc.popen.pid
    assert [i.docs for i in ix.indexes] == [2601] and ix.indexes[0].index == sample_out
    first = ix.query([t for _, t in docs])  # texts: ids are positions
    assert [r.id for r in first] == [str(i) for i in range(20)]
    second = ix.query([{"id": f"m{i}", "text": t} for i, (_, t) in enumerate(docs)], batch=3)
    assert [r.matches for r in second] == [r.matches for r in first]
    assert ix.query([]) == []
    assert ix._proc.popen.pid == pid and ix._proc.popen.poll() is None
    proc = ix._proc.popen
    ix.close()
    assert proc.poll() == 0  # its input closed, it ended
    ix.close()  # again: nothing
    with pytest.raises(neardup.Error, match="closed"):
        ix.query(["x"])


def test_unrelated_text(sample_out) -> None:
    with neardup.Index(sample_out, threshold=0.5) as ix:
        [r] = ix.query([("q", "a sentence that is in no document of the sample, said once and only here")])
    assert r.id == "q" and r.matches == []


def test_query_error_keeps_serving(sample_out) -> None:
    with neardup.Index(sample_out) as ix:
        with pytest.raises(neardup.QueryError) as e:
            ix.query(["x " * (8 << 20) + "y"])  # 16 MiB and 1 byte
        assert e.value.exit_code is None and "over the bound of 16777216" in e.value.message
        [r] = ix.query([sample_docs(1)[0]])
        assert r.matches and r.matches[0].similarity == 1


def test_index_that_is_none(tmp_path) -> None:
    with pytest.raises(neardup.Error) as e:
        neardup.Index(tmp_path / "nothing")
    assert e.value.exit_code == 1 and str(tmp_path / "nothing") in e.value.message


def test_interrupted_query_leaves_no_stale_answer(sample_out) -> None:
    # An exception (Ctrl-C, a signal handler's) while a request is out
    # must not leave its answer to be read as the next request's.
    import signal

    class Interrupt(Exception):
        pass

    def interrupt(signum, frame):
        raise Interrupt()

    docs = sample_docs(1000)
    ix = neardup.Index(sample_out)
    old = signal.signal(signal.SIGALRM, interrupt)
    try:
        with pytest.raises(Interrupt):
            signal.setitimer(signal.ITIMER_REAL, 0.02)
            for _ in range(100):  # until the timer fires
                ix.query(docs)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    try:
        [r] = ix.query([("again", docs[0][1])])
    except neardup.Error as e:
        assert "closed" in str(e)  # the process was ended with its request
    else:
        assert r.id == "again" and r.matches[0].id == docs[0][0]
    finally:
        ix.close()
