"""The ``pipeline`` flow's run in one table: records read → documents kept → tokens → steps (report.md's
``## Run summary``), read from the flow's stage results."""

from __future__ import annotations

from typing import Any

from pipeline.shards.format import ShardManifest
from pipeline.wording import number


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
                lines.append(f"| {name.replace('_', ' ')} | {number(amount)} |")
            continue
        shown = number(value, 3) if key == "final_loss" else number(value)
        lines.append(f"| {key.replace('_', ' ')} | {shown} |")
    return "\n".join(lines) + "\n"
