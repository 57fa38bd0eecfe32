"""Deduplication: exact copies and MinHash near-duplicates, verified, across sources and across runs.

Signatures in parallel ranks (``signatures``), clustering in one task (``cluster``), filtering back in the
ranks (``filter``), an optional persistent index of earlier runs (``index``). See ``docs/dedup.md``.
Public entry points are imported lazily so that ``pipeline.config`` can import ``DedupConfig`` cheaply.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from pipeline.dedup.config import DedupConfig, IndexConfig, RedisConfig

if TYPE_CHECKING:
    from pipeline.dedup.result import DedupResult, dedup_report_md
    from pipeline.dedup.run import dedup_dataset, run_dedup

__all__ = ["DedupConfig", "IndexConfig", "RedisConfig", "DedupResult", "dedup_report_md", "run_dedup", "dedup_dataset"]

_LAZY = {
    "DedupResult": "pipeline.dedup.result",
    "dedup_report_md": "pipeline.dedup.result",
    "run_dedup": "pipeline.dedup.run",
    "dedup_dataset": "pipeline.dedup.run",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(name)
