"""The curation section of the run report (``## Curation``) and its Prefect artifact (``curation-funnel``): the
warnings, the per-source table, input files, the funnel, PII replacements, the kept documents and example drops."""

from __future__ import annotations

from typing import Any

from pipeline.accounting import SourceAccount
from pipeline.curate.report.funnel import (
    RULE_ALIGN,
    RULE_COLUMNS,
    SOURCE_ALIGN,
    SOURCE_COLUMNS,
    funnel,
    rule_rows,
    source_rows,
    stage_rows,
    stage_table,
)
from pipeline.curate.report.inputs import input_files_lines
from pipeline.curate.report.kept import kept_document_stats, length_quantiles
from pipeline.curate.report.plots import plot_funnel, plot_languages, plot_lengths
from pipeline.curate.report.warn import curation_warnings
from pipeline.layout import RunLayout
from pipeline.markdown import markdown_table, md_code, md_url, printable
from pipeline.redact import cut_at_token


def funnel_markdown(summary: dict[str, Any]) -> str:
    """The curation summary (``curation_section``'s JSON) as the ``curation-funnel`` Prefect artifact: the warnings,
    the per-source table and every source's drops by rule; tables only (a relative image link would not render
    there)."""
    sources = summary["sources"]
    lines = [f"- ⚠ {w}" for w in summary.get("warnings") or []]
    lines += ["", *markdown_table(SOURCE_COLUMNS, SOURCE_ALIGN, source_rows(sources))]
    by_rule = [[s["source"], *row] for s in sources for row in rule_rows(s["dropped"], s["read"])]
    lines += ["", *markdown_table(("source", *RULE_COLUMNS), "|---|" + RULE_ALIGN[1:], by_rule), ""]
    stages = summary.get("stages") or {}
    for s in sources:  # the same per-stage tables as report.md's funnel
        if s["source"] in stages:
            lines += stage_table(s["source"], stages[s["source"]], s["read"], s["kept_final"])
    if summary.get("pii") is not None:
        lines += ["#### PII replacements by type", "", *pii_table(summary["pii"])]
    return "\n".join(lines).lstrip("\n")


def _example_line(row: dict[str, Any]) -> str:
    # examples are redacted (pipeline.accounting); cut at a space so no placeholder is halved
    snippet = printable(cut_at_token(" ".join(str(row.get("snippet") or "").split()), 160))
    score = row.get("score")
    parts = [md_code(row.get("id"))]
    if isinstance(score, (int, float)):
        parts.append(f"score {score:.3g}")
    if row.get("url"):
        parts.append(md_url(row["url"]))
    if row.get("duplicate_of"):
        parts.append(f"duplicate of {md_code(row['duplicate_of'])}")
    if row.get("read_error_detail") and not snippet:
        snippet = printable(cut_at_token(" ".join(str(row["read_error_detail"]).split()), 160))
    return f"  - {' · '.join(parts)}: {snippet or '(empty)'}"


def curation_section(
    layout: RunLayout,
    accounts: list[SourceAccount],
    warn_drop_share: float = 0.5,
    text_keys: dict[str, str] | None = None,
    index: str | None = None,
) -> tuple[str, dict[str, Any]]:
    """Markdown and JSON for the curation part of the report; writes the three plots.

    ``warn_drop_share``, ``text_keys`` (source → its ``options.text_key``) and ``index`` (the persistent dedup
    index the recipe compares with, if any) shape ``curation_warnings``.
    """
    layout.plots.mkdir(parents=True, exist_ok=True)
    kept = kept_document_stats([layout.final_documents(a.source) for a in accounts])
    plot_funnel(accounts, layout.plots / "funnel.png")
    plot_languages(kept["languages"], layout.plots / "languages.png")
    plot_lengths(kept["lengths"], layout.plots / "doc_length.png")
    warnings = curation_warnings(accounts, warn_drop_share, text_keys, index)

    lines = ["## Curation", ""]
    if warnings:
        lines += ["### Warnings", ""] + [f"- ⚠ {w}" for w in warnings] + [""]
    lines += [
        "Documents: every document read is kept or dropped with (stage, rule, score): read = kept + dropped.",
        "",
        *markdown_table(SOURCE_COLUMNS, SOURCE_ALIGN, source_rows([a.to_json() for a in accounts])),
    ]
    lines += input_files_lines(accounts)
    lines += _funnel_lines(accounts)
    lines += _pii_lines(accounts)
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
            lines += [_example_line(row) for row in rows]
    payload = {
        "sources": [a.to_json() for a in accounts],
        "funnel": {a.source: funnel(a) for a in accounts},
        "stages": {a.source: stage_rows(a) for a in accounts},
        "pii": {a.source: a.pii for a in accounts},
        "pii_totals": {a.source: sum(a.pii.values()) for a in accounts},  # the table's "total" column
        "warnings": warnings,
        "languages": kept["languages"],
        "documents_sampled": kept["documents_sampled"],
        "length_quantiles": length_quantiles(lengths),
    }
    return "\n".join(lines) + "\n", payload


def _funnel_lines(accounts: list[SourceAccount]) -> list[str]:
    """The ``### Funnel`` part: per source, documents in → out per stage and drops by rule."""
    lines: list[str] = []
    lines += ["", "### Funnel", "", "![funnel](plots/funnel.png)", ""]
    for a in accounts:
        lines += stage_table(a.source, stage_rows(a), a.read, a.kept_final)
        lines += [f"#### {a.source}: drops by rule", ""]
        if a.dropped:
            lines += markdown_table(RULE_COLUMNS, RULE_ALIGN, rule_rows(a.dropped, a.read))
        else:
            lines.append("nothing dropped")
        lines.append("")
    return lines


def _pii_lines(accounts: list[SourceAccount]) -> list[str]:
    """The ``### PII replacements by type`` table."""
    return ["### PII replacements by type", "", *pii_table({a.source: a.pii for a in accounts}), ""]


def pii_table(pii: dict[str, dict[str, int]]) -> list[str]:
    """Placeholders by type per source (``curation.pii`` of report.json)."""
    pii_types = sorted(
        {t for counts in pii.values() for t in counts}, key=lambda t: (-sum(c.get(t, 0) for c in pii.values()), t)
    )
    if not pii_types:
        return ["no PII replaced (or the pii stage is off)"]
    lines = [
        "Placeholders the pii stage wrote, by type (text and metadata, URLs included; counted before dedup).",
        "",
        "| source | " + " | ".join(pii_types) + " | total |",
        "|---|" + "---:|" * (len(pii_types) + 1),
    ]
    for source, counts in pii.items():
        cells = " | ".join(f"{counts.get(t, 0):,}" for t in pii_types)
        lines.append(f"| {source} | {cells} | {sum(counts.values()):,} |")
    return lines
