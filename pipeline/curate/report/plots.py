"""The curation report's three plots: the funnel, the kept documents' languages and their lengths."""

from __future__ import annotations

from pathlib import Path

from pipeline.accounting import SourceAccount
from pipeline.curate.report.funnel import STAGE_ORDER, funnel
from pipeline.figures import figure


def plot_funnel(accounts: list[SourceAccount], path: Path) -> None:
    labels, values = [], []
    for account in accounts:
        for stage, remaining in funnel(account):
            # funnel's first row is every record read, its "after read" row what the reader made documents of
            labels.append(f"{account.source}: {'records read' if stage == 'read' else stage}")
            values.append(remaining)
    with figure(path, (8, 0.6 + 0.45 * len(STAGE_ORDER) * max(1, len(accounts)))) as ax:
        ax.barh(range(len(values)), values, color="#4c72b0")
        ax.set_yticks(range(len(values)), labels)
        ax.invert_yaxis()
        ax.set_xlabel("documents remaining")
        ax.set_title("Curation funnel")
        for i, value in enumerate(values):
            ax.text(value, i, f" {value:,}", va="center", fontsize=8)


def plot_languages(languages: dict[str, int], path: Path) -> None:
    items = list(languages.items())[:20]
    with figure(path, (8, 3.5)) as ax:
        ax.bar([k for k, _ in items], [v for _, v in items], color="#55a868")
        ax.set_ylabel("kept documents")
        ax.set_title("Language distribution (kept)")


def plot_lengths(lengths: list[int], path: Path) -> None:
    import numpy as np

    with figure(path, (8, 3.5)) as ax:
        if lengths:
            upper = max(max(lengths), 10)
            lower = max(1, min(lengths))  # from the shortest kept document, not from 10⁰
            ax.hist(lengths, bins=np.logspace(np.log10(lower), np.log10(upper) + 0.1, 40), color="#c44e52")
            ax.set_xscale("log")
        ax.set_xlabel("characters per kept document")
        ax.set_ylabel("documents")
        ax.set_title("Document length (kept)")
