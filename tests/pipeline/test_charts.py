"""The report's plots drawn with Pillow (pipeline.charts): an image of the asked size with the bars in it."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.charts import nice_ticks
from pipeline.curate.report.plots import plot_languages, plot_lengths


def _colours(path: Path) -> set[tuple[int, int, int]]:
    from PIL import Image

    with Image.open(path) as image:
        return {rgb for _, rgb in image.convert("RGB").getcolors(maxcolors=1 << 20)}


def test_bars_and_histogram_are_drawn(tmp_path: Path) -> None:
    from PIL import Image

    plot_languages({"en": 700, "de": 120}, tmp_path / "languages.png")
    plot_lengths([150, 900, 900, 2400, 15000], tmp_path / "lengths.png")
    for name, colour in (("languages.png", (0x55, 0xA8, 0x68)), ("lengths.png", (0xC4, 0x4E, 0x52))):
        with Image.open(tmp_path / name) as image:
            assert image.size == (880, 385)
        assert colour in _colours(tmp_path / name)


def test_empty_plots_are_written_without_bars(tmp_path: Path) -> None:
    plot_languages({}, tmp_path / "languages.png")
    plot_lengths([], tmp_path / "lengths.png")
    assert (0x55, 0xA8, 0x68) not in _colours(tmp_path / "languages.png")
    assert (0xC4, 0x4E, 0x52) not in _colours(tmp_path / "lengths.png")


@pytest.mark.parametrize(
    ("high", "expected"), [(0, [0.0, 1.0]), (7, [0, 2, 4, 6, 8]), (2000, [0, 500, 1000, 1500, 2000])]
)
def test_ticks_cover_the_largest_value_in_round_steps(high, expected) -> None:
    assert nice_ticks(high) == expected
