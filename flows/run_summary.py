"""The ``pipeline`` flow's run in one table: records read → documents kept → tokens → steps (report.md's
``## Run summary``), read from the flow's stage results."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pipeline.shards.format import ShardManifest
from pipeline.wording import number


@dataclass(frozen=True)
class RunFunnel:
    """The ``pipeline`` flow's run in numbers (``funnel_numbers``). ``to_dict`` is report.json's
    ``summary.funnel``, in the key order it always had: tokens only when the run tokenized, steps and loss only
    when it trained."""

    records_read: int
    documents_kept: int
    documents_dropped: int
    tokens: dict[str, Any] | None = None  # the shards' totals (``ShardManifest.totals``), when the run tokenized
    trained: bool = False  # the run trained: ``trained_steps`` and ``final_loss`` are reported (None when unknown)
    trained_steps: int | None = None
    final_loss: float | None = None

    def to_dict(self) -> dict[str, Any]:
        numbers: dict[str, Any] = {
            "records_read": self.records_read,
            "documents_kept": self.documents_kept,
            "documents_dropped": self.documents_dropped,
        }
        if self.tokens is not None:
            numbers["tokens"] = self.tokens
        if self.trained:
            numbers["trained_steps"] = self.trained_steps
            numbers["final_loss"] = self.final_loss
        return numbers


def funnel_numbers(results: dict[str, Any]) -> RunFunnel:
    """The ``pipeline`` flow's run in numbers: records read, documents kept and dropped, tokens, steps, loss
    (``results``: the flow's stage results by name, as JSON: ``curation``, ``tokenize``, ``train``)."""
    curation = results.get("curation", {})
    sources = curation.get("sources", [])
    totals = ShardManifest.from_dict(results["tokenize"]).totals if results.get("tokenize") else None
    train = results.get("train") or {}
    return RunFunnel(
        records_read=sum(s["read"] for s in sources),
        documents_kept=sum(s["kept_final"] for s in sources),
        documents_dropped=sum(s["dropped_total"] for s in sources),
        tokens=totals.to_json() if totals else None,
        trained=bool(train),
        trained_steps=train.get("step"),
        final_loss=train.get("final_loss"),
    )


def run_summary(results: dict[str, Any]) -> str:
    """The run in one table: records read → documents kept → tokens → steps, numbers rounded."""
    numbers = funnel_numbers(results).to_dict()
    lines = ["## Run summary", "", "| step | amount |", "|---|---:|"]
    for key, value in numbers.items():
        if key == "tokens" and isinstance(value, dict):
            for name, amount in value.items():
                lines.append(f"| {name.replace('_', ' ')} | {number(amount)} |")
            continue
        shown = number(value, 3) if key == "final_loss" else number(value)
        lines.append(f"| {key.replace('_', ' ')} | {shown} |")
    return "\n".join(lines) + "\n"
