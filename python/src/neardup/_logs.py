"""The bundled binary's JSON log records, passed to the logging module."""

from __future__ import annotations

import json
import logging
from typing import Any, Dict, Optional

#: The logger the binary's log records go to (and, without a callback, a
#: job's progress): each with the binary's level, its message and its
#: attributes as key=value, the whole record as the LogRecord's
#: ``neardup`` attribute.
logger = logging.getLogger("neardup")

#: slog's levels as logging's.
_LEVELS = {"DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARN": logging.WARNING, "ERROR": logging.ERROR}


def parse(line: str) -> Optional[Dict[str, Any]]:
    """The JSON log record of a line of stderr, or None for a line that
    is none (the Go runtime's own crash report)."""
    try:
        rec = json.loads(line)
    except ValueError:
        return None
    return rec if isinstance(rec, dict) else None


def log_record(rec: Dict[str, Any]) -> None:
    """Logs a record of the binary at its level."""
    level = _LEVELS.get(str(rec.get("level", "INFO")), logging.INFO)
    attrs = " ".join(f"{k}={v}" for k, v in rec.items() if k not in ("time", "level", "msg"))
    logger.log(level, "%s%s", rec.get("msg", ""), f" {attrs}" if attrs else "", extra={"neardup": rec})


def log_line(line: str) -> None:
    """Logs a line of the binary's stderr: its record, or the line as an
    error."""
    rec = parse(line)
    if rec is None:
        logger.error("%s", line)
    else:
        log_record(rec)
