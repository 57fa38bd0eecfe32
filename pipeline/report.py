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
from pipeline.layout import RunLayout
from pipeline.markdown import md_code, md_text, md_url
from pipeline.redact import cut_at_token
from pipeline.shards.format import ShardManifest
from pipeline.wording import index_hint, missing_text_warning, pct

#: pipeline order (pipeline/curate/build.py); classify's top_percent pass runs after dedup but its drops carry stage
#: classify, so they are counted there
STAGE_ORDER = ["read", "extract", "language", "quality", "classify", "toxicity", "decontaminate", "pii", "dedup"]
#: stages off by default: a funnel row only when they dropped something (a run without them shows no 0 rows)
OPTIONAL_STAGES = frozenset({"classify", "toxicity", "decontaminate", "dedup"})
MAX_DOCS_FOR_HISTOGRAMS = 200_000


def funnel(account: SourceAccount) -> list[tuple[str, int]]:
    """Documents remaining after each stage, in pipeline order, starting with everything read."""
    extra_stages = sorted(set(account.dropped) - set(STAGE_ORDER))
    stages = [s for s in STAGE_ORDER if s not in OPTIONAL_STAGES or s in account.dropped] + extra_stages
    remaining = account.read
    rows = [("read", remaining)]
    routing_out, routing_in = account.routed_total, account.routed_in_total

    def route() -> None:
        # routed documents move between sources at the end of curation, before dedup: those routed out leave,
        # those other sources' classifiers routed in (they passed their crawl's stages) join
        nonlocal remaining, routing_out, routing_in
        if routing_out:
            remaining -= routing_out
            rows.append(("routed out", remaining))
        if routing_in:
            remaining += routing_in
            rows.append(("routed in", remaining))
        routing_out = routing_in = 0

    for stage in stages:
        if stage == "dedup":
            route()
        remaining -= sum(account.dropped.get(stage, {}).values())
        rows.append((f"after {stage}", remaining))
    route()
    return rows


def kept_document_stats(folders: list[Path]) -> dict[str, Any]:
    """Language counts and length (characters) of kept documents, from at most 200k documents."""
    languages: Counter[str] = Counter()
    lengths: list[int] = []
    seen = 0
    for folder in folders:
        for path in sorted(folder.glob("**/*.jsonl.gz")):  # with routed-from-<origin>/ folders
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


def _plot_funnel(accounts: list[SourceAccount], path: Path) -> None:
    labels, values = [], []
    for account in accounts:
        for stage, remaining in funnel(account):
            # funnel's first row is every record read, its "after read" row what the reader made documents of
            labels.append(f"{account.source}: {'records read' if stage == 'read' else stage}")
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
            lower = max(1, min(lengths))  # from the shortest kept document, not from 10⁰
            ax.hist(lengths, bins=np.logspace(np.log10(lower), np.log10(upper) + 0.1, 40), color="#c44e52")
            ax.set_xscale("log")
        ax.set_xlabel("characters per kept document")
        ax.set_ylabel("documents")
        ax.set_title("Document length (kept)")


def stage_rows(account: SourceAccount) -> list[dict[str, Any]]:
    """Documents into and out of each stage (``funnel`` order), so that every row adds up:
    ``in − dropped + routed_in − routed_out = out`` (the routing rows move documents between sources and drop
    none)."""
    rows, previous = [], account.read
    for label, remaining in funnel(account)[1:]:
        stage = label.removeprefix("after ")
        row = {"stage": stage, "in": previous, "out": remaining, "dropped": 0, "routed_in": 0, "routed_out": 0}
        if label == "routed in":
            row["routed_in"] = remaining - previous
        elif label == "routed out":
            row["routed_out"] = previous - remaining
        else:
            row["dropped"] = previous - remaining
        rows.append(row)
        previous = remaining
    return rows


def _signed_routing(row: dict[str, Any]) -> str:
    if row["routed_in"]:
        return f"+{row['routed_in']:,}"
    if row["routed_out"]:
        return f"−{row['routed_out']:,}"
    return ""


def curation_warnings(
    accounts: list[SourceAccount],
    warn_drop_share: float = 0.5,
    text_keys: dict[str, str] | None = None,
    index: str | None = None,
) -> list[str]:
    """What a run should say loudly at its end: a rule that drops more than ``warn_drop_share`` of a source
    (``missing_text`` for every document also names the fields seen and the key to set), a source that kept
    nothing, input files skipped by extension (per extension) and empty input files."""
    warnings: list[str] = []
    for a in accounts:
        key = (text_keys or {}).get(a.source, "text")
        if a.read and a.kept_final == 0:
            duplicates = sum(a.dropped.get("dedup", {}).values())
            why = f" ({duplicates:,} as duplicates){index_hint(index)}" if duplicates else ""
            warnings.append(f"{a.source}: nothing kept: all {a.read:,} documents read were dropped{why}")
        for stage in _stage_order(a):
            for rule, n in sorted(a.dropped[stage].items(), key=lambda kv: -kv[1]):
                if not a.read or n / a.read <= warn_drop_share:
                    continue
                if rule == "missing_text":
                    how = (
                        "set options.text_key on the source to the field holding the text "
                        "(curate --input: --text-key FIELD)"
                    )
                    warnings.append(missing_text_warning(a.source, n, a.read, key, list(a.missing_text_fields), how))
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
        reasons = files.get("skipped_by_reason") or {}
        if reasons:
            warnings.append(
                f"{a.source}: {sum(reasons.values()):,} input files skipped without being opened "
                f"({_reasons(reasons)}): not read, not documents (see docs/readers.md)"
            )
        if files.get("empty"):
            warnings.append(f"{a.source}: {files['empty']:,} input files are empty (no record in them)")
    return warnings


def _ext(ext: str) -> str:
    return "(no extension)" if ext == "none" else f".{ext}"


#: how the report names a reason a listed file was not opened (``pipeline.read.listing``)
SKIP_REASONS = {"run_output": "inside a run folder", "broken_symlink": "broken symlink"}


def _reasons(reasons: dict[str, int]) -> str:
    """``fifo 1, inside a run folder 3``: the files skipped without being opened, by reason."""
    ordered = sorted(reasons.items(), key=lambda kv: -kv[1])
    return ", ".join(f"{SKIP_REASONS.get(reason, reason.replace('_', ' '))} {n:,}" for reason, n in ordered)


def _stage_order(account: SourceAccount) -> list[str]:
    return _stages_in(account.dropped)


def _stages_in(dropped: dict[str, Any]) -> list[str]:
    """The stages of a ``stage -> rule -> count`` mapping in pipeline order, unknown stages last (sorted)."""
    return [s for s in STAGE_ORDER if s in dropped] + sorted(set(dropped) - set(STAGE_ORDER))


#: the per-source table of a curation run: report.md, the ``curation-funnel`` artifact and ``tokenmill curate``
SOURCE_COLUMNS = ("source", "read", "kept", "kept %", "dropped", "balanced")
SOURCE_ALIGN = "|---|---:|---:|---:|---:|:-:|"
#: a source's drops by rule (report.md's per-source table; the artifact adds a source column)
RULE_COLUMNS = ("stage", "rule", "dropped", "% of read")
RULE_ALIGN = "|---|---|---:|---:|"


def markdown_table(columns: tuple[str, ...], align: str, rows: list[list[str]]) -> list[str]:
    """A markdown table as lines: the header, the ``align`` row (e.g. ``|---|---:|``), one line per row of cells."""
    return ["| " + " | ".join(columns) + " |", align, *("| " + " | ".join(row) + " |" for row in rows)]


def source_rows(sources: list[dict[str, Any]]) -> list[list[str]]:
    """The ``SOURCE_COLUMNS`` cells of each source (``SourceAccount.to_json`` dicts, as the curation summary holds
    them): the one rendering of read / kept / dropped / balanced that report.md, the artifact and the CLI show."""
    return [
        [
            s["source"],
            f"{s['read']:,}",
            f"{s['kept_final']:,}",
            pct(s["kept_final"], s["read"]),
            f"{s['dropped_total']:,}",
            "✓" if s["balanced"] else "✗",
        ]
        for s in sources
    ]


def rule_rows(dropped: dict[str, dict[str, int]], read: int) -> list[list[str]]:
    """The ``RULE_COLUMNS`` cells of one source's drops (``stage -> rule -> count``): stages in pipeline order,
    rules by count, most first."""
    return [
        [stage, rule, f"{count:,}", pct(count, read)]
        for stage in _stages_in(dropped)
        for rule, count in sorted(dropped[stage].items(), key=lambda kv: -kv[1])
    ]


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


def printable(text: str) -> str:
    """Control and other unprintable characters (a binary payload's snippet) shown as U+FFFD, so report.md
    stays a text file that viewers and ``grep`` treat as text."""
    return "".join(ch if ch.isprintable() or ch == " " else "\ufffd" for ch in text)


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
    _plot_funnel(accounts, layout.plots / "funnel.png")
    _plot_languages(kept["languages"], layout.plots / "languages.png")
    _plot_lengths(kept["lengths"], layout.plots / "doc_length.png")
    warnings = curation_warnings(accounts, warn_drop_share, text_keys, index)

    lines = ["## Curation", ""]
    if warnings:
        lines += ["### Warnings", ""] + [f"- ⚠ {w}" for w in warnings] + [""]
    lines += [
        "Documents: every document read is kept or dropped with (stage, rule, score): read = kept + dropped.",
        "",
        *markdown_table(SOURCE_COLUMNS, SOURCE_ALIGN, source_rows([a.to_json() for a in accounts])),
    ]
    lines += _input_files_lines(accounts)
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
        "length_quantiles": _quantiles(lengths),
    }
    return "\n".join(lines) + "\n", payload


def _input_files_lines(accounts: list[SourceAccount]) -> list[str]:
    """The ``### Input files`` table: files listed, with documents, empty, skipped by extension."""
    lines: list[str] = []
    lines += [
        "",
        "### Input files",
        "",
        "Files, not documents: a skipped or empty file adds nothing to read; listed = with documents + skipped "
        "+ empty. Skipped unopened: not a regular file (FIFO, socket, device, broken symlink) or inside a run "
        "folder; symlinks to regular files and names that are not UTF-8 (shown escaped) are read.",
        "",
        "| source | listed | with documents | empty | skipped by extension | skipped unopened | symlinks "
        "| non-UTF-8 names |",
        "|---|---:|---:|---:|---|---|---:|---:|",
    ]
    for a in accounts:
        files = a.input_files or {}
        if not files:  # a datasets split: the reader lists no files
            lines.append(f"| {a.source} | — | — | — | — | — | — | — |")
            continue
        skipped = files.get("skipped_by_extension") or {}
        skipped_txt = ", ".join(f"{_ext(e)} {n:,}" for e, n in sorted(skipped.items(), key=lambda kv: -kv[1]))
        reasons_txt = _reasons(files.get("skipped_by_reason") or {})
        lines.append(
            f"| {a.source} | {files.get('listed', 0):,} | {files.get('with_documents', 0):,} |"
            f" {files.get('empty', 0):,} | {skipped_txt or '—'} | {reasons_txt or '—'} |"
            f" {files.get('symlinks_followed', 0):,} | {files.get('undecodable_names', 0):,} |"
        )
    return lines


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


def stage_table(source: str, rows: list[dict[str, Any]], read: int, kept_final: int) -> list[str]:
    """One source's documents in → out per stage (``stage_rows``, or their JSON in report.json)."""
    lines = [
        f"#### {source}: documents in → out per stage",
        "",
        "Stage read: records a reader could not turn into documents (read errors).",
        "",
        "| stage | in | dropped | routed | out | out % of read |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row['stage']} | {row['in']:,} | {row['dropped']:,} | {_signed_routing(row)} | {row['out']:,} "
            f"| {pct(row['out'], read)} |"
        )
    if kept_final != (rows[-1]["out"] if rows else read):
        lines.append(f"| kept (counted) | | | | {kept_final:,} | {pct(kept_final, read)} |")
    return lines + [""]


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


_DECILES = (("p10", 0.1), ("p50", 0.5), ("p90", 0.9))
_TOXICITY_QUANTILES = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99))  # the tail is what matters there


def pick_quantiles(sorted_values: list, points: tuple[tuple[str, float], ...] = _DECILES) -> dict[str, Any]:
    """The value at each ``(name, fraction)`` of an ascending list (the lower one, no interpolation); ``{}`` for
    an empty list. The report's length, classifier-score and toxicity-score quantiles all come from here."""
    n = len(sorted_values)
    return {name: sorted_values[min(n - 1, int(f * n))] for name, f in points} if n else {}


def _quantiles(sorted_values: list[int]) -> dict[str, int]:
    return {**pick_quantiles(sorted_values), "max": sorted_values[-1]} if sorted_values else {}


def _drops_cell(dropped: dict[str, int]) -> str:
    """A table cell ``rule: documents, ...`` (rules in name order), or ``—``."""
    return ", ".join(f"{rule}: {n:,}" for rule, n in sorted(dropped.items())) or "—"


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


def _scan_kept(folders: list[Path], limit: int = MAX_DOCS_FOR_HISTOGRAMS):
    """The metadata of up to ``limit`` documents in ``folders`` (for the classify and decontamination sections)."""
    seen = 0
    for folder in folders:
        for path in sorted(folder.glob("**/*.jsonl.gz")) if folder.is_dir() else []:
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                for line in handle:
                    if seen >= limit:
                        return
                    if line.strip():
                        seen += 1
                        yield json.loads(line).get("metadata") or {}


def classify_summary(
    layout: RunLayout,
    accounts: list[SourceAccount],
    modes: dict[str, str],
    top_percent: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Per classifier (``modes``: name → mode): its drops by rule, score quantiles of the kept documents (at most
    200k read), and the ``top_percent`` pass's cutoff and counts (``pipeline.classify.top_percent``)."""
    kept_scores: dict[str, list[float]] = {name: [] for name in modes}
    for metadata in _scan_kept([layout.final_documents(a.source) for a in accounts]):
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
        drops = _drops_cell(entry.get("dropped", {}))
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


def toxicity_summary(layout: RunLayout, accounts: list[SourceAccount]) -> dict[str, Any]:
    """Per source: documents dropped by rule, the kept documents' toxicity scores (p50, p90, p99 of at most 200k
    read) and how many kept one toxic paragraph or more, and the documents kept unscored (``toxicity_skipped_*``:
    a language the scorer does not read; ``toxicity_language_unknown``: scored, no language to check)."""
    out: dict[str, Any] = {}
    for a in accounts:
        scores, with_toxic_paragraph = [], 0
        for metadata in _scan_kept([layout.final_documents(a.source)]):
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
        out[a.source] = {
            "dropped": dropped,
            "kept_scored": len(scores),
            "kept_score_quantiles": quantiles,
            "kept_with_toxic_paragraph": with_toxic_paragraph,
            "skipped": skipped,
        }
    return {"sources": out}


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
        drops = _drops_cell(e["dropped"])
        skipped = ", ".join(f"{k.removeprefix('toxicity_')}: {n:,}" for k, n in e["skipped"].items()) or "—"
        lines.append(
            f"| {source} | {drops} | {e['kept_scored']:,} | {q.get('p50', '—')} | {q.get('p90', '—')} |"
            f" {q.get('p99', '—')} | {e['kept_with_toxic_paragraph']:,} | {skipped} |"
        )
    return "\n".join(lines) + "\n"


def decontamination_summary(
    layout: RunLayout, accounts: list[SourceAccount], cut_mode: bool = True, top_items: int = 5
) -> dict[str, Any]:
    """Contamination per eval set: documents dropped and cut, matches, the items matched most often.

    Drops come from ``dropped/<source>/decontaminate/`` (their rows name the eval set and the item), cut
    documents from the kept documents' ``metadata.decontaminate`` (at most 200k read; only when a source
    decontaminates in ``cut_mode``), the item counts of each
    set from the run's index card (``stages/decontaminate/eval-index-*.json``).
    """
    sets: dict[str, dict[str, Any]] = {}
    items: dict[str, Counter[str]] = {}

    def entry(name: str) -> dict[str, Any]:
        items.setdefault(name, Counter())
        return sets.setdefault(name, {"documents_dropped": 0, "documents_cut": 0, "matches": 0})

    for card_path in sorted(layout.stage_dir("decontaminate").glob("eval-index-*.json")):
        card = json.loads(card_path.read_text(encoding="utf-8"))
        for name, counts in (card.get("eval_sets") or {}).items():
            entry(name).update({k: counts[k] for k in ("items", "indexed", "too_short") if k in counts})
    for a in accounts:
        for path in sorted((layout.dropped(a.source) / "decontaminate").glob("*.jsonl.gz")):
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                for line in handle:
                    row = json.loads(line)
                    if row.get("eval_set"):  # mode drop: one set, its first item; score = matched windows
                        e = entry(str(row["eval_set"]))
                        e["documents_dropped"] += 1
                        e["matches"] += int(row.get("score") or 0)
                        items[str(row["eval_set"])][str(row.get("item"))] += 1
                    for name, item in (row.get("eval_sets") or {}).items():  # mode cut, dropped after cutting
                        e = entry(name)
                        e["documents_dropped"] += 1
                        e["matches"] += int((row.get("matches") or {}).get(name, 0))
                        items[name][str(item)] += 1
    for metadata in _scan_kept([layout.curated(a.source) for a in accounts]) if cut_mode else ():
        cut = metadata.get("decontaminate")
        if not isinstance(cut, dict):
            continue
        for name, item in (cut.get("eval_sets") or {}).items():
            e = entry(name)
            e["documents_cut"] += 1
            e["matches"] += int((cut.get("matches") or {}).get(name, 0))
            items[name][str(item)] += 1
    for name, e in sets.items():
        e["top_items"] = [[item, n] for item, n in items[name].most_common(top_items)]
    return {"eval_sets": sets}


def decontamination_markdown(summary: dict[str, Any]) -> str:
    """The decontamination section (report.md and the Prefect artifact ``decontamination``)."""
    lines = [
        "## Decontamination",
        "",
        "Per eval set: items indexed (of those read; shorter than min_item_words: ignored), documents dropped or "
        "cut for sharing an n-gram window with it, matched windows, and the items matched in most documents.",
        "",
        "| eval set | items | indexed | documents dropped | documents cut | matches | top items (documents) |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for name, e in sorted(summary.get("eval_sets", {}).items()):
        top = ", ".join(f"{md_code(item, table=True)} {n:,}" for item, n in e.get("top_items", [])) or "—"
        lines.append(
            f"| {md_text(name)} | {_num(e.get('items'))} | {_num(e.get('indexed'))} | {e['documents_dropped']:,} |"
            f" {e['documents_cut']:,} | {e['matches']:,} | {top} |"
        )
    return "\n".join(lines) + "\n"


def _num(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else "—"


def routed_section(
    accounts: list[dict[str, Any]], manifest: ShardManifest | None = None
) -> tuple[str, dict[str, Any]] | None:
    """The "Routed" section (classify ``mode: route``): per crawl, the documents and tokens it contributed to each
    domain source; ``None`` when nothing is routed in this run.

    ``accounts``: the curation section's ``sources`` (``SourceAccount.to_json``); documents are those routed
    (counted at curation, before dedup). ``manifest``: the shards manifest, whose
    ``sources.<target>.routed_from.<origin>`` gives the documents and tokens that reached tokenize (after dedup).
    """
    tokenized_by = {name: entry.routed_from for name, entry in manifest.sources.items()} if manifest else {}
    rows = []
    by_name = {a["source"]: a for a in accounts}
    for origin in accounts:
        for target, routed in sorted((origin.get("routed") or {}).items()):
            entry: dict[str, Any] = {
                "origin": origin["source"],
                "target": target,
                "read": origin["read"],
                "routed": routed,
                "share_of_read": round(routed / origin["read"], 6) if origin["read"] else 0.0,
                "target_kept": (by_name.get(target) or {}).get("kept_final"),
            }
            tokenized = tokenized_by.get(target, {}).get(origin["source"])
            if tokenized is not None:
                entry["tokenized_documents"] = tokenized.documents
                entry["tokens"] = tokenized.tokens
            rows.append(entry)
    if not rows:
        return None
    with_tokens = manifest is not None
    lines = [
        "## Routed" + (" (tokens)" if with_tokens else ""),
        "",
        "Documents a crawl's classifier routed into a domain source (classify `mode: route`): they passed the crawl's"
        " own stages and count as the target's documents from then on (its dedup priority, mix weight and held-out"
        " split); the crawl's account is read = kept + routed + dropped.",
        "",
    ]
    if with_tokens:
        lines += [
            "| crawl | into | routed | % of read | documents tokenized | tokens (train + held out) |",
            "|---|---|---:|---:|---:|---:|",
        ]
        lines += [
            f"| {r['origin']} | {r['target']} | {r['routed']:,} | {pct(r['routed'], r['read'])} |"
            f" {r.get('tokenized_documents', 0):,} | {r.get('tokens', 0):,} |"
            for r in rows
        ]
        for r in rows:  # routed at curation, counted again at tokenize: what fell between is dedup's
            lost = r["routed"] - r.get("tokenized_documents", 0)
            if lost > 0:
                r["not_tokenized"] = lost
                lines += [
                    "",
                    f"{lost:,} of the {r['routed']:,} documents {r['origin']} routed into {r['target']} did not reach "
                    "the shards: dedup dropped them as duplicates (a domain source's own copy wins by its priority), "
                    "or tokenize skipped them (see the Deduplication and Shards sections).",
                ]
    else:
        lines += ["| crawl | into | routed | % of read |", "|---|---|---:|---:|"]
        lines += [f"| {r['origin']} | {r['target']} | {r['routed']:,} | {pct(r['routed'], r['read'])} |" for r in rows]
    return "\n".join(lines) + "\n", {"rows": rows}


#: the per-source table of a shard manifest: report.md's ``shards`` section, the ``token-mix`` artifact (the
#: ``pipeline`` and the ``tokenize`` flows) and ``tokenmill tokenize`` / ``shards inspect``
SHARD_COLUMNS = (
    "source",
    "train tokens (unique)",
    "train tokens (mixed)",
    "repeats",
    "share requested → achieved",
    "held-out tokens",
    "documents train / held-out / mixed",
    "bytes/token",
)
SHARD_ALIGN = "|---|---:|---:|---:|---:|---:|---:|---:|"


def shard_rows(manifest: ShardManifest) -> list[list[str]]:
    """The ``SHARD_COLUMNS`` cells of each source of a shard manifest (``manifest.json``); absent figures as ``—``."""
    out = []
    for name, entry in manifest.sources.items():  # an entry that is not an object shows as a row of dashes
        tokens, docs = entry.tokens, entry.documents
        out.append(
            [
                name,
                _amount(tokens.train),
                _amount(tokens.mixed),
                _amount(entry.repeats, 2),
                f"{_share(entry.requested_share)} → {_share(entry.achieved_share)}",
                _amount(tokens.heldout),
                f"{_amount(docs.train)} / {_amount(docs.heldout)} / {_amount(docs.mixed)}",
                _amount(entry.bytes_per_token, 2),
            ]
        )
    return out


def shards_markdown(manifest: ShardManifest) -> str:
    """Tokens per source and split as a table, the mix's repeats explained, the tokenizer's warnings."""
    lines = ["## Token shards", "", f"dtype {manifest.dtype}, vocab {manifest.vocab_size:,}", ""]
    rows = shard_rows(manifest)
    if rows:
        lines += markdown_table(SHARD_COLUMNS, SHARD_ALIGN, rows)
        totals = manifest.totals
        if totals:
            lines.append(
                f"| **total** | | **{_amount(totals.train_tokens)}** | | |"
                f" **{_amount(totals.heldout_tokens)}** | {_amount(totals.train_documents)} (mixed) /"
                f" {_amount(totals.heldout_documents)} | |"
            )
        lines += [
            "",
            "Unique train tokens are the source's own documents in the train split; mixed tokens are what the "
            "train split holds after the mix. repeats = mixed / unique: above 1 the source is upsampled (its "
            "documents are written more than once — upsampled repeats are extra copies of the same documents, "
            "not new text), below 1 downsampled. Held-out documents are never mixed or repeated.",
            "",
        ]
    for warning in manifest.warnings:
        lines.append(f"- ⚠ {warning}")
    return "\n".join(lines) + "\n"


def _amount(value: Any, digits: int = 0) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "—" if value is None else str(value)
    return f"{value:,.{digits}f}"


def _share(value: Any) -> str:
    return f"{100 * value:.1f} %" if isinstance(value, (int, float)) else "—"


def funnel_numbers(results: dict[str, Any]) -> dict[str, Any]:
    """The ``pipeline`` flow's run in numbers: records read, documents kept and dropped, tokens, steps, loss
    (``results``: the flow's stage results by name: ``curation``, ``tokenize``, ``train``)."""
    curation = results.get("curation", {})
    sources = curation.get("sources", [])
    numbers: dict[str, Any] = {
        "records_read": sum(s["read"] for s in sources),
        "documents_kept": sum(s["kept_final"] for s in sources),
        "documents_dropped": sum(s["dropped_total"] for s in sources),
    }
    totals = ShardManifest.from_dict(results["tokenize"]).totals if results.get("tokenize") else None
    if totals:
        numbers["tokens"] = totals.to_json()
    train = results.get("train") or {}
    if train:
        numbers["trained_steps"] = train.get("step")
        numbers["final_loss"] = train.get("final_loss")
    return numbers


def run_summary(results: dict[str, Any]) -> str:
    """The run in one table: records read → documents kept → tokens → steps, numbers rounded."""
    numbers = funnel_numbers(results)
    lines = ["## Run summary", "", "| step | amount |", "|---|---:|"]
    for key, value in numbers.items():
        if key == "tokens" and isinstance(value, dict):
            for name, amount in value.items():
                lines.append(f"| {name.replace('_', ' ')} | {_amount(amount)} |")
            continue
        shown = _amount(value, 3) if key == "final_loss" else _amount(value)
        lines.append(f"| {key.replace('_', ' ')} | {shown} |")
    return "\n".join(lines) + "\n"
