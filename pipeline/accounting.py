"""Accounting: every document read is kept, routed or dropped with (stage, rule, score), per source.

Two ledger steps bracket each source's curation pipeline: ``Ledger("read")`` right after the reader and
``Ledger("kept")`` after the writer. Their counts come back through datatrove's per-rank stats files;
drop rows are counted from ``dropped/`` — an independent measurement, so a stage that loses a document
without a drop row makes ``read != kept + dropped`` and fails the run. With classify ``mode: route`` a source
balances as ``read + routed_in = kept + routed + dropped``: ``routed`` is the route writer's count, ``routed_in``
the documents found in ``curated/<source>/routed-from-<origin>/``, and each origin's count must equal what its
target holds (``routing_problems``).
"""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from datatrove.data import DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from pipeline.errors import TokenmillError
from pipeline.layout import RunLayout
from pipeline.read.listing import NOT_REGULAR, RUN_OUTPUT, SYMLINKS, UNDECODABLE
from pipeline.redact import redact_row

EXAMPLES_PER_RULE = 3
EXAMPLE_KEYS = ("id", "url", "score", "snippet", "duplicate_of", "read_error_detail")


LEDGER_NAME = "📒 Ledger: {label}"
LEDGER_LABELS = ("read", "kept")


class Ledger(PipelineStep):
    """Counts every document that passes it under ``label``: ``Ledger("read")`` right after the reader (every
    document and read-error placeholder it yields), ``Ledger("kept")`` after the writer (what reached the end)."""

    type = "🧮 - TOKENMILL"

    def __init__(self, label: str):
        if label not in LEDGER_LABELS:
            raise ValueError(f"ledger label must be one of {', '.join(LEDGER_LABELS)}, not {label!r}")
        self.label = label
        self.name = LEDGER_NAME.format(label=label)  # before super().__init__: datatrove's Stats take the name there
        super().__init__()

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        for doc in data:
            self.stat_update(self.label)
            yield doc


class AccountingError(TokenmillError, RuntimeError):
    """``read != kept + dropped`` for some source: a document went missing."""


def step_totals(logs_dir: Path) -> dict[str, Counter[str]]:
    """Every step's counters summed over the ranks' stats files in a datatrove logging dir, by step name
    (datatrove saves a step's name as ``"<type>: <name>"``)."""
    totals: dict[str, Counter[str]] = defaultdict(Counter)
    for stats_file in sorted((logs_dir / "stats").glob("*.json")):
        for step in json.loads(stats_file.read_text()):
            counter = totals[str(step.get("name", ""))]
            for label, value in step.get("stats", {}).items():
                number = value["total"] if isinstance(value, dict) else value
                if isinstance(number, (int, float)):
                    # a datatrove stat's total: the counts read here are ints; a float total stays as it was
                    counter[label] += number  # type: ignore[assignment]
    return dict(totals)


def ledger_totals(logs_dir: Path, steps: dict[str, Counter[str]] | None = None) -> dict[str, int]:
    """Sum the ledger counters over every rank's stats file in a datatrove logging dir."""
    totals: Counter[str] = Counter()
    for name, counter in (step_totals(logs_dir) if steps is None else steps).items():
        if name.endswith(tuple(LEDGER_NAME.format(label=label) for label in LEDGER_LABELS)):
            for label, value in counter.items():
                totals[label] += int(value)
    return dict(totals)


def input_file_counts(steps: dict[str, Counter[str]]) -> dict[str, Any]:
    """What the reader did with the files it listed: ``listed``, ``with_documents``, ``skipped_by_extension``
    (extension → files; ``none``: a name without one), ``skipped_by_reason`` (files never opened, by reason:
    ``fifo``, ``socket``, ``char_device``, ``block_device``, ``broken_symlink``, ``other`` -- not a regular file --
    and ``run_output``: inside a tokenmill run folder; ``pipeline.read.listing``), ``empty`` (files that gave no
    record at all), and two counts of files read all the same: ``symlinks_followed`` and ``undecodable_names``
    (names that are not UTF-8, shown escaped).

    Files are not documents: a skipped or empty file adds nothing to ``read``, so ``read == kept + dropped``
    stays about documents; ``listed == with_documents + skipped + empty`` holds for the files (both kinds of
    skip). Empty for a reader that lists no files (a ``datasets`` split).
    """
    reader: Counter[str] = Counter()
    for name, counter in steps.items():
        if "READER" in name:  # the reader step's type is datatrove's "📖 - READER"
            reader.update(counter)
    prefix = "skipped_ext_"
    skipped = {label.removeprefix(prefix): int(n) for label, n in sorted(reader.items()) if label.startswith(prefix)}
    unnamed = int(reader.get("skipped_files", 0)) - sum(skipped.values())
    if unnamed > 0:  # a reader that counted a skip without its extension
        skipped["unknown"] = unnamed
    reasons = {
        label.removeprefix(NOT_REGULAR): int(n) for label, n in sorted(reader.items()) if label.startswith(NOT_REGULAR)
    }
    if reader.get(RUN_OUTPUT):
        reasons["run_output"] = int(reader[RUN_OUTPUT])
    listed, empty = int(reader.get("input_files", 0)), int(reader.get("empty_files", 0))
    if "input_files" not in reader and not skipped and not empty and not reasons:
        return {}  # a reader without input files (a datasets split): nothing to count
    return {
        "listed": listed,
        "with_documents": max(0, listed - sum(skipped.values()) - sum(reasons.values()) - empty),
        "skipped_by_extension": skipped,
        "skipped_by_reason": reasons,
        "empty": empty,
        "symlinks_followed": int(reader.get(SYMLINKS, 0)),
        "undecodable_names": int(reader.get(UNDECODABLE, 0)),
    }


#: the counters of a rule a stage could not apply to a document it kept: quality's per-language rule skips,
#: toxicity's unscored languages and documents without a language
SKIP_COUNTERS = ("quality_skipped_", "toxicity_skipped_", "toxicity_language_unknown")


def skip_counts(steps: dict[str, Counter[str]]) -> dict[str, int]:
    """Documents kept with a rule unapplied (``SKIP_COUNTERS``), summed over the steps and ranks."""
    counts: Counter[str] = Counter()
    for counter in steps.values():
        for label, n in counter.items():
            if label.startswith(SKIP_COUNTERS):
                counts[label] += int(n)
    return dict(sorted(counts.items()))


def pii_counts(steps: dict[str, Counter[str]]) -> dict[str, int]:
    """Replacements by PII type (text and metadata, URL included), from the PII step's ``pii_<type>`` counters."""
    counts: Counter[str] = Counter()
    for counter in steps.values():
        for label, n in counter.items():
            if label.startswith("pii_"):
                counts[label.removeprefix("pii_")] += int(n)
    return dict(counts.most_common())


_FIELDS = re.compile(r"\((?:fields|columns): ([^)]*)\)")


def missing_text_fields(drops_dir: Path, limit: int = 20) -> list[str]:
    """The fields the ``missing_text`` rows under ``drops_dir`` had (the reader lists them in its detail), most
    common first: what ``text_key`` should have been."""
    fields: Counter[str] = Counter()
    for row in iter_drop_rows(drops_dir):
        if row.get("rule") == "missing_text" and (found := _FIELDS.search(str(row.get("read_error_detail") or ""))):
            fields.update(f.strip() for f in found.group(1).split(",") if f.strip())
    return [name for name, _ in fields.most_common(limit)]


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
    input_files: dict[str, Any] = field(default_factory=dict)  # input_file_counts(): files, not documents
    pii: dict[str, int] = field(default_factory=dict)  # PII type -> replacements
    missing_text_fields: dict[str, int] = field(default_factory=dict)  # field -> missing_text rows that had it
    routed: dict[str, int] = field(default_factory=dict)  # target -> documents routed there (the route writer's count)
    routed_in: dict[str, int] = field(default_factory=dict)  # origin -> documents present in routed-from-<origin>/
    skips: dict[str, int] = field(default_factory=dict)  # rules a stage could not apply, by counter (kept, counted)

    @property
    def dropped_total(self) -> int:
        return sum(sum(rules.values()) for rules in self.dropped.values())

    @property
    def routed_total(self) -> int:
        return sum(self.routed.values())

    @property
    def routed_in_total(self) -> int:
        return sum(self.routed_in.values())

    @property
    def balanced(self) -> bool:
        """``read + routed_in == kept + routed + dropped``: documents routed into a source are its documents
        from then on (kept, or dropped by dedup under its name); those it routed out are no longer its own."""
        return self.read + self.routed_in_total == self.kept_final + self.routed_total + self.dropped_total

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["dropped_total"] = self.dropped_total
        data["routed_total"] = self.routed_total
        data["routed_in_total"] = self.routed_in_total
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
    steps = step_totals(layout.logs("curate", source))
    totals = ledger_totals(layout.logs("curate", source), steps)
    account = SourceAccount(source=source, read=totals.get("read", 0), kept_curated=totals.get("kept", 0))
    account.input_files = input_file_counts(steps)
    account.pii = pii_counts(steps)
    account.skips = skip_counts(steps)
    dropped: dict[str, Counter[str]] = defaultdict(Counter)
    fields: Counter[str] = Counter()
    for row in iter_drop_rows(layout.dropped(source)):
        dropped[row["stage"]][row["rule"]] += 1
        if row["rule"] == "missing_text":
            # the reader's detail lists the row's fields: what to set options.text_key to
            found = _FIELDS.search(str(row.get("read_error_detail") or ""))
            if found:
                fields.update(f.strip() for f in found.group(1).split(",") if f.strip())
        key = f"{row['stage']}/{row['rule']}"
        examples = account.examples.setdefault(key, [])
        if len(examples) < EXAMPLES_PER_RULE:
            example = {k: row.get(k) for k in EXAMPLE_KEYS if k in row}
            # drop rows are redacted when written; again here, so the report never depends on who wrote them
            examples.append(redact_row(example))
    account.dropped = {stage: dict(rules) for stage, rules in dropped.items()}
    account.missing_text_fields = dict(fields.most_common(20))
    account.routed = route_counts(steps)
    account.routed_in = {origin: count_documents(folder) for origin, folder in layout.routed_in_folders(source).items()}
    final = layout.final_documents(source)  # deduped/ or top_percent/ when a whole-run pass rewrote it
    # without either, a source's kept documents are its own curated ones plus those routed into it
    account.kept_final = (
        count_documents(final) if final != layout.curated(source) else account.kept_curated + account.routed_in_total
    )
    return account


#: the route writer's step name and stats (``pipeline.curate.routing.RouteWriter`` counts them, the accounts read
#: them back): defined here, below curate, so the accounts need nothing of the stage
ROUTE_WRITER = "🔀 Route (tokenmill)"
STAT_ROUTED = "routed"
STAT_ROUTED_TO = "routed_to_"


def route_counts(steps: dict[str, Counter[str]]) -> dict[str, int]:
    """target → documents the route writer (``pipeline.curate.routing``) sent there, from its ``routed_to_<target>``."""
    counts: Counter[str] = Counter()
    for name, counter in steps.items():
        if name.endswith(ROUTE_WRITER):
            for label, n in counter.items():
                if label.startswith(STAT_ROUTED_TO):
                    counts[label.removeprefix(STAT_ROUTED_TO)] += int(n)
    return dict(sorted(counts.items()))


def routing_problems(accounts: list[SourceAccount]) -> list[str]:
    """Each origin's routed count against the documents present in its target's ``routed-from-<origin>/``
    (written by the route writer, counted from the files: an independent measurement)."""
    by_name = {a.source: a for a in accounts}
    problems = []
    pairs = {(a.source, t) for a in accounts for t in a.routed} | {(o, a.source) for a in accounts for o in a.routed_in}
    for origin, target in sorted(pairs):
        sent = by_name[origin].routed.get(target, 0) if origin in by_name else 0
        present = by_name[target].routed_in.get(origin, 0) if target in by_name else 0
        if sent != present:
            problems.append(
                f"{origin} -> {target}: routed {sent} but {present} present in curated/{target}/routed-from-{origin}/"
            )
    return problems


def balance_problem(source: str, read: int, kept: int, dropped: int) -> str | None:
    """The one balance check, ``read == kept + dropped``: ``None`` when a source balances, else the line that
    names the source and the numbers (curation's ``check_accounts`` and dedup's result both report it)."""
    if read == kept + dropped:
        return None
    return f"{source}: read {read} != kept {kept} + dropped {dropped} (difference {read - kept - dropped})"


def check_accounts(accounts: list[SourceAccount]) -> None:
    """Fail the run when any source does not balance, naming the source and the numbers."""
    broken = [a for a in accounts if not a.balanced]
    lines = [_imbalance(a) for a in broken] + routing_problems(accounts)
    if lines:
        raise AccountingError("accounting does not balance:\n  " + "\n  ".join(lines))


def _imbalance(a: SourceAccount) -> str:
    if not a.routed and not a.routed_in:  # the message every run without routing has always given
        return balance_problem(a.source, a.read, a.kept_final, a.dropped_total) or ""
    difference = a.read + a.routed_in_total - a.kept_final - a.routed_total - a.dropped_total
    return (
        f"{a.source}: read {a.read} + routed in {a.routed_in_total} != kept {a.kept_final} + routed"
        f" {a.routed_total} + dropped {a.dropped_total} (difference {difference})"
    )
