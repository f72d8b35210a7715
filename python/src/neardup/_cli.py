"""The ``neardup`` console script: the bundled coordinator's command
line (``neardup --out out crawl/``, ``neardup query --index out -``, ...),
its exit status passed through."""

from __future__ import annotations

import os
import sys
from typing import List, Optional

from ._binary import binary
from ._errors import Error


def main(argv: Optional[List[str]] = None) -> int:
    """Runs the coordinator with argv (default: this process's
    arguments) in this process's place: its exit status, output and
    signals are the command's. Returns only if it cannot be started."""
    args = sys.argv[1:] if argv is None else argv
    try:
        path = binary()
    except Error as e:
        print(f"neardup: {e}", file=sys.stderr)
        return 127
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(path, [path, *args])
    return 127  # not reached: execv returns only by raising


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
