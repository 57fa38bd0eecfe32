"""What tokenmill says in more than one place, worded once: shares of a whole, the wrong-text-key warning and the
persistent-index hint (curate's report, ``tokenmill dedup`` and ``tokenmill tokenize`` say them alike), and the
cells the report's tables share (drops by rule, a figure or ``—``).

Imports nothing of tokenmill, so any stage can use it without depending on the report.
"""

from __future__ import annotations

from typing import Any


def pct(part: float, whole: float) -> str:
    """``part`` as a percentage of ``whole``, rounded for reading (``—`` when ``whole`` is 0)."""
    if not whole:
        return "—"
    share = 100 * part / whole
    return f"{share:.0f} %" if share >= 99.95 or share == 0 else f"{share:.1f} %"


def missing_text_warning(source: str, missing: int, read: int, key: str, fields: list[str], how: str) -> str:
    """The wrong-text-key warning (curate, dedup and tokenize say it the same way): how many rows had no field
    ``key``, the fields those rows had, and ``how`` to set the right one."""
    every = "every document" if missing == read else f"{missing:,} of {read:,} documents ({pct(missing, read)})"
    seen = ", ".join(fields) or "none recorded"
    return (
        f"{source}: {every} read had no text field {key!r} (read/missing_text); fields seen in those rows: {seen}; "
        f"{how}"
    )


def index_hint(index: str | None) -> str:
    """What to add to a "nothing kept" warning when a persistent dedup index may be why."""
    if not index:
        return ""
    return (
        f"; this run dedups against the persistent index {index}, so documents that earlier runs kept count as "
        "duplicates — to curate this input afresh, run without it (recipe stages: {dedup: {index: null}}; "
        "tokenmill dedup: leave out --index) or point it at a new folder"
    )


def drops_cell(dropped: dict[str, int]) -> str:
    """A table cell ``rule: documents, ...`` (rules in name order), or ``—``."""
    return ", ".join(f"{rule}: {n:,}" for rule, n in sorted(dropped.items())) or "—"


def number(value: Any, digits: int = 0) -> str:
    """A figure of a table (the shards, the run summary) with thousands separators and ``digits`` decimals;
    ``—`` when absent, as written when not a number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "—" if value is None else str(value)
    return f"{value:,.{digits}f}"
