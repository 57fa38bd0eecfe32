"""The curation report's three plots: the funnel, the kept documents' languages and their lengths, drawn with
Pillow (``pipeline.charts``: matplotlib cost ~1.0 CPU-s of every ``tokenmill curate`` run for them)."""

from __future__ import annotations

from pathlib import Path

from pipeline.accounting import SourceAccount
from pipeline.charts import bars, hbar, log_histogram
from pipeline.curate.report.funnel import STAGE_ORDER, funnel


def plot_funnel(accounts: list[SourceAccount], path: Path) -> None:
    labels, values = [], []
    for account in accounts:
        for stage, remaining in funnel(account):
            # funnel's first row is every record read, its "after read" row what the reader made documents of
            labels.append(f"{account.source}: {'records read' if stage == 'read' else stage}")
            values.append(remaining)
    size = (8, 0.6 + 0.45 * len(STAGE_ORDER) * max(1, len(accounts)))
    hbar(path, labels, values, size, "Curation funnel", "documents remaining")


def plot_languages(languages: dict[str, int], path: Path) -> None:
    items = list(languages.items())[:20]
    bars(path, [k for k, _ in items], [v for _, v in items], (8, 3.5), "Language distribution (kept)", "kept documents")


def plot_lengths(lengths: list[int], path: Path) -> None:
    import numpy as np

    edges: list[float] = []
    if lengths:
        upper = max(max(lengths), 10)
        lower = max(1, min(lengths))  # from the shortest kept document, not from 10⁰
        edges = np.logspace(np.log10(lower), np.log10(upper) + 0.1, 40).tolist()
    title, xlabel = "Document length (kept)", "characters per kept document"
    log_histogram(path, lengths, edges, (8, 3.5), title, xlabel, "documents")
