"""Does a run's report add up? ``check_report(run_dir)`` lists what does not.

Three checks, run by the tests on every report they produce (and callable on any run):

* every funnel row of ``report.json`` adds up: ``in − dropped + routed_in − routed_out = out``, each row starts
  where the one before ended, and the last one ends at the source's ``kept_final``;
* every image link in ``report.md`` resolves to a file, relative to the report;
* every number a table of ``report.md`` shows is in ``report.json`` (to the digits shown): a cell that is only
  a number, a share (``71.0 %``) of two numbers of ``report.json``, or a GiB figure of a byte count there.
  Free text, ids and snippets are not numbers of the report and are not checked.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

GIB = 2**30
_IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")
_NUMBER = re.compile(r"^[+−-]?\d[\d,]*(\.\d+)?$")
_PERCENT = re.compile(r"^(\d+(\.\d+)?) %$")
_GIB = re.compile(r"^\*{0,2}(\d+(\.\d+)?) GiB\*{0,2}$")


def check_report(run_dir: str | Path) -> list[str]:
    """The problems of ``run_dir``'s ``report.md`` / ``report.json``; empty when the report adds up."""
    root = Path(run_dir)
    payload = json.loads((root / "report.json").read_text(encoding="utf-8"))
    markdown = (root / "report.md").read_text(encoding="utf-8")
    return funnel_problems(payload) + image_problems(markdown, root) + number_problems(markdown, payload)


def funnel_problems(payload: dict[str, Any]) -> list[str]:
    curation = payload.get("curation") or {}
    kept = {s["source"]: s.get("kept_final") for s in curation.get("sources", [])}
    reads = {s["source"]: s.get("read") for s in curation.get("sources", [])}
    problems = []
    for source, rows in (curation.get("stages") or {}).items():
        previous = reads.get(source)
        for row in rows:
            moved = row.get("routed_in", 0) - row.get("routed_out", 0)
            if row["in"] - row["dropped"] + moved != row["out"]:
                problems.append(
                    f"funnel {source}/{row['stage']}: {row['in']} − {row['dropped']} + {moved} ≠ {row['out']}"
                )
            if previous is not None and row["in"] != previous:
                problems.append(
                    f"funnel {source}/{row['stage']}: starts at {row['in']}, the row before ended at {previous}"
                )
            previous = row["out"]
        if rows and kept.get(source) is not None and rows[-1]["out"] != kept[source]:
            problems.append(f"funnel {source}: ends at {rows[-1]['out']}, the source kept {kept[source]}")
    return problems


def image_problems(markdown: str, root: Path) -> list[str]:
    return [
        f"image link {target} does not resolve (relative to {root / 'report.md'})"
        for target in _IMAGE.findall(markdown)
        if "://" not in target and not (root / target).is_file()
    ]


def _numbers(value: Any) -> Iterator[float]:
    if isinstance(value, bool):
        return
    if isinstance(value, int | float):
        if math.isfinite(value):
            yield float(value)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _numbers(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _numbers(item)


def _decimals(text: str) -> int:
    return len(text.split(".", 1)[1]) if "." in text else 0


class _Known:
    """The numbers of report.json, sorted, for "is x there to the digits shown" lookups."""

    def __init__(self, payload: dict[str, Any]):
        import numpy as np

        self.values = np.unique(np.fromiter(_numbers(payload), dtype=float))

    def has(self, value: float, decimals: int) -> bool:
        import numpy as np

        tolerance = 0.5 * 10.0**-decimals + 1e-9 * max(1.0, abs(value))
        low = np.searchsorted(self.values, value - tolerance, side="left")
        return bool(low < len(self.values) and self.values[low] <= value + tolerance)

    def has_share(self, percent: float, decimals: int) -> bool:
        """A share of two known numbers, as ``pct`` rounds it (no more pairs than a report has)."""
        small = self.values[(self.values > 0) & (self.values < 1e9)]
        if len(small) > 3000:  # a huge report: a share check would be quadratic, and shares are derived anyway
            return True
        tolerance = 0.5 * 10.0**-decimals + 1e-9
        shares = 100 * small[:, None] / small[None, :]
        return bool((abs(shares - percent) <= tolerance).any()) or percent == 0


def _table_cells(markdown: str) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(markdown.splitlines(), 1):
        if line.startswith("|") and not set(line) <= set("|-: "):
            for cell in line.strip().strip("|").split("|"):
                yield number, cell.strip().strip("*").strip()


def number_problems(markdown: str, payload: dict[str, Any]) -> list[str]:
    known, problems = _Known(payload), []
    for line, cell in _table_cells(markdown):
        if _NUMBER.match(cell):
            value = abs(float(cell.replace(",", "").replace("−", "-").lstrip("+")))
            if not known.has(value, _decimals(cell)):
                problems.append(f"report.md line {line}: {cell!r} is not a number of report.json")
        elif match := _PERCENT.match(cell):
            if not known.has_share(float(match.group(1)), _decimals(match.group(1))):
                problems.append(f"report.md line {line}: {cell!r} is no share of numbers of report.json")
        elif match := _GIB.match(cell):
            gib = float(match.group(1))
            if not (known.has(gib, _decimals(match.group(1))) or known.has(gib * GIB, 0) or _gib_of(known, gib, match)):
                problems.append(f"report.md line {line}: {cell!r} is no byte count of report.json")
    return problems


def _gib_of(known: _Known, gib: float, match: re.Match[str]) -> bool:
    tolerance = 0.5 * 10.0 ** -_decimals(match.group(1))
    bytes_values = known.values / GIB
    return bool((abs(bytes_values - gib) <= tolerance + 1e-9).any())
