"""The classify stage's section of the run report (``## Classify``, the Prefect artifact ``classify-scores``)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pipeline.accounting import SourceAccount
from pipeline.curate.report.kept import pick_quantiles, scan_kept
from pipeline.layout import RunLayout
from pipeline.wording import drops_cell


def classify_summary(
    layout: RunLayout,
    accounts: list[SourceAccount],
    modes: dict[str, str],
    top_percent: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Per classifier (``modes``: name → mode): its drops by rule, score quantiles of the kept documents (at most
    200k read), and the ``top_percent`` pass's cutoff and counts (``pipeline.classify.top_percent``)."""
    kept_scores: dict[str, list[float]] = {name: [] for name in modes}
    for metadata in scan_kept([layout.final_documents(a.source) for a in accounts]):
        for name, value in (metadata.get("classify") or {}).items():
            if name in kept_scores and isinstance(value, (int, float)):
                kept_scores[name].append(float(value))
    out: dict[str, Any] = {}
    for name, mode in modes.items():
        dropped: Counter[str] = Counter()
        for a in accounts:
            for rule, n in (a.dropped.get("classify") or {}).items():
                if rule.startswith(f"{name}_"):
                    dropped[rule] += n
        values = sorted(kept_scores[name])
        quantiles = {q: round(v, 4) for q, v in pick_quantiles(values).items()}
        entry: dict[str, Any] = {
            "mode": mode,
            "kept_scored": len(values),
            "kept_score_quantiles": quantiles,
            "dropped": dict(dropped),
        }
        if top_percent and name in top_percent.get("classifiers", {}):
            entry["top_percent"] = top_percent["classifiers"][name]
        out[name] = entry
    return {"classifiers": out}


def classify_markdown(summary: dict[str, Any]) -> str:
    """The classify section (report.md and the Prefect artifact ``classify-scores``)."""
    lines = [
        "## Classify",
        "",
        "Scores are P(positive) of each fastText classifier (metadata classify.<name>); quantiles over the kept "
        "documents.",
        "",
        "| classifier | mode | kept scored | p10 | p50 | p90 | dropped (rule: documents) |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for name, entry in summary.get("classifiers", {}).items():
        q = entry.get("kept_score_quantiles") or {}
        drops = drops_cell(entry.get("dropped", {}))
        lines.append(
            f"| {name} | {entry['mode']} | {entry['kept_scored']:,} | {q.get('p10', '—')} | {q.get('p50', '—')} |"
            f" {q.get('p90', '—')} | {drops} |"
        )
    cuts = {n: e["top_percent"] for n, e in summary.get("classifiers", {}).items() if e.get("top_percent")}
    if cuts:
        lines += [
            "",
            "top_percent: one cut over the whole run (every source and rank), after dedup; exactly "
            "round(n × top_percent / 100) of the n scored documents are kept, ties broken by a hash of the id.",
            "",
            "| classifier | top % | scored | kept | dropped | cutoff (lowest kept score) | kept per source |",
            "|---|---:|---:|---:|---:|---:|---|",
        ]
        for name, cut in cuts.items():
            per = ", ".join(f"{s} {v['kept']:,}/{v['scored']:,}" for s, v in cut.get("per_source", {}).items())
            cutoff = "—" if cut.get("cutoff") is None else f"{cut['cutoff']:.4f}"
            lines.append(
                f"| {name} | {cut['top_percent']:g} | {cut['scored']:,} | {cut['kept']:,} | {cut['dropped']:,} |"
                f" {cutoff} | {per or '—'} |"
            )
    return "\n".join(lines) + "\n"
