"""The curation funnel: documents remaining after each stage in pipeline order, the in → out row of every stage
(which adds up, routing included), and the per-source and per-rule tables report.md, the ``curation-funnel``
artifact and ``tokenmill curate`` show alike."""

from __future__ import annotations

from typing import Any

from pipeline.accounting import SourceAccount
from pipeline.wording import pct

#: pipeline order (pipeline/curate/build.py); classify's top_percent pass runs after dedup but its drops carry stage
#: classify, so they are counted there
STAGE_ORDER = ["read", "extract", "language", "quality", "classify", "toxicity", "decontaminate", "pii", "dedup"]
#: stages off by default: a funnel row only when they dropped something (a run without them shows no 0 rows)
OPTIONAL_STAGES = frozenset({"classify", "toxicity", "decontaminate", "dedup"})


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


def stages_in(dropped: dict[str, Any]) -> list[str]:
    """The stages of a ``stage -> rule -> count`` mapping in pipeline order, unknown stages last (sorted)."""
    return [s for s in STAGE_ORDER if s in dropped] + sorted(set(dropped) - set(STAGE_ORDER))


#: the per-source table of a curation run: report.md, the ``curation-funnel`` artifact and ``tokenmill curate``
SOURCE_COLUMNS = ("source", "read", "kept", "kept %", "dropped", "balanced")
SOURCE_ALIGN = "|---|---:|---:|---:|---:|:-:|"
#: a source's drops by rule (report.md's per-source table; the artifact adds a source column)
RULE_COLUMNS = ("stage", "rule", "dropped", "% of read")
RULE_ALIGN = "|---|---|---:|---:|"


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
        for stage in stages_in(dropped)
        for rule, count in sorted(dropped[stage].items(), key=lambda kv: -kv[1])
    ]


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
