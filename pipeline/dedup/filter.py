"""Stage 3 of 3, back in the parallel ranks: apply the clustering step's decisions.

Each rank reads the same input files as in the signature stage (same file lists, same sharding), so the
n-th document it reads is the n-th it signed; the decision rows name the document id too, and a mismatch
(input changed between stages) stops the rank with an error instead of dropping the wrong document.
Dropped documents become drop rows (``pipeline.base.drop_row``, stage ``dedup``) in
``<out>/dropped/<source>/dedup/<rank>.jsonl.gz``; reader placeholders are dropped there too, with stage
``read`` and their rule. Kept documents go on to the writer; survivors of a cluster get
``metadata["dedup"] = {"cluster_size", "duplicates_dropped"}``.
Memory: one decision row at a time — the decisions are sorted by position, as the documents arrive, so the
rank streams them beside its documents (it held every decision of its rank, ~700 B each, before).
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterator

from datatrove.data import Document, DocumentsPipeline

from pipeline.atomic import write_json_atomic
from pipeline.base import AccountedStep, Drop, PerSourceDropWriter, read_error_drop
from pipeline.dedup.memory import record_peak
from pipeline.dedup.store import DedupStateError
from pipeline.jsonl_writer import GZIP3

STAGE = "dedup"
# the kept documents are written at gzip level 3, as drop rows are (pipeline.jsonl_writer)
OUTPUT_COMPRESSION = GZIP3


def iter_decisions(decisions_dir: str, rank: int) -> Iterator[tuple[int, dict]]:
    """(position, decision) of one rank, in position order, read one line at a time."""
    path = os.path.join(decisions_dir, f"{rank:05d}.jsonl.gz")
    if not os.path.exists(path):
        raise DedupStateError(f"{path}: decisions of rank {rank} are missing; rerun the dedup stage to resume")
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            yield row.pop("position"), row


class DedupFilterStep(AccountedStep):
    """Keep or drop each document by the clustering step's decision, on the accounting base of every stage.

    ``AccountedStep`` does the ``in``/``kept``/``dropped_<rule>`` stats and the drop rows; this step adds what
    only dedup has: drop rows per source (``PerSourceDropWriter``), the position check against the decisions,
    and the per-source tallies the dedup result is assembled from (``<counts_dir>/<rank>.json``).
    """

    name = "🫆 Dedup filter"
    stage = STAGE

    def __init__(self, decisions_dir: str, dropped_dir: str, counts_dir: str):
        super().__init__(dropped_dir)
        self.decisions_dir = decisions_dir
        self.counts_dir = counts_dir
        self._decisions: Iterator[tuple[int, dict]] = iter(())
        self._next: tuple[int, dict] | None = None
        self._counts: dict[str, dict] = {}
        self._position = 0
        self._rank = 0

    def open_drops(self, rank: int) -> PerSourceDropWriter:
        assert self.drops_dir is not None  # __init__ always passes dropped_dir
        return PerSourceDropWriter(self.drops_dir, self.stage, rank)

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        self._decisions = iter_decisions(self.decisions_dir, rank)
        self._next = next(self._decisions, None)
        self._counts, self._position, self._rank = {}, 0, rank
        yield from super().run(data, rank, world_size)
        if self._next is not None:
            last = max(p for p, _ in (self._next, *self._decisions))
            raise DedupStateError(
                f"dedup filter rank {rank}: read {self._position} documents but decisions go up to {last}; "
                "the input changed since the signature stage"
            )
        os.makedirs(self.counts_dir, exist_ok=True)
        write_json_atomic(os.path.join(self.counts_dir, f"{rank:05d}.json"), self._counts)
        record_peak(os.path.dirname(self.counts_dir), "filter", rank)

    def process(self, doc: Document) -> Drop | None:
        source = str(doc.metadata.get("source") or "default")
        tally = self._counts.setdefault(source, {"input": 0, "kept": 0, "dropped": {}})
        tally["input"] += 1
        decision = None
        if self._next is not None and self._next[0] == self._position:
            decision, self._next = self._next[1], next(self._decisions, None)
        if decision is not None and decision["id"] != doc.id:
            raise DedupStateError(
                f"dedup filter rank {self._rank}: document {self._position} is {doc.id!r} but was signed as "
                f"{decision['id']!r}; the input changed since the signature stage — delete "
                f"{os.path.dirname(os.path.dirname(self.decisions_dir))} to start the dedup stage over"
            )
        self._position += 1
        verdict = read_error_drop(doc)
        if verdict is None and decision is not None and decision["action"] == "drop":
            extra = {k: decision[k] for k in ("duplicate_of", "duplicate_source", "similarity", "cluster_size")}
            if decision.get("matched_run") is not None:
                extra["matched_run"] = decision["matched_run"]
            verdict = Drop(rule=decision["rule"], score=decision["similarity"], extra=extra)
        if verdict is None:
            if decision is not None:
                doc.metadata["dedup"] = {k: decision[k] for k in ("cluster_size", "duplicates_dropped")}
            tally["kept"] += 1
        else:
            rule_key = verdict.rule if verdict.stage is None else f"{verdict.stage}:{verdict.rule}"
            tally["dropped"][rule_key] = tally["dropped"].get(rule_key, 0) + 1
        return verdict
