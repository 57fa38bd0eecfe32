"""The run report: ``report.json`` (machine-readable), ``report.md`` and PNG plots under ``plots/``.

The report is built from sections. Curation contributes the funnel per stage and rule, the language
distribution, the document-length histogram and example drops; later stages (dedup, shards, plan,
training) add their own sections through ``add_section`` without knowing each other.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pipeline.accounting import SourceAccount
from pipeline.base import cut_at_token
from pipeline.layout import RunLayout

STAGE_ORDER = ["read", "extract", "language", "quality", "pii", "dedup"]
MAX_DOCS_FOR_HISTOGRAMS = 200_000


def funnel(account: SourceAccount) -> list[tuple[str, int]]:
    """Documents remaining after each stage, in pipeline order, starting with everything read."""
    extra_stages = sorted(set(account.dropped) - set(STAGE_ORDER))
    stages = [s for s in STAGE_ORDER if s != "dedup" or "dedup" in account.dropped] + extra_stages
    remaining = account.read
    rows = [("read", remaining)]
    for stage in stages:
        remaining -= sum(account.dropped.get(stage, {}).values())
        rows.append((f"after {stage}", remaining))
    return rows


def kept_document_stats(folders: list[Path]) -> dict[str, Any]:
    """Language counts and length (characters) of kept documents, from at most 200k documents."""
    languages: Counter[str] = Counter()
    lengths: list[int] = []
    seen = 0
    for folder in folders:
        for path in sorted(folder.glob("*.jsonl.gz")):
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                for line in handle:
                    if seen >= MAX_DOCS_FOR_HISTOGRAMS:
                        break
                    doc = json.loads(line)
                    languages[(doc.get("metadata") or {}).get("language", "unknown")] += 1
                    lengths.append(len(doc.get("text", "")))
                    seen += 1
    return {"documents_sampled": seen, "languages": dict(languages.most_common()), "lengths": lengths}


@contextmanager
def _figure(path: Path, size: tuple[float, float]):
    """A matplotlib axis on the headless Agg backend, saved to ``path`` and closed on exit."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=size)
    try:
        yield ax
        fig.tight_layout()
        fig.savefig(path, dpi=110)
    finally:
        plt.close(fig)


def _plot_funnel(accounts: list[SourceAccount], path: Path) -> None:
    labels, values = [], []
    for account in accounts:
        for stage, remaining in funnel(account):
            labels.append(f"{account.source}: {stage}")
            values.append(remaining)
    with _figure(path, (8, 0.6 + 0.45 * len(STAGE_ORDER) * max(1, len(accounts)))) as ax:
        ax.barh(range(len(values)), values, color="#4c72b0")
        ax.set_yticks(range(len(values)), labels)
        ax.invert_yaxis()
        ax.set_xlabel("documents remaining")
        ax.set_title("Curation funnel")
        for i, value in enumerate(values):
            ax.text(value, i, f" {value:,}", va="center", fontsize=8)


def _plot_languages(languages: dict[str, int], path: Path) -> None:
    items = list(languages.items())[:20]
    with _figure(path, (8, 3.5)) as ax:
        ax.bar([k for k, _ in items], [v for _, v in items], color="#55a868")
        ax.set_ylabel("kept documents")
        ax.set_title("Language distribution (kept)")


def _plot_lengths(lengths: list[int], path: Path) -> None:
    import numpy as np

    with _figure(path, (8, 3.5)) as ax:
        if lengths:
            upper = max(max(lengths), 10)
            ax.hist(lengths, bins=np.logspace(0, np.log10(upper) + 0.1, 40), color="#c44e52")
            ax.set_xscale("log")
        ax.set_xlabel("characters per kept document")
        ax.set_ylabel("documents")
        ax.set_title("Document length (kept)")


def curation_section(layout: RunLayout, accounts: list[SourceAccount]) -> tuple[str, dict[str, Any]]:
    """Markdown and JSON for the curation part of the report; writes the three plots."""
    layout.plots.mkdir(parents=True, exist_ok=True)
    kept = kept_document_stats([layout.final_documents(a.source) for a in accounts])
    _plot_funnel(accounts, layout.plots / "funnel.png")
    _plot_languages(kept["languages"], layout.plots / "languages.png")
    _plot_lengths(kept["lengths"], layout.plots / "doc_length.png")

    lines = ["## Curation", "", "| source | read | kept | dropped | balanced |", "|---|---:|---:|---:|:-:|"]
    for a in accounts:
        lines.append(
            f"| {a.source} | {a.read:,} | {a.kept_final:,} | {a.dropped_total:,} | {'✓' if a.balanced else '✗'} |"
        )
    lines += ["", "### Funnel", "", "![funnel](plots/funnel.png)", ""]
    for a in accounts:
        lines += [f"**{a.source}**", "", "| stage | rule | dropped |", "|---|---|---:|"]
        for stage in [s for s in STAGE_ORDER if s in a.dropped] + sorted(set(a.dropped) - set(STAGE_ORDER)):
            for rule, count in sorted(a.dropped[stage].items(), key=lambda kv: -kv[1]):
                lines.append(f"| {stage} | {rule} | {count:,} |")
        lines.append("")
    lines += ["### Kept documents", "", "![languages](plots/languages.png)", "", "![lengths](plots/doc_length.png)", ""]
    lengths = sorted(kept["lengths"])
    if lengths:
        lines.append(
            f"{kept['documents_sampled']:,} documents; median {lengths[len(lengths) // 2]:,} characters; "
            f"languages: " + ", ".join(f"{k} {v:,}" for k, v in list(kept["languages"].items())[:10])
        )
        lines.append("")
    lines += ["### Examples of dropped documents", ""]
    for a in accounts:
        for key, rows in sorted(a.examples.items()):
            lines.append(f"- **{a.source} · {key}**")
            for row in rows:
                # examples are redacted (pipeline.accounting); cut at a space so no placeholder is halved
                snippet = cut_at_token(" ".join(str(row.get("snippet") or "").split()), 160)
                score = row.get("score")
                score_txt = f" (score {score:.3g})" if isinstance(score, (int, float)) else ""
                lines.append(f"  - `{row.get('id')}`{score_txt}: {snippet or '(empty)'}")
    payload = {
        "sources": [a.to_json() for a in accounts],
        "funnel": {a.source: funnel(a) for a in accounts},
        "languages": kept["languages"],
        "documents_sampled": kept["documents_sampled"],
        "length_quantiles": _quantiles(lengths),
    }
    return "\n".join(lines) + "\n", payload


def _quantiles(sorted_values: list[int]) -> dict[str, int]:
    if not sorted_values:
        return {}
    pick = lambda q: sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]  # noqa: E731
    return {"p10": pick(0.1), "p50": pick(0.5), "p90": pick(0.9), "max": sorted_values[-1]}


def write_report(layout: RunLayout, title: str, sections: dict[str, tuple[str, dict[str, Any]]]) -> Path:
    """Write report.md and report.json from named sections (markdown, json payload)."""
    md = [f"# tokenmill run report: {title}", ""]
    payload: dict[str, Any] = {"title": title}
    for name, (section_md, section_json) in sections.items():
        md.append(section_md)
        payload[name] = section_json
    layout.report_md.write_text("\n".join(md), encoding="utf-8")
    layout.report_json.write_text(json.dumps(payload, indent=2, ensure_ascii=False, default=str), encoding="utf-8")
    return layout.report_md


def add_section(layout: RunLayout, name: str, section_md: str, section_json: dict[str, Any]) -> None:
    """Append a section to an existing report (used by later stages: dedup, shards, plan, train)."""
    payload = json.loads(layout.report_json.read_text(encoding="utf-8")) if layout.report_json.exists() else {}
    payload[name] = section_json
    layout.report_json.write_text(json.dumps(payload, indent=2, ensure_ascii=False, default=str), encoding="utf-8")
    existing = layout.report_md.read_text(encoding="utf-8") if layout.report_md.exists() else ""
    layout.report_md.write_text(existing.rstrip("\n") + "\n\n" + section_md, encoding="utf-8")
