"""neardup.run: the sample job, options, progress, and the errors of
each exit status."""

from __future__ import annotations

import datetime
import fcntl
import json
import logging
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

import neardup
from conftest import REPO, SAMPLE


def test_installed_from_the_wheel() -> None:
    # The package under test is the installed one, not python/src.
    assert not pathlib.Path(neardup.__file__).resolve().is_relative_to(REPO / "python" / "src")
    assert pathlib.Path(neardup.__file__).resolve().is_relative_to(pathlib.Path(sys.prefix).resolve())
    assert os.access(neardup.binary(), os.X_OK)
    assert neardup.__version__.startswith("0.1.0")


def test_sample_job(sample_job) -> None:
    res, _ = sample_job
    # The README's counts.
    assert (res.status, res.exit_code) == ("complete", 0)
    c = res.counts
    assert (c.docs, c.rejected, c.pairs, c.exact_groups, c.clusters, c.duplicates) == (2601, 3, 1703, 84, 160, 615)
    assert c["docs"] == 2601 and "candidate_pairs_checked" in c
    with open(res.paths.manifest, encoding="utf-8") as f:
        manifest = json.load(f)
    assert dict(res.counts) == manifest["counts"]
    assert res.job == manifest["job"]
    for p in (res.paths.pairs, res.paths.clusters, res.paths.duplicates, res.paths.exact, res.paths.docs,
              res.paths.rejects, res.paths.report, res.paths.index):
        assert os.path.exists(p), p
    with pytest.raises(AttributeError, match="no count 'doc'"):
        c.doc  # noqa: B018


def test_progress_callback(sample_job) -> None:
    _, events = sample_job
    done = [e.stage for e in events if e.event == "stage done"]
    assert done == ["map", "reduce", "verify", "cluster"], [str(e) for e in events]
    last = [e for e in events if e.event == "stage done"][-1]
    assert last.stage_number == last.stages == 4 and last.tasks_done == last.tasks_total
    assert all(isinstance(e, neardup.Progress) and e.record["msg"] == e.event for e in events)


@pytest.mark.parametrize("progress", [None, True])
def test_progress_and_logs_to_logging(tmp_path, caplog, progress) -> None:
    caplog.set_level(logging.INFO, logger="neardup")
    neardup.run(SAMPLE / "sample.jsonl.gz", tmp_path / "out", workers=1, progress=progress)
    recs = [r.neardup for r in caplog.records if r.name == "neardup"]
    assert [r["stage"] for r in recs if r["msg"] == "stage done"] == ["map", "reduce", "verify", "cluster"]
    complete = [r for r in caplog.records if r.name == "neardup" and r.neardup["msg"] == "job complete"]
    assert len(complete) == 1 and complete[0].levelno == logging.INFO and "docs=2000" in complete[0].getMessage()


def test_callback_error_stops_the_job(tmp_path, monkeypatch) -> None:
    def fail(p: neardup.Progress) -> None:
        raise RuntimeError(f"stop at {p.stage}")

    # Reduce task 0 first waits 2 s: the job is still running when the
    # callback fails at map's end.
    monkeypatch.setenv("NEARDUP_FAULTS", "slow@reduce/0")
    out = tmp_path / "out"
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="stop at map"):
        neardup.run([SAMPLE], out, workers=1, progress=fail)
    assert not (out / "_SUCCESS").exists()  # stopped, not finished
    assert time.monotonic() - t0 < 30


CTRL_C_SCRIPT = """
import logging, sys
import neardup
logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(message)s")
def progress(p):
    if p.event == "stage done" and p.stage == "map":
        print("map done", flush=True)
try:
    neardup.run([sys.argv[1]], sys.argv[2], workers=1, progress=progress)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
"""


def test_ctrl_c_stops_the_job_once(tmp_path) -> None:
    # A Python program running a job gets Ctrl-C, as from a terminal: a
    # SIGINT to its process group. The job gets one SIGINT, from the
    # package, and stops as the command line does on one (not "again:
    # stopping at once"); the program sees KeyboardInterrupt.
    env = dict(os.environ, NEARDUP_FAULTS="slow@reduce/0")  # still running after map
    out = tmp_path / "out"
    p = subprocess.Popen([sys.executable, "-c", CTRL_C_SCRIPT, str(SAMPLE), str(out)], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert p.stdout.readline() == "map done\n"
        os.killpg(p.pid, signal.SIGINT)
        stdout, stderr = p.communicate(timeout=60)
    finally:
        p.kill()
    assert p.returncode == 130 and stdout == "interrupted\n", stderr
    assert "stopping at once" not in stderr, stderr
    assert not (out / "_SUCCESS").exists()


def test_no_progress(tmp_path, caplog) -> None:
    caplog.set_level(logging.INFO, logger="neardup")
    neardup.run(SAMPLE / "sample.jsonl.gz", tmp_path / "out", workers=1, progress=False)
    assert not [r for r in caplog.records if r.name == "neardup" and r.neardup["msg"] in ("progress", "stage done")]


def test_options_reach_the_job(tmp_path) -> None:
    out = tmp_path / "out"
    res = neardup.run(
        [SAMPLE], out, 0.9,
        keep="longest", seed=7, index=False, disk_full_timeout=datetime.timedelta(minutes=2),
        workers=1, job="py-options", chunk_bytes=1 << 20,
    )
    with open(res.paths.manifest, encoding="utf-8") as f:
        params = json.load(f)["params"]
    assert (params["threshold"], params["keep"], params["seed"]) == (0.9, "longest", 7)
    assert res.job == "py-options" and res.chunks > 1
    assert not os.path.exists(res.paths.index)  # index=False: --index=false


def test_unknown_options_are_a_type_error(tmp_path) -> None:
    with pytest.raises(TypeError, match=r"unknown option 'treshold' \(did you mean 'threshold'\?\)"):
        neardup.run(SAMPLE, tmp_path / "o", treshold=0.5)
    with pytest.raises(TypeError, match=r"unknown options 'bogus', 'wrkers' \(did you mean 'workers'\?\)"):
        neardup.run(SAMPLE, tmp_path / "o", bogus=1, wrkers=2)
    with pytest.raises(TypeError, match="'log_format' is set by the package"):
        neardup.run(SAMPLE, tmp_path / "o", log_format="text")
    with pytest.raises(TypeError, match="'overwrite' takes True or False"):
        neardup.run(SAMPLE, tmp_path / "o", overwrite="yes")
    assert not (tmp_path / "o").exists()


def test_usage_error(tmp_path) -> None:
    with pytest.raises(neardup.UsageError) as e:
        neardup.run(SAMPLE, tmp_path / "o", threshold=2)
    assert e.value.exit_code == 2
    assert "--threshold must be in (0, 1], not 2" in e.value.message


def test_failed_job(tmp_path) -> None:
    missing = tmp_path / "absent.jsonl"
    with pytest.raises(neardup.JobFailedError) as e:
        neardup.run([missing], tmp_path / "o")
    assert e.value.exit_code == 1
    assert str(missing) in e.value.message and "no such file or directory" in e.value.message
    assert e.value.summary["status"] == "failed"


def test_already_complete_then_overwrite(sample_job) -> None:
    res, _ = sample_job
    with pytest.raises(neardup.AlreadyCompleteError) as e:
        neardup.run([SAMPLE], res.out, workers=2)
    assert e.value.exit_code == 3 and e.value.summary["status"] == "already_complete"
    assert "complete" in e.value.message


def test_overwrite(tmp_path) -> None:
    out = tmp_path / "out"
    neardup.run([SAMPLE / "sample.jsonl.gz"], out, workers=1)
    again = neardup.run([SAMPLE / "sample.jsonl.gz"], out, workers=1, overwrite=True)
    assert again.counts.docs == 2000


def test_busy(tmp_path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    with open(out / ".neardup.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # as a running coordinator holds it
        with pytest.raises(neardup.BusyError) as e:
            neardup.run([SAMPLE / "sample.jsonl.gz"], out, workers=1)
    assert e.value.exit_code == 5 and e.value.summary["status"] == "busy"


def test_partial(tmp_path, monkeypatch) -> None:
    # Map task 0 of several panics on its one delivery: its chunk is
    # missing.
    monkeypatch.setenv("NEARDUP_FAULTS", "panic@map/0")
    out = tmp_path / "out"
    opts = dict(workers=1, max_deliver=1, chunk_bytes=1 << 20)
    with pytest.raises(neardup.PartialJobError) as e:
        neardup.run([SAMPLE], out, **opts)
    assert e.value.exit_code == 4 and e.value.result.status == "partial" and e.value.result.chunks > 1
    assert 0 < e.value.result.counts.docs < 2601
    res = neardup.run([SAMPLE], out, allow_partial=True, **opts)
    assert (res.status, res.exit_code) == ("partial", 4)
