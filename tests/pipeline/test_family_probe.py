"""The package probe (benchmarks/family_probe.py) samples what the real-text builder would: pages of enough visible
words, in turn from each folder, without source listings, generated indexes or search pages."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from family_probe import sample_pages  # noqa: E402


def _page(path: Path, words: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    body = " ".join(f"word{i}" for i in range(words))
    path.write_text(f"<html><body><p>{body}</p></body></html>", encoding="utf-8")


def test_pages_are_taken_in_turn_from_each_folder_and_listings_are_left_out(tmp_path: Path) -> None:
    for lang in ("de", "en", "fr"):
        for i in range(4):
            _page(tmp_path / "html" / lang / f"page{i}.html", 250)
        _page(tmp_path / "html" / lang / "stub.html", 20)  # too few visible words
    _page(tmp_path / "html" / "_sources" / "page.html", 300)  # Sphinx's sources
    _page(tmp_path / "html" / "genindex.html", 300)  # a generated index
    _page(tmp_path / "html" / "x_source.html", 300)  # a Doxygen source listing
    picked = sample_pages(tmp_path, max_pages=6, min_words=200, seed=0)
    assert len(picked) == 6
    assert sorted(group for group, _ in picked) == ["html/de"] * 2 + ["html/en"] * 2 + ["html/fr"] * 2
    names = {page.name for _, page in picked}
    assert "stub.html" not in names and not names & {"genindex.html", "x_source.html"}
    assert all("_sources" not in page.parts for _, page in picked)
    assert sample_pages(tmp_path, max_pages=6, min_words=200, seed=0) == picked  # seeded
    assert len(sample_pages(tmp_path, max_pages=100, min_words=200, seed=0)) == 12
