"""The toxicity stage's section of the run report (``## Toxicity``, the Prefect artifact ``toxicity``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from pipeline.accounting import SourceAccount
from pipeline.curate.report.kept import pick_quantiles, scan_kept
from pipeline.layout import RunLayout
from pipeline.wording import drops_cell

_TOXICITY_QUANTILES = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99))  # the tail is what matters there


@dataclass(frozen=True)
class SourceToxicity:
    """One source's toxicity figures in the report."""

    dropped: dict[str, int]  # rule -> documents
    kept_scored: int  # kept documents with a score (of at most 200k read)
    kept_score_quantiles: dict[str, float]  # p50, p90, p99 of their scores
    kept_with_toxic_paragraph: int  # kept documents with one toxic paragraph or more
    skipped: dict[str, int]  # toxicity_skipped_* / toxicity_language_unknown -> documents kept unscored


@dataclass(frozen=True)
class ToxicitySummary:
    """What ``toxicity_summary`` returns; ``to_dict`` is report.json's ``toxicity`` (``toxicity_markdown`` renders
    that JSON, as the flows' artifact does from the task's result)."""

    sources: dict[str, SourceToxicity]  # the sources that run the stage

    def to_dict(self) -> dict[str, Any]:
        return {"sources": {source: asdict(figures) for source, figures in self.sources.items()}}


def toxicity_summary(layout: RunLayout, accounts: list[SourceAccount]) -> ToxicitySummary:
    """Per source: documents dropped by rule, the kept documents' toxicity scores (p50, p90, p99 of at most 200k
    read) and how many kept one toxic paragraph or more, and the documents kept unscored (``toxicity_skipped_*``:
    a language the scorer does not read; ``toxicity_language_unknown``: scored, no language to check)."""
    out: dict[str, SourceToxicity] = {}
    for a in accounts:
        scores, with_toxic_paragraph = [], 0
        for metadata in scan_kept([layout.final_documents(a.source)]):
            value = metadata.get("toxicity")
            if isinstance(value, dict) and isinstance(value.get("score"), (int, float)):
                scores.append(float(value["score"]))
                with_toxic_paragraph += bool(value.get("toxic_paragraph_share"))
        dropped = dict(a.dropped.get("toxicity") or {})
        skipped = {k: n for k, n in a.skips.items() if k.startswith("toxicity_")}
        if not scores and not dropped and not skipped:
            continue  # the source does not run the stage
        scores.sort()
        quantiles = {q: round(v, 4) for q, v in pick_quantiles(scores, _TOXICITY_QUANTILES).items()}
        out[a.source] = SourceToxicity(
            dropped=dropped,
            kept_scored=len(scores),
            kept_score_quantiles=quantiles,
            kept_with_toxic_paragraph=with_toxic_paragraph,
            skipped=skipped,
        )
    return ToxicitySummary(out)


def toxicity_markdown(summary: dict[str, Any]) -> str:
    """The toxicity section (report.md and the Prefect artifact ``toxicity``)."""
    lines = [
        "## Toxicity",
        "",
        "Per source: documents dropped (whole-document score, or share of toxic paragraphs), the kept documents' "
        "scores, kept documents with at least one toxic paragraph, and documents kept unscored.",
        "",
        "| source | dropped (rule: documents) | kept scored | p50 | p90 | p99 | with a toxic paragraph | unscored |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for source, e in summary.get("sources", {}).items():
        q = e.get("kept_score_quantiles") or {}
        drops = drops_cell(e["dropped"])
        skipped = ", ".join(f"{k.removeprefix('toxicity_')}: {n:,}" for k, n in e["skipped"].items()) or "—"
        lines.append(
            f"| {source} | {drops} | {e['kept_scored']:,} | {q.get('p50', '—')} | {q.get('p90', '—')} |"
            f" {q.get('p99', '—')} | {e['kept_with_toxic_paragraph']:,} | {skipped} |"
        )
    return "\n".join(lines) + "\n"
