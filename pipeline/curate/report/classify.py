"""The classify stage's section of the run report (``## Classify``, the Prefect artifact ``classify-scores``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from pipeline.accounting import SourceAccount
from pipeline.curate.report.kept import pick_quantiles, scan_kept
from pipeline.layout import RunLayout
from pipeline.wording import drops_cell

if TYPE_CHECKING:  # only annotated: pipeline.run hands the pass's result in
    from pipeline.classify.top_percent import TopPercentCut, TopPercentResult


@dataclass(frozen=True)
class ClassifierScores:
    """One classifier's figures in the report."""

    mode: str  # the stage's mode (threshold, route, top_percent, …)
    kept_scored: int  # kept documents with its score (of at most 200k read)
    kept_score_quantiles: dict[str, float]  # their score deciles
    dropped: dict[str, int]  # rule -> documents
    top_percent: TopPercentCut | None = None  # the run-wide cut, for mode top_percent

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if self.top_percent is None:
            del data["top_percent"]
        return data


@dataclass(frozen=True)
class ClassifySummary:
    """What ``classify_summary`` returns; ``to_dict`` is report.json's ``classify`` (``classify_markdown`` renders
    that JSON, as the flows' artifact does from the task's result)."""

    classifiers: dict[str, ClassifierScores]

    def to_dict(self) -> dict[str, Any]:
        return {"classifiers": {name: scores.to_dict() for name, scores in self.classifiers.items()}}


def classify_summary(
    layout: RunLayout,
    accounts: list[SourceAccount],
    modes: dict[str, str],
    top_percent: TopPercentResult | None = None,
) -> ClassifySummary:
    """Per classifier (``modes``: name → mode): its drops by rule, score quantiles of the kept documents (at most
    200k read), and the ``top_percent`` pass's cutoff and counts (``pipeline.classify.top_percent``)."""
    kept_scores: dict[str, list[float]] = {name: [] for name in modes}
    for metadata in scan_kept([layout.final_documents(a.source) for a in accounts]):
        for name, value in (metadata.get("classify") or {}).items():
            if name in kept_scores and isinstance(value, (int, float)):
                kept_scores[name].append(float(value))
    out: dict[str, ClassifierScores] = {}
    for name, mode in modes.items():
        dropped: Counter[str] = Counter()
        for a in accounts:
            for rule, n in (a.dropped.get("classify") or {}).items():
                if rule.startswith(f"{name}_"):
                    dropped[rule] += n
        values = sorted(kept_scores[name])
        quantiles = {q: round(v, 4) for q, v in pick_quantiles(values).items()}
        cut = top_percent.classifiers.get(name) if top_percent is not None else None
        out[name] = ClassifierScores(mode, len(values), quantiles, dict(dropped), cut)
    return ClassifySummary(out)


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
