"""The coordinator binary the wheel carries, and the running of it."""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import threading
from typing import IO, Callable, Deque, Dict, List, Optional, Sequence

from ._errors import Error

_HERE = os.path.dirname(os.path.abspath(__file__))

#: How long a process asked to stop (SIGINT) may take before it is killed:
#: a coordinator stops within its own grace period, shorter than this.
STOP_GRACE_SECONDS = 60.0

#: The lines of stderr an Error keeps.
STDERR_TAIL_LINES = 20


def binary() -> str:
    """The path of the bundled coordinator binary.

    Raises:
        Error: the package was installed without it (not from its wheel),
            or it cannot be run.
    """
    path = os.path.join(_HERE, "_bin", "coordinator")
    if not os.path.isfile(path):
        raise Error(
            f"the coordinator binary is not in the package ({path}): install neardup from its wheel "
            "(scripts/build-wheel builds it)"
        )
    if not os.access(path, os.X_OK):
        raise Error(f"the coordinator binary {path} is not executable: reinstall the wheel")
    return path


def job_flags() -> Dict[str, str]:
    """The flags of the bundled coordinator's job, by name, each with its
    kind: ``bool``, ``list`` (repeatable) or ``value``.

    The wheel's build wrote them from the binary itself
    (``coordinator config print``), so they are the flags it takes.
    """
    path = os.path.join(_HERE, "_flags.json")
    try:
        with open(path, encoding="utf-8") as f:
            return dict(json.load(f))
    except OSError as e:
        raise Error(f"the package has no table of the coordinator's flags ({path}): install it from its wheel") from e


class Process:
    """A running binary whose stderr is read on a thread of its own: each
    line goes to ``on_line`` (from that thread), and the last ones are
    kept for an error message. An exception of ``on_line`` is raised
    again by ``wait``; the lines after it are still read."""

    def __init__(
        self,
        args: Sequence[str],
        on_line: Optional[Callable[[str], None]] = None,
        stdin: Optional[int] = None,
    ) -> None:
        self._tail: Deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self._on_line = on_line
        self._callback_error: Optional[BaseException] = None
        self.popen = subprocess.Popen(
            [binary(), *args],
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self._reader = threading.Thread(target=self._read_stderr, name="neardup-stderr", daemon=True)
        self._reader.start()

    @property
    def stdout(self) -> IO[bytes]:
        assert self.popen.stdout is not None
        return self.popen.stdout

    def _read_stderr(self) -> None:
        assert self.popen.stderr is not None
        for raw in self.popen.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            self._tail.append(line)
            if self._on_line is not None and self._callback_error is None:
                try:
                    self._on_line(line)
                except Exception as e:  # raised again by wait; draining goes on
                    self._callback_error = e

    def stderr_tail(self) -> str:
        """The last lines written on stderr, once the process has ended."""
        self._reader.join(timeout=5)
        return "\n".join(self._tail)

    def wait(self) -> int:
        """Waits for the process to end; returns its exit status (minus
        the signal's number if a signal ended it)."""
        code = self.popen.wait()
        self._reader.join(timeout=5)
        if self._callback_error is not None:
            raise self._callback_error
        return code

    def stop(self) -> None:
        """Stops the process: see stop."""
        stop(self.popen)

    def close_pipes(self) -> None:
        for f in (self.popen.stdin, self.popen.stdout):
            if f is not None:
                try:
                    f.close()
                except OSError:
                    pass


def stop(popen: "subprocess.Popen[bytes]") -> None:
    """Asks a process to stop (SIGINT, as Ctrl-C would), and kills it if
    it has not ended within STOP_GRACE_SECONDS."""
    if popen.poll() is not None:
        return
    try:
        popen.send_signal(signal.SIGINT)
        popen.wait(timeout=STOP_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        popen.kill()
        popen.wait()
    except ProcessLookupError:
        pass


def last_message(stderr: str) -> str:
    """The message of the last line of a binary's stderr: the ``err`` of
    a JSON log record (a usage error), its ``msg``, or the line itself."""
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    if not lines:
        return ""
    last = lines[-1]
    try:
        rec = json.loads(last)
    except ValueError:
        return last
    if isinstance(rec, dict):
        return str(rec.get("err") or rec.get("msg") or last)
    return last


def run_to_end(args: List[str]) -> str:
    """Runs the binary with args and returns its stdout; a non-zero exit
    raises Error with what it said on stderr."""
    p = Process(args)
    out = p.stdout.read()
    code = p.wait()
    if code != 0:
        tail = p.stderr_tail()
        raise Error(last_message(tail) or f"coordinator {' '.join(args)} failed", exit_code=code, stderr=tail)
    return out.decode("utf-8")
