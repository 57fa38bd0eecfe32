"""Every import deferred into a function of ``pipeline/``, ``training/``, ``flows/`` has its reason in
docs/imports.md (issue 24: no deferred import without a measured reason).

The imports are found with the AST scan of ``benchmarks/import_cost.py`` (nothing is imported or timed here);
the doc's table is that script's ``--markdown`` output. A new deferred import fails until it is measured and its
row added, or hoisted to the module's top; a hoisted one fails until its row is removed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "imports.md"
THRESHOLD_MS = 10.0
#: the kinds of reason an import may stay deferred for, whatever it costs (docs/imports.md says what each means)
REASONS = ("optional dependency", "after", "cycle", "start-up")


def _doc_rows() -> dict[tuple[str, str], dict[str, str]]:
    """(module, imported module) → the row's cells, from the doc's table (the one whose header starts
    ``| module | imports |``)."""
    rows: dict[tuple[str, str], dict[str, str]] = {}
    header: list[str] = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):  # a table ends at the first line that is not a row
            header = []
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        if cells[:2] == ["module", "imports"]:
            header = cells
        elif header and not set(line) <= set("|-: "):
            row = dict(zip(header, cells, strict=True))
            rows[(row["module"], row["imports"])] = row
    return rows


@pytest.fixture(scope="module")
def deferred() -> set[tuple[str, str]]:
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        from import_cost import scan
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    return {(entry.module, entry.target) for entry in scan()}


def _justified(row: dict[str, str]) -> bool:
    verdict = row["verdict"]
    if verdict.startswith("≥"):
        return bool(row["CPU ms"]) and float(row["CPU ms"]) >= THRESHOLD_MS
    kind, _, why = verdict.partition(":")
    return kind in REASONS and bool(why.strip())


def test_the_scan_finds_deferred_imports(deferred) -> None:
    # the scan is what the other tests trust: it sees the imports that are known to stay deferred
    assert ("pipeline.executor", "ray") in deferred
    assert ("flows.runtime", "tomllib") in deferred


def test_every_deferred_import_is_in_the_doc(deferred) -> None:
    rows = _doc_rows()
    missing = sorted(f"{module}: {target}" for module, target in deferred - set(rows))
    assert missing == [], "measure them: python benchmarks/import_cost.py --markdown (docs/imports.md)"


def test_every_row_has_ten_ms_or_a_reason() -> None:
    unjustified = sorted(f"{m}: {t}: {row['verdict']}" for (m, t), row in _doc_rows().items() if not _justified(row))
    assert unjustified == []


def test_every_row_is_still_deferred(deferred) -> None:
    gone = sorted(f"{module}: {target}" for module, target in set(_doc_rows()) - deferred)
    assert gone == []  # hoisted or removed: take its row out of docs/imports.md
