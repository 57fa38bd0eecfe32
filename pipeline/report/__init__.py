"""The run report: ``report.json`` (machine-readable), ``report.md`` and PNG plots under ``plots/``.

The report is built from sections, each rendered beside its stage: curation's funnel, warnings, kept documents
and example drops, and the classify, toxicity and decontaminate sections in ``pipeline.curate.report``; dedup's in
``pipeline.dedup.result``; the token shards in ``pipeline.tokenize.report``; the routed tokens in
``pipeline.report.routed``; the plan and training in ``training``. This module assembles them: ``write_report``
writes the first sections, later stages append theirs through ``add_section`` without knowing each other.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pipeline.layout import RunLayout


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
