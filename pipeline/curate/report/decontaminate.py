"""The decontaminate stage's section of the run report (``## Decontamination``, the Prefect artifact
``decontamination``)."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from dataclasses import dataclass, fields
from typing import Any

from pipeline.accounting import SourceAccount
from pipeline.curate.report.kept import scan_kept
from pipeline.layout import RunLayout
from pipeline.markdown import md_code, md_text


@dataclass(frozen=True)
class EvalSetContamination:
    """One eval set's contamination in the report."""

    documents_dropped: int
    documents_cut: int
    matches: int  # matched n-gram windows
    top_items: list[list[Any]]  # [item, documents] of the items matched most often
    items: int | None = None  # the index card's counts (None: the set has no card in this run)
    indexed: int | None = None
    too_short: int | None = None  # items shorter than min_item_words, ignored

    def to_dict(self) -> dict[str, Any]:
        """The counts, the card's counts the card has, then the top items (the order the report always had)."""
        data: dict[str, Any] = {
            "documents_dropped": self.documents_dropped,
            "documents_cut": self.documents_cut,
            "matches": self.matches,
        }
        data.update({f.name: getattr(self, f.name) for f in fields(self)[4:] if getattr(self, f.name) is not None})
        data["top_items"] = self.top_items
        return data


@dataclass(frozen=True)
class DecontaminationSummary:
    """What ``decontamination_summary`` returns; ``to_dict`` is report.json's ``decontamination``
    (``decontamination_markdown`` renders that JSON, as the flows' artifact does from the task's result)."""

    eval_sets: dict[str, EvalSetContamination]

    def to_dict(self) -> dict[str, Any]:
        return {"eval_sets": {name: e.to_dict() for name, e in self.eval_sets.items()}}


def decontamination_summary(
    layout: RunLayout, accounts: list[SourceAccount], cut_mode: bool = True, top_items: int = 5
) -> DecontaminationSummary:
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
    for metadata in scan_kept([layout.curated(a.source) for a in accounts]) if cut_mode else ():
        cut = metadata.get("decontaminate")
        if not isinstance(cut, dict):
            continue
        for name, item in (cut.get("eval_sets") or {}).items():
            e = entry(name)
            e["documents_cut"] += 1
            e["matches"] += int((cut.get("matches") or {}).get(name, 0))
            items[name][str(item)] += 1
    return DecontaminationSummary(
        {
            name: EvalSetContamination(
                documents_dropped=e["documents_dropped"],
                documents_cut=e["documents_cut"],
                matches=e["matches"],
                top_items=[[item, n] for item, n in items[name].most_common(top_items)],
                items=e.get("items"),
                indexed=e.get("indexed"),
                too_short=e.get("too_short"),
            )
            for name, e in sets.items()
        }
    )


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
