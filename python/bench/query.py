"""Times lookups of N sample documents in a finished job's index: through
one neardup.Index (one long-lived process; one call of N documents, and
one call per document), against `coordinator query` run once per
document. Checks that the three give the same matches.

Usage: python python/bench/query.py OUT [N]   (OUT: the sample job's
output, e.g. from neardup.run(["testdata/sample"], "out/sample"))
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import pathlib
import subprocess
import sys
import time

import neardup

SAMPLE = pathlib.Path(__file__).resolve().parents[2] / "testdata" / "sample" / "sample.jsonl.gz"


def main() -> None:
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    docs = []
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            docs.append((d["id"], d["text"]))
            if len(docs) == n:
                break

    t0 = time.perf_counter()
    with neardup.Index(out) as ix:
        t1 = time.perf_counter()
        one_call = ix.query(docs)
        t2 = time.perf_counter()
        per_doc = [r for d in docs for r in ix.query([d])]
        t3 = time.perf_counter()
    report(f"Index: start (open the index) {1000 * (t1 - t0):.1f} ms; one call of {n} documents", t2 - t1, n)
    report(f"Index: {n} calls of one document", t3 - t2, n)

    binary = neardup.binary()
    cli = []
    t4 = time.perf_counter()
    for doc_id, text in docs:
        p = subprocess.run([binary, "query", "--index", out, "-"], input=json.dumps({"id": doc_id, "text": text}),
                           capture_output=True, text=True, check=True)
        cli.append(json.loads(p.stdout))
    t5 = time.perf_counter()
    report(f"coordinator query, one process per document ({n} processes)", t5 - t4, n)

    as_json = [{"id": r.id, "matches": [dataclasses.asdict(m) for m in r.matches]} for r in one_call]
    for c in cli:
        for m in c["matches"]:
            m.setdefault("url", "")
    assert as_json == cli, "Index and coordinator query differ"
    assert [r.matches for r in per_doc] == [r.matches for r in one_call], "one call and one call per document differ"
    print("same matches all three ways:", sum(len(r.matches) for r in one_call), "matches")


def report(what: str, seconds: float, n: int) -> None:
    print(f"{what}: {seconds:.2f} s, {1000 * seconds / n:.2f} ms a query")


if __name__ == "__main__":
    main()
