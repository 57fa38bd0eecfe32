"""Bar charts drawn with Pillow: the curation report's three plots (funnel, languages, document lengths).

Why not matplotlib, which every other plot of tokenmill uses (``pipeline.figures``): a run of
``tokenmill curate`` spent ~1.0 CPU-s on these three PNGs, 0.5-0.6 importing ``matplotlib.figure`` and 0.45
laying out and rendering (tight_layout, mathtext for the log axis), half of the 2 CPU-s a 20-document run may
cost (issue 21; ``benchmarks/fixed_cost.py`` on the 2-core VM). Pillow (already installed with matplotlib)
draws the same bars, labels and axes in ~0.05 CPU-s. Only what these plots need is here: a frame, linear or
log-10 ticks, vertical or horizontal bars, a title and axis labels, in matplotlib's DejaVu Sans.
"""

from __future__ import annotations

import functools
import importlib.util
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DPI = 110
TEXT = (34, 34, 34)
GRID = (221, 221, 221)


@functools.cache
def font(size: int) -> Any:
    """DejaVu Sans (shipped in matplotlib's mpl-data; found, not imported) at ``size`` px, else Pillow's own."""
    from PIL import ImageFont

    spec = importlib.util.find_spec("matplotlib")
    if spec is not None and spec.submodule_search_locations:
        path = Path(list(spec.submodule_search_locations)[0]) / "mpl-data" / "fonts" / "ttf" / "DejaVuSans.ttf"
        if path.is_file():
            return ImageFont.truetype(str(path), size)
    return ImageFont.load_default(size)


def nice_ticks(high: float, count: int = 5) -> list[float]:
    """0 and steps of 1, 2 or 5 × 10^k up to at least ``high``."""
    if high <= 0:
        return [0.0, 1.0]
    raw = high / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    return [i * step for i in range(int(math.ceil(high / step)) + 1)]


def tick_label(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 1 or value == 0 else f"{value:g}"


@dataclass
class Axes:
    """A plotting area inside a ``width`` × ``height`` px image, its margins fitted to the labels."""

    width: int
    height: int
    left: int = 70
    right: int = 20
    top: int = 34
    bottom: int = 48
    draw: Any = field(default=None, repr=False)
    image: Any = field(default=None, repr=False)

    @property
    def box(self) -> tuple[int, int, int, int]:
        return self.left, self.top, self.width - self.right, self.height - self.bottom

    def text(self, xy: tuple[float, float], text: str, size: int = 11, anchor: str = "la") -> None:
        self.draw.text(xy, text, font=font(size), fill=TEXT, anchor=anchor)


def _new(size_in: tuple[float, float]):
    from PIL import Image, ImageDraw

    width, height = round(size_in[0] * DPI), round(size_in[1] * DPI)
    image = Image.new("RGB", (width, height), "white")
    return image, ImageDraw.Draw(image), width, height


def _save(image: Any, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path, format="PNG")
    return path


def _frame(ax: Axes, title: str, xlabel: str, ylabel: str) -> None:
    x0, y0, x1, y1 = ax.box
    ax.draw.rectangle([x0, y0, x1, y1], outline=TEXT)
    ax.text(((x0 + x1) / 2, 8), title, size=13, anchor="ma")
    if xlabel:
        ax.text(((x0 + x1) / 2, ax.height - 6), xlabel, anchor="md")
    if ylabel:  # written upwards along the left edge, as matplotlib does
        from PIL import Image, ImageDraw

        box = ax.draw.textbbox((0, 0), ylabel, font=font(11))
        label = Image.new("RGBA", (box[2] + 2, box[3] + 4), (255, 255, 255, 0))
        ImageDraw.Draw(label).text((1, 1), ylabel, font=font(11), fill=TEXT)
        label = label.rotate(90, expand=True)
        ax.image.paste(label, (8, int((y0 + y1 - label.height) / 2)), label)


def hbar(
    path: Path, labels: list[str], values: list[int], size_in: tuple[float, float], title: str, xlabel: str
) -> Path:
    """Horizontal bars, the first at the top, each with its value written after it (the funnel)."""
    image, draw, width, height = _new(size_in)
    left = 16 + max((draw.textlength(label, font=font(11)) for label in labels), default=0)
    ax = Axes(width, height, left=int(left), right=60, draw=draw, image=image)
    x0, y0, x1, y1 = ax.box
    ticks = nice_ticks(max(values, default=0))
    scale = (x1 - x0) / ticks[-1]
    for tick in ticks:
        x = x0 + tick * scale
        draw.line([x, y1, x, y1 + 4], fill=TEXT)
        ax.text((x, y1 + 6), tick_label(tick), size=10, anchor="ma")
    slot = (y1 - y0) / max(1, len(values))
    for i, (label, value) in enumerate(zip(labels, values, strict=True)):
        top, bottom = y0 + i * slot + slot * 0.1, y0 + (i + 1) * slot - slot * 0.1
        draw.rectangle([x0, top, x0 + max(value, 0) * scale, bottom], fill="#4c72b0")
        ax.text((x0 - 6, (top + bottom) / 2), label, anchor="rm")
        ax.text((x0 + max(value, 0) * scale + 4, (top + bottom) / 2), f"{value:,}", size=9, anchor="lm")
    _frame(ax, title, xlabel, "")
    return _save(image, path)


def bars(
    path: Path, categories: list[str], values: list[int], size_in: tuple[float, float], title: str, ylabel: str
) -> Path:
    """Vertical bars, one per category, left to right (the languages)."""
    image, draw, width, height = _new(size_in)
    ax = Axes(width, height, left=70, draw=draw, image=image)
    x0, y0, x1, y1 = ax.box
    ticks = nice_ticks(max(values, default=0))
    scale = (y1 - y0) / ticks[-1]
    for tick in ticks:
        y = y1 - tick * scale
        draw.line([x0, y, x1, y], fill=GRID)
        ax.text((x0 - 6, y), tick_label(tick), size=10, anchor="rm")
    slot = (x1 - x0) / max(1, len(values))
    for i, (category, value) in enumerate(zip(categories, values, strict=True)):
        left, right = x0 + i * slot + slot * 0.1, x0 + (i + 1) * slot - slot * 0.1
        draw.rectangle([left, y1 - value * scale, right, y1], fill="#55a868")
        ax.text(((left + right) / 2, y1 + 6), category, size=10, anchor="ma")
    _frame(ax, title, "", ylabel)
    return _save(image, path)


def log_histogram(
    path: Path,
    values: list[int],
    edges: list[float],
    size_in: tuple[float, float],
    title: str,
    xlabel: str,
    ylabel: str,
) -> Path:
    """A histogram over ``edges`` (ascending, > 0) on a log-10 x axis (the document lengths)."""
    import numpy as np

    image, draw, width, height = _new(size_in)
    ax = Axes(width, height, left=70, draw=draw, image=image)
    x0, y0, x1, y1 = ax.box
    counts = np.histogram(values, bins=edges)[0].tolist() if values else []
    ticks = nice_ticks(max(counts, default=0))
    yscale = (y1 - y0) / ticks[-1]
    for tick in ticks:
        y = y1 - tick * yscale
        draw.line([x0, y, x1, y], fill=GRID)
        ax.text((x0 - 6, y), tick_label(tick), size=10, anchor="rm")
    if edges:
        low, high = math.log10(edges[0]), math.log10(edges[-1])
        span = max(high - low, 1e-9)

        def x_of(value: float) -> float:
            return x0 + (math.log10(value) - low) / span * (x1 - x0)

        mantissas = (1, 2, 5) if high - low < 2.5 else (1,)  # few decades: 1, 2 and 5 x 10^k are labelled
        for exponent in range(math.floor(low), math.ceil(high) + 1):
            for mantissa in mantissas:
                tick = mantissa * 10.0**exponent
                if edges[0] <= tick <= edges[-1]:
                    x = x_of(tick)
                    draw.line([x, y1, x, y1 + 4], fill=TEXT)
                    ax.text((x, y1 + 6), tick_label(tick), size=10, anchor="ma")
        for count, left, right in zip(counts, edges[:-1], edges[1:], strict=False):
            if count:
                draw.rectangle([x_of(left), y1 - count * yscale, x_of(right), y1], fill="#c44e52")
    _frame(ax, title, xlabel, ylabel)
    return _save(image, path)


__all__ = ["bars", "hbar", "log_histogram", "nice_ticks"]
