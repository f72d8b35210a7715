"""The errors of the neardup package: one base class, a subclass per
meaningful exit status of the coordinator (docs/usage.md, "Exit status")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional

if TYPE_CHECKING:  # pragma: no cover
    from ._run import Result


class Error(Exception):
    """A failure of the bundled coordinator binary.

    Attributes:
        message: what the binary said (its ``error``, or its usage error).
        exit_code: the binary's exit status; ``None`` for a query that
            failed while its process goes on serving.
        summary: the JSON object a job prints on stdout when it ends, if
            it printed one.
        stderr: the last lines the binary wrote on stderr.
    """

    def __init__(
        self,
        message: str,
        exit_code: Optional[int] = None,
        summary: Optional[Dict[str, Any]] = None,
        stderr: str = "",
    ) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.summary = summary
        self.stderr = stderr

    def __str__(self) -> str:
        if self.exit_code is None:
            return self.message
        return f"{self.message} (exit status {self.exit_code})"


class JobFailedError(Error):
    """The job failed (exit status 1): an input that cannot be read, a
    task that failed for good under ``strict``, a full disk, ..."""


class UsageError(Error):
    """The binary refused its arguments before any work (exit status 2):
    a bad option value, an option the command does not take."""


class AlreadyCompleteError(Error):
    """The output already holds a complete job (exit status 3): pass
    ``overwrite=True`` to replace it."""


class PartialJobError(Error):
    """Map tasks failed for good and their chunks are missing (exit
    status 4). ``result`` has the job's counts; run the same job again to
    retry them, or pass ``allow_partial=True`` to accept it."""

    def __init__(self, message: str, result: "Result", **kw: Any) -> None:
        super().__init__(message, **kw)
        self.result = result


class BusyError(Error):
    """Another coordinator is running this job (exit status 5)."""


class QueryError(Error):
    """A query the serving process refused or could not answer; the
    process goes on serving (``exit_code`` is ``None``)."""


#: The error class of each exit status a job ends with.
EXIT_ERRORS = {
    1: JobFailedError,
    2: UsageError,
    3: AlreadyCompleteError,
    4: PartialJobError,
    5: BusyError,
}
