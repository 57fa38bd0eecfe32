"""The run report: ``report.json`` (machine-readable), ``report.md`` and PNG plots under ``plots/``.

The report is built from sections. Curation contributes the funnel per stage and rule, the language
distribution, the document-length histogram and example drops; later stages (dedup, shards, plan,
training) add their own sections through ``add_section`` without knowing each other.
"""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pipeline.accounting import SourceAccount
from pipeline.base import cut_at_token
from pipeline.layout import RunLayout

STAGE_ORDER = ["read", "extract", "language", "quality", "toxicity", "pii", "dedup"]
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


def pct(part: float, whole: float) -> str:
    """``part`` as a percentage of ``whole``, rounded for reading (``—`` when ``whole`` is 0)."""
    if not whole:
        return "—"
    share = 100 * part / whole
    return f"{share:.0f} %" if share >= 99.95 or share == 0 else f"{share:.1f} %"


def stage_rows(account: SourceAccount) -> list[dict[str, Any]]:
    """Documents into and out of each stage, with the output as a share of what was read (``funnel`` order)."""
    rows, previous = [], account.read
    for label, remaining in funnel(account)[1:]:
        stage = label.removeprefix("after ")
        rows.append({"stage": stage, "in": previous, "out": remaining, "dropped": previous - remaining})
        previous = remaining
    return rows


def _fields_hint(account: SourceAccount) -> str:
    fields = ", ".join(account.missing_text_fields) or "none recorded"
    return f"fields seen in those rows: {fields}"


def curation_warnings(
    accounts: list[SourceAccount], warn_drop_share: float = 0.5, text_keys: dict[str, str] | None = None
) -> list[str]:
    """What a run should say loudly at its end: a rule that drops more than ``warn_drop_share`` of a source
    (``missing_text`` for every document also names the fields seen and the key to set), a source that kept
    nothing, input files skipped by extension (per extension) and empty input files."""
    warnings: list[str] = []
    for a in accounts:
        key = (text_keys or {}).get(a.source, "text")
        if a.read and a.kept_final == 0:
            warnings.append(f"{a.source}: nothing kept: all {a.read:,} documents read were dropped")
        for stage in _stage_order(a):
            for rule, n in sorted(a.dropped[stage].items(), key=lambda kv: -kv[1]):
                if not a.read or n / a.read <= warn_drop_share:
                    continue
                if rule == "missing_text":
                    every = "every document" if n == a.read else f"{n:,} of {a.read:,} documents ({pct(n, a.read)})"
                    warnings.append(
                        f"{a.source}: {every} read had no text field {key!r} (read/missing_text); "
                        f"{_fields_hint(a)}; set options.text_key on the source to the field holding the text "
                        "(curate --input: --text-key FIELD)"
                    )
                    continue
                warnings.append(
                    f"{a.source}: rule {stage}/{rule} dropped {n:,} of {a.read:,} documents ({pct(n, a.read)}), "
                    f"more than report.warn_drop_share {warn_drop_share:g}"
                )
        files = a.input_files or {}
        skipped = files.get("skipped_by_extension") or {}
        if skipped:
            listing = ", ".join(f"{_ext(ext)} {n:,}" for ext, n in sorted(skipped.items(), key=lambda kv: -kv[1]))
            warnings.append(
                f"{a.source}: {sum(skipped.values()):,} input files skipped by extension ({listing}): not read, "
                "not documents (see docs/readers.md for what each kind reads)"
            )
        if files.get("empty"):
            warnings.append(f"{a.source}: {files['empty']:,} input files are empty (no record in them)")
    return warnings


def _ext(ext: str) -> str:
    return "(no extension)" if ext == "none" else f".{ext}"


def _stage_order(account: SourceAccount) -> list[str]:
    return [s for s in STAGE_ORDER if s in account.dropped] + sorted(set(account.dropped) - set(STAGE_ORDER))


def printable(text: str) -> str:
    """Control and other unprintable characters (a binary payload's snippet) shown as U+FFFD, so report.md
    stays a text file that viewers and ``grep`` treat as text."""
    return "".join(ch if ch.isprintable() or ch == " " else "\ufffd" for ch in text)


def _example_line(row: dict[str, Any]) -> str:
    # examples are redacted (pipeline.accounting); cut at a space so no placeholder is halved
    snippet = printable(cut_at_token(" ".join(str(row.get("snippet") or "").split()), 160))
    score = row.get("score")
    parts = [f"`{row.get('id')}`"]
    if isinstance(score, (int, float)):
        parts.append(f"score {score:.3g}")
    if row.get("url"):
        parts.append(f"<{row['url']}>" if " " not in str(row["url"]) else str(row["url"]))
    if row.get("duplicate_of"):
        parts.append(f"duplicate of `{row['duplicate_of']}`")
    if row.get("read_error_detail") and not snippet:
        snippet = printable(cut_at_token(" ".join(str(row["read_error_detail"]).split()), 160))
    return f"  - {' · '.join(parts)}: {snippet or '(empty)'}"


def curation_section(
    layout: RunLayout,
    accounts: list[SourceAccount],
    warn_drop_share: float = 0.5,
    text_keys: dict[str, str] | None = None,
) -> tuple[str, dict[str, Any]]:
    """Markdown and JSON for the curation part of the report; writes the three plots.

    ``warn_drop_share`` and ``text_keys`` (source → its ``options.text_key``) shape ``curation_warnings``.
    """
    layout.plots.mkdir(parents=True, exist_ok=True)
    kept = kept_document_stats([layout.final_documents(a.source) for a in accounts])
    _plot_funnel(accounts, layout.plots / "funnel.png")
    _plot_languages(kept["languages"], layout.plots / "languages.png")
    _plot_lengths(kept["lengths"], layout.plots / "doc_length.png")
    warnings = curation_warnings(accounts, warn_drop_share, text_keys)

    lines = ["## Curation", ""]
    if warnings:
        lines += ["### Warnings", ""] + [f"- ⚠ {w}" for w in warnings] + [""]
    lines += [
        "Documents: every document read is kept or dropped with (stage, rule, score): read = kept + dropped.",
        "",
        "| source | read | kept | kept % | dropped | balanced |",
        "|---|---:|---:|---:|---:|:-:|",
    ]
    for a in accounts:
        lines.append(
            f"| {a.source} | {a.read:,} | {a.kept_final:,} | {pct(a.kept_final, a.read)} | {a.dropped_total:,} |"
            f" {'✓' if a.balanced else '✗'} |"
        )
    lines += [
        "",
        "### Input files",
        "",
        "Files, not documents: a skipped or empty file adds nothing to read; listed = with documents + skipped "
        "+ empty.",
        "",
        "| source | listed | with documents | empty | skipped by extension |",
        "|---|---:|---:|---:|---|",
    ]
    for a in accounts:
        files = a.input_files or {}
        if not files:  # a datasets split: the reader lists no files
            lines.append(f"| {a.source} | — | — | — | — |")
            continue
        skipped = files.get("skipped_by_extension") or {}
        skipped_txt = ", ".join(f"{_ext(e)} {n:,}" for e, n in sorted(skipped.items(), key=lambda kv: -kv[1]))
        lines.append(
            f"| {a.source} | {files.get('listed', 0):,} | {files.get('with_documents', 0):,} |"
            f" {files.get('empty', 0):,} | {skipped_txt or '—'} |"
        )
    lines += ["", "### Funnel", "", "![funnel](plots/funnel.png)", ""]
    for a in accounts:
        lines += [
            f"#### {a.source}: documents in → out per stage",
            "",
            "Stage read: records a reader could not turn into documents (read errors).",
            "",
            "| stage | in | dropped | out | out % of read |",
            "|---|---:|---:|---:|---:|",
        ]
        for row in stage_rows(a):
            lines.append(
                f"| {row['stage']} | {row['in']:,} | {row['dropped']:,} | {row['out']:,} | {pct(row['out'], a.read)} |"
            )
        if a.kept_final != (stage_rows(a)[-1]["out"] if stage_rows(a) else a.read):
            lines.append(f"| kept (counted) | | | {a.kept_final:,} | {pct(a.kept_final, a.read)} |")
        lines += ["", f"#### {a.source}: drops by rule", ""]
        if a.dropped:
            lines += ["| stage | rule | dropped | % of read |", "|---|---|---:|---:|"]
            for stage in _stage_order(a):
                for rule, count in sorted(a.dropped[stage].items(), key=lambda kv: -kv[1]):
                    lines.append(f"| {stage} | {rule} | {count:,} | {pct(count, a.read)} |")
        else:
            lines.append("nothing dropped")
        lines.append("")
    lines += ["### PII replacements by type", ""]
    pii_types = sorted({t for a in accounts for t in a.pii}, key=lambda t: -sum(a.pii.get(t, 0) for a in accounts))
    if pii_types:
        lines += [
            "Placeholders the pii stage wrote, by type (text and metadata, URLs included; counted before dedup).",
            "",
            "| source | " + " | ".join(pii_types) + " | total |",
            "|---|" + "---:|" * (len(pii_types) + 1),
        ]
        for a in accounts:
            cells = " | ".join(f"{a.pii.get(t, 0):,}" for t in pii_types)
            lines.append(f"| {a.source} | {cells} | {sum(a.pii.values()):,} |")
    else:
        lines.append("no PII replaced (or the pii stage is off)")
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
            lines += [_example_line(row) for row in rows]
    payload = {
        "sources": [a.to_json() for a in accounts],
        "funnel": {a.source: funnel(a) for a in accounts},
        "stages": {a.source: stage_rows(a) for a in accounts},
        "pii": {a.source: a.pii for a in accounts},
        "warnings": warnings,
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


def demote_headings(markdown: str, levels: int = 1) -> str:
    """Every ATX heading one level (or ``levels``) deeper, so a stage's own report nests under the run report's
    ``## <stage>`` heading; fenced code is left alone."""
    out, fenced = [], False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("#"):
            hashes = len(line) - len(line.lstrip("#"))
            if line[hashes : hashes + 1] in (" ", ""):
                line = "#" * min(6, hashes + levels) + line[hashes:]
        out.append(line)
    return "\n".join(out) + ("\n" if markdown.endswith("\n") else "")


def without_images(markdown: str) -> str:
    """Markdown for a Prefect artifact: image lines dropped, since a link relative to the run directory does
    not render in the UI (the run's report.md keeps them)."""
    image = re.compile(r"^\s*!\[[^\]]*\]\([^)]*\)\s*$")
    return "\n".join(line for line in markdown.splitlines() if not image.match(line)).strip() + "\n"


def rebase_images(markdown: str, prefix: str) -> str:
    """Relative image links of a markdown file in another folder, made relative to the folder above it
    (``![loss](plots/loss.png)`` → ``![loss](train/plots/loss.png)`` for ``prefix="train"``)."""

    def move(match: re.Match[str]) -> str:
        target = match.group(2)
        if "://" in target or target.startswith("/"):
            return match.group(0)
        return f"![{match.group(1)}]({prefix.rstrip('/')}/{target})"

    return re.sub(r"!\[([^\]]*)\]\(([^)\s]+)\)", move, markdown)


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
