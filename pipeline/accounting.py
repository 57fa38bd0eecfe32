"""Accounting: every document read is kept or dropped with (stage, rule, score), per source.

Two ledger steps bracket each source's curation pipeline: ``ReadLedger`` right after the reader and
``KeptLedger`` after the writer. Their counts come back through datatrove's per-rank stats files;
drop rows are counted from ``dropped/`` — an independent measurement, so a stage that loses a document
without a drop row makes ``read != kept + dropped`` and fails the run.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from datatrove.data import DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from pipeline.base import redact_row
from pipeline.layout import RunLayout

EXAMPLES_PER_RULE = 3


class ReadLedger(PipelineStep):
    """Counts every document (and read-error placeholder) a reader yields."""

    name = "📒 Ledger: read"
    type = "🧮 - TOKENMILL"

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        for doc in data:
            self.stat_update("read")
            yield doc


class KeptLedger(PipelineStep):
    """Counts every document that reached the end of the pipeline (after the writer)."""

    name = "📒 Ledger: kept"
    type = "🧮 - TOKENMILL"

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        for doc in data:
            self.stat_update("kept")
            yield doc


class AccountingError(RuntimeError):
    """``read != kept + dropped`` for some source: a document went missing."""


def ledger_totals(logs_dir: Path) -> dict[str, int]:
    """Sum the ledger counters over every rank's stats file in a datatrove logging dir."""
    totals: Counter[str] = Counter()
    for stats_file in sorted((logs_dir / "stats").glob("*.json")):
        for step in json.loads(stats_file.read_text()):
            # datatrove saves a step's name as "<type>: <name>"
            if str(step.get("name", "")).endswith((ReadLedger.name, KeptLedger.name)):
                for label, value in step.get("stats", {}).items():
                    totals[label] += int(value["total"] if isinstance(value, dict) else value)
    return dict(totals)


def iter_drop_rows(drops_dir: Path):
    for path in sorted(drops_dir.glob("*/*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    yield json.loads(line)


@dataclass
class SourceAccount:
    source: str
    read: int = 0
    kept_curated: int = 0
    kept_final: int = 0
    dropped: dict[str, dict[str, int]] = field(default_factory=dict)  # stage -> rule -> count
    examples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # "stage/rule" -> rows

    @property
    def dropped_total(self) -> int:
        return sum(sum(rules.values()) for rules in self.dropped.values())

    @property
    def balanced(self) -> bool:
        return self.read == self.kept_final + self.dropped_total

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["dropped_total"] = self.dropped_total
        data["balanced"] = self.balanced
        return data


def count_documents(folder: Path) -> int:
    total = 0
    for path in sorted(folder.glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            total += sum(1 for line in handle if line.strip())
    return total


def account_source(layout: RunLayout, source: str) -> SourceAccount:
    """Build one source's ledger from the run directory."""
    totals = ledger_totals(layout.logs("curate", source))
    account = SourceAccount(source=source, read=totals.get("read", 0), kept_curated=totals.get("kept", 0))
    dropped: dict[str, Counter[str]] = defaultdict(Counter)
    for row in iter_drop_rows(layout.dropped(source)):
        dropped[row["stage"]][row["rule"]] += 1
        key = f"{row['stage']}/{row['rule']}"
        examples = account.examples.setdefault(key, [])
        if len(examples) < EXAMPLES_PER_RULE:
            example = {k: row.get(k) for k in ("id", "url", "score", "snippet", "duplicate_of") if k in row}
            # drop rows are redacted when written; again here, so the report never depends on who wrote them
            examples.append(redact_row(example))
    account.dropped = {stage: dict(rules) for stage, rules in dropped.items()}
    deduped = layout.deduped(source)
    account.kept_final = count_documents(deduped) if deduped.is_dir() else account.kept_curated
    return account


def check_accounts(accounts: list[SourceAccount]) -> None:
    """Fail the run when any source does not balance, naming the source and the numbers."""
    broken = [a for a in accounts if not a.balanced]
    if broken:
        lines = [
            f"{a.source}: read {a.read} != kept {a.kept_final} + dropped {a.dropped_total}"
            f" (difference {a.read - a.kept_final - a.dropped_total})"
            for a in broken
        ]
        raise AccountingError("accounting does not balance:\n  " + "\n  ".join(lines))
