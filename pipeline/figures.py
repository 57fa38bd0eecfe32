"""Figures: every plot tokenmill writes (the run report's, training's and the scaling fits') is drawn on a headless
matplotlib axis and saved here, so that the backend, the layout and the folder creation are done once."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def figure(path: Path, size: tuple[float, float]):
    """A matplotlib axis on the headless Agg backend, saved to ``path`` and closed on exit."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=size)
    try:
        yield ax
        save_figure(fig, path)
    finally:
        plt.close(fig)


def save_figure(fig: Any, path: str | Path, dpi: int = 110) -> Path:
    """Lay out, save (creating the folder) and close a matplotlib figure: every plot tokenmill writes ends here."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path
