"""The one way tokenmill makes a Rich console.

On a terminal Rich wraps to the terminal's width. Anywhere else (a log file, CI, a Prefect worker's captured
output) Rich assumes 80 columns and cuts table cells (``1,010,…`` tokens, ``exact_du…``), so there the width is
unbounded and every row prints whole on one line. ``COLUMNS`` still wins when set, as Rich documents.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from rich.console import Console

PLAIN_WIDTH = 1000  # wide enough that no table of ours is cut; tables are sized to their content, not to this


def make_console(stderr: bool = True, **options: Any) -> Console:
    stream = sys.stderr if stderr else sys.stdout
    if "width" not in options and not os.environ.get("COLUMNS") and not stream.isatty():
        options["width"] = PLAIN_WIDTH
    return Console(stderr=stderr, **options)
