"""``python -m neardup``: the coordinator's command line."""

import sys

from ._cli import main

sys.exit(main())
