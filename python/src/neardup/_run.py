"""neardup.run: a dedup job, run by the bundled coordinator binary."""

from __future__ import annotations

import datetime
import difflib
import json
import os
import subprocess
import threading
from dataclasses import dataclass, field
from typing import (
    IO,
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Union,
)

from ._binary import binary, job_flags, last_message, stop
from ._errors import EXIT_ERRORS, Error, PartialJobError
from ._logs import log_line, log_record, logger, parse
from ._rows import Rows, join

PathLike = Union[str, "os.PathLike[str]"]

#: Flags the package sets itself, with why a caller may not.
_RESERVED = {
    "out": "give it as run's out argument",
    "log-format": "run reads the binary's logs as JSON (--log-format json)",
    "quiet": "pass progress=False for no progress",
}


class Counts(Mapping[str, int]):
    """The job's counts, as ``manifest.json`` has them (docs/usage.md,
    "Output"): by attribute (``counts.docs``) or by key
    (``counts["docs"]``). The attributes typed here are the most used;
    every count of the manifest is there."""

    docs: int
    rejected: int
    empty: int
    pairs: int
    exact_groups: int
    clusters: int
    duplicates: int
    exact_duplicates: int
    near_duplicates: int
    input_bytes: int
    text_bytes: int

    def __init__(self, counts: Mapping[str, int]) -> None:
        self._counts = dict(counts)

    def __getattr__(self, name: str) -> int:
        try:
            return self._counts[name]
        except KeyError:
            raise AttributeError(f"no count {name!r}: the counts are {sorted(self._counts)}") from None

    def __getitem__(self, key: str) -> int:
        return self._counts[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._counts)

    def __len__(self) -> int:
        return len(self._counts)

    def __repr__(self) -> str:
        return f"Counts({self._counts!r})"


#: The outputs a job writes, by their name in Paths.
_LAYOUT = {
    "pairs": "pairs",
    "clusters": "clusters.parquet",
    "duplicates": "duplicates.parquet",
    "exact": "exact.parquet",
    "docs": "docs",
    "rejects": "rejects",
    "paragraphs": "paragraphs",
    "manifest": "manifest.json",
    "report": "report.html",
    "index": "index",
}


@dataclass(frozen=True)
class Paths:
    """Where a job's outputs are (docs/usage.md, "Output"): a directory
    for a dataset of several files (read ``*.parquet`` in it), a file
    otherwise. Joined with ``/``: an object-store URL stays one."""

    out: str
    pairs: str
    clusters: str
    duplicates: str
    exact: str
    docs: str
    rejects: str
    paragraphs: str
    manifest: str
    report: str
    index: str

    @classmethod
    def of(cls, out: str) -> "Paths":
        """The outputs of the job in out."""
        return cls(out=out, **{name: join(out, rel) for name, rel in _LAYOUT.items()})


@dataclass(frozen=True)
class Result:
    """A finished job: the summary the coordinator printed on stdout.

    Attributes:
        status: ``complete``, or ``partial`` (with ``allow_partial``).
        exit_code: 0, or 4 for a partial job.
        out: the output location.
        job: the job's name.
        seconds: how long it ran.
        chunks: the map tasks' chunks.
        counts: the manifest's counts (``counts.docs``, ``counts.pairs``, ...).
        failed_tasks: tasks that failed for good.
        summary: the whole JSON object, as printed.
    """

    status: str
    exit_code: int
    out: str
    job: str
    seconds: float
    chunks: int
    counts: Counts
    failed_tasks: int
    summary: Dict[str, Any] = field(repr=False)

    @property
    def paths(self) -> Paths:
        """Where the outputs are."""
        return Paths.of(self.out)

    def pairs(self) -> Rows:
        """The near-duplicate pairs (``pairs/``): see neardup.pairs."""
        return Rows(self.out, "pairs")

    def clusters(self) -> Rows:
        """The documents in clusters (``clusters.parquet``)."""
        return Rows(self.out, "clusters")

    def duplicates(self) -> Rows:
        """The documents to drop (``duplicates.parquet``)."""
        return Rows(self.out, "duplicates")

    def rejects(self) -> Rows:
        """The input records skipped, and why (``rejects/``)."""
        return Rows(self.out, "rejects")

    def paragraphs(self) -> Rows:
        """The repeated lines or paragraphs (``paragraphs/``, with
        ``paragraphs=True``): see neardup.paragraphs."""
        return Rows(self.out, "paragraphs")


@dataclass(frozen=True)
class Progress:
    """A progress event of a running job (docs/usage.md, "Logs and
    progress"): every 5 seconds (``event`` ``"progress"``) and at each
    stage's end (``"stage done"``, or ``"stage stopped"`` when it ended
    with tasks left). ``eta_s`` and ``fraction`` are None until map has
    read a share of its input; ``docs``, ``bytes`` and ``mb_per_s`` are
    map's, ``steps`` the cluster stage's."""

    event: str
    stage: str
    stage_number: int
    stages: int
    tasks_done: int
    tasks_total: int
    elapsed_s: float
    stage_elapsed_s: float
    stage_eta_s: Optional[float]
    eta_s: Optional[float]
    fraction: Optional[float]
    docs: Optional[int]
    bytes: Optional[int]
    mb_per_s: Optional[float]
    steps: Optional[int]
    record: Dict[str, Any] = field(repr=False)

    @classmethod
    def from_record(cls, rec: Dict[str, Any]) -> "Progress":
        return cls(
            event=rec["msg"],
            stage=rec.get("stage", ""),
            stage_number=rec.get("stage_number", 0),
            stages=rec.get("stages", 0),
            tasks_done=rec.get("tasks_done", 0),
            tasks_total=rec.get("tasks_total", 0),
            elapsed_s=rec.get("elapsed_s", 0.0),
            stage_elapsed_s=rec.get("stage_elapsed_s", 0.0),
            stage_eta_s=rec.get("stage_eta_s"),
            eta_s=rec.get("eta_s"),
            fraction=rec.get("fraction"),
            docs=rec.get("docs"),
            bytes=rec.get("bytes"),
            mb_per_s=rec.get("mb_per_s"),
            steps=rec.get("steps"),
            record=rec,
        )

    def __str__(self) -> str:
        s = f"{self.stage} {self.tasks_done}/{self.tasks_total} tasks"
        if self.docs is not None:
            s += f" {self.docs} docs"
        s += f" | job {self.stage_number}/{self.stages}"
        if self.fraction is not None:
            s += f" {self.fraction:.0%}"
        if self.eta_s is not None:
            s += f" ETA {self.eta_s:.0f}s"
        return s


#: The event names of progress records.
_PROGRESS_EVENTS = ("progress", "stage done", "stage stopped")

ProgressCallback = Callable[[Progress], None]


def run(
    inputs: Union[PathLike, Iterable[PathLike]],
    out: Optional[PathLike],
    threshold: float = 0.8,
    *,
    progress: Union[ProgressCallback, bool, None] = None,
    **options: Any,
) -> Result:
    """Runs a dedup job with the bundled coordinator and returns its
    result.

    Args:
        inputs: files, directories or globs (WET, WARC, JSONL, Parquet,
            text), or one of them; local paths or object-store URLs.
        out: the output directory or URL (``--out``); None with
            ``series=...`` (the job is then written to ``SERIES/NAME``).
        threshold: the Jaccard similarity of a near-duplicate.
        progress: None (the default) or True logs progress events to
            the ``neardup`` logger (INFO); a callable receives each
            :class:`Progress` instead (in this thread); False: none.
        **options: any flag of the coordinator's job (docs/usage.md,
            "Command line"), ``-`` written ``_``: ``workers=2``,
            ``overwrite=True``, ``against=["out/w47"]``, ``keep="longest"``,
            ``disk_full_timeout=datetime.timedelta(minutes=5)``. None
            leaves a flag at its default.

    Returns:
        The job's Result (status ``complete``; ``partial`` with
        ``allow_partial=True``).

    Raises:
        TypeError: an option the coordinator does not take, naming it.
        UsageError: the coordinator refused an option's value (exit 2).
        AlreadyCompleteError: ``out`` holds a complete job (exit 3).
        PartialJobError: map tasks failed for good (exit 4).
        BusyError: another coordinator runs this job (exit 5).
        JobFailedError: the job failed (exit 1).
        Error: the binary ended otherwise (killed by a signal).
    """
    args = ["--log-format", "json", "--threshold", repr(float(threshold))]
    if out is not None:
        args += ["--out", os.fspath(out)]
    if progress is False:
        args.append("--quiet")
    args += _option_args(options)
    args.append("--")
    args += _input_args(inputs)

    on_progress: Optional[ProgressCallback] = None
    if callable(progress):
        on_progress = progress
    elif progress is None or progress is True:
        on_progress = _log_progress
    return _run_job(args, on_progress, allow_partial=bool(options.get("allow_partial")))


def _input_args(inputs: Union[PathLike, Iterable[PathLike]]) -> List[str]:
    if isinstance(inputs, (str, bytes, os.PathLike)):
        inputs = [inputs]  # type: ignore[list-item]
    paths = [os.fspath(p) for p in inputs]  # type: ignore[union-attr]
    if not paths:
        raise ValueError("run: no inputs given")
    return [p.decode() if isinstance(p, bytes) else p for p in paths]


def _option_args(options: Mapping[str, Any]) -> List[str]:
    """The command-line flags of run's keyword options."""
    flags = job_flags()
    unknown = []
    args: List[str] = []
    for name, value in options.items():
        flag = name.replace("_", "-")
        if _RESERVED.get(flag):
            raise TypeError(f"run: option {name!r} is set by the package: {_RESERVED[flag]}")
        kind = flags.get(flag)
        if kind is None:
            unknown.append(name)
            continue
        if value is None:
            continue
        if kind == "bool":
            if not isinstance(value, bool):
                raise TypeError(f"run: option {name!r} takes True or False, not {value!r}")
            args.append(f"--{flag}={'true' if value else 'false'}")
        elif kind == "list":
            values = [value] if isinstance(value, (str, os.PathLike)) else list(value)
            for v in values:
                args += [f"--{flag}", _flag_value(name, v)]
        else:
            args += [f"--{flag}", _flag_value(name, value)]
    if unknown:
        names = sorted(f.replace("-", "_") for f in flags if not _RESERVED.get(f))
        hints = []
        for u in unknown:
            close = difflib.get_close_matches(u, names, n=1)
            hints.append(f"{u!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise TypeError(
            f"run: unknown option{'s' if len(unknown) > 1 else ''} {', '.join(hints)}: "
            "the options are the coordinator's flags (docs/usage.md), - written _"
        )
    return args


def _flag_value(name: str, v: Any) -> str:
    if isinstance(v, bool):
        raise TypeError(f"run: option {name!r} does not take {v!r}")
    if isinstance(v, datetime.timedelta):
        return _go_duration(v)
    if isinstance(v, os.PathLike):
        return os.fspath(v)
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _go_duration(d: datetime.timedelta) -> str:
    """A timedelta as Go's time.ParseDuration reads it: whole
    microseconds."""
    return f"{round(d.total_seconds() * 1_000_000)}us"


def _log_progress(p: Progress) -> None:
    logger.info("%s", p, extra={"neardup": p.record})


def _run_job(args: List[str], on_progress: Optional[ProgressCallback], allow_partial: bool) -> Result:
    # A session of its own: a terminal's Ctrl-C reaches this process
    # alone, which then sends the job one SIGINT (a second would end it
    # at once).
    popen = subprocess.Popen([binary(), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    stdout: List[bytes] = []
    reader = threading.Thread(target=lambda: stdout.append(popen.stdout.read()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    tail: List[str] = []
    try:
        assert popen.stderr is not None
        for raw in popen.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            tail = (tail + [line])[-20:]
            rec = parse(line)
            if rec is None:  # the Go runtime's own crash report
                logger.error("%s", line)
            elif rec.get("msg") not in _PROGRESS_EVENTS:
                log_record(rec)
            elif on_progress is not None:
                on_progress(Progress.from_record(rec))
        code = popen.wait()
    except BaseException:
        # Ctrl-C, or the progress callback failed: stop the job as the
        # command line would, its last words still logged, then let the
        # exception go on.
        drain = threading.Thread(target=_log_rest, args=(popen.stderr,), daemon=True)
        drain.start()
        stop(popen)
        drain.join(timeout=5)
        raise
    reader.join()
    return _result(code, b"".join(stdout), "\n".join(tail), allow_partial)


def _log_rest(stderr: IO[bytes]) -> None:
    """Logs what a job being stopped still writes on stderr."""
    for raw in stderr:
        log_line(raw.decode("utf-8", "replace").rstrip("\r\n"))


def _result(code: int, stdout: bytes, stderr: str, allow_partial: bool) -> Result:
    summary: Optional[Dict[str, Any]] = None
    lines = [ln for ln in stdout.decode("utf-8", "replace").splitlines() if ln.strip()]
    if lines:
        try:
            summary = json.loads(lines[-1])
        except ValueError:
            summary = None
    if summary is not None and code in (0, 4):
        res = Result(
            status=summary.get("status", ""),
            exit_code=code,
            out=summary.get("out", ""),
            job=summary.get("job", ""),
            seconds=summary.get("seconds", 0.0),
            chunks=summary.get("chunks", 0),
            counts=Counts(summary.get("counts") or {}),
            failed_tasks=summary.get("failed_tasks", 0),
            summary=summary,
        )
        if code == 0 or allow_partial:
            return res
        raise PartialJobError(
            "the job is partial: map tasks failed for good and their chunks are missing "
            "(run it again to retry them, or pass allow_partial=True)",
            res,
            exit_code=code,
            summary=summary,
            stderr=stderr,
        )
    message = (summary or {}).get("error") or last_message(stderr)
    if code < 0:
        message = f"the coordinator was killed by signal {-code}" + (f": {message}" if message else "")
    cls = EXIT_ERRORS.get(code, Error)
    raise cls(message or f"the coordinator ended with exit status {code}", exit_code=code, summary=summary, stderr=stderr)
