"""What every benchmark script shares: the repository on ``sys.path``, telemetry and hubs off, CPU time.

Imported as ``from _common import cpu_seconds`` (a script's own folder is first on ``sys.path``).
"""

from __future__ import annotations

import resource
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.env import offline

offline()


def cpu_seconds() -> float:
    """User + system CPU seconds of this process and its reaped children (sandboxes, executor workers)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime
