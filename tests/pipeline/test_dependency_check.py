"""datatrove's check of a step's ``_requires_dependencies``, with the direct lookup ``pipeline.base`` puts first,
answers as datatrove's scan of every installed distribution does."""

from __future__ import annotations

from datatrove.utils import _import_utils

from pipeline.base import _direct_distribution_lookup

# installed (the ones tokenmill's steps name among them), absent, and spellings the scan does not accept
NAMES = (
    "orjson", "fastwarc", "resiliparse", "fasttext-numpy2-wheel", "numpy", "datatrove", "regex",
    "not-a-distribution-here", "Orjson", "NumPy", "fasttext_numpy2_wheel", "fasttext", "",
)  # fmt: skip


def test_the_lookup_answers_as_datatroves_scan() -> None:
    installed = _import_utils._is_distribution_available
    assert installed.__module__ == "pipeline.base"  # put in place when pipeline.base was imported
    datatrove_scan = installed.scan.__wrapped__  # datatrove's function itself, without its cache
    scanned: list[str] = []

    def counted_scan(name: str) -> bool | None:
        scanned.append(name)
        return datatrove_scan(name)

    lookup = _direct_distribution_lookup(counted_scan)
    assert [lookup(name) for name in NAMES] == [datatrove_scan(name) for name in NAMES]
    assert {"orjson", "fastwarc", "resiliparse"}.isdisjoint(scanned)  # found directly, no scan
    assert {"not-a-distribution-here", "Orjson"} <= set(scanned)  # left to the scan
