"""The accounting contract every tokenmill stage follows.

Every document a stage receives is either passed on or dropped with a ``Drop`` (rule, score).
Drops are written as one JSON row per document under ``<run>/dropped/<source>/<stage>/<rank>.jsonl.gz``
and counted in the step's datatrove stats as ``dropped_<rule>``; the end-of-run check
``read == kept + dropped`` (``pipeline.accounting``) reads those rows back.
"""

from __future__ import annotations

import gzip
import importlib.metadata
import json
import os
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from functools import lru_cache
from typing import IO, Any, ClassVar

from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep
from datatrove.utils import _import_utils

from pipeline.redact import redact_row


def _direct_distribution_lookup(scan: Callable[[str], bool | None]) -> Callable[[str], bool | None]:
    """datatrove's ``_is_distribution_available`` with the named distribution looked up first.

    Why: datatrove checks a step's ``_requires_dependencies`` when the step is made (and unpickled) by reading the
    metadata of every installed distribution until the end of the list: ~50 ms per name and process (orjson for
    the writer, fastwarc and resiliparse for the WARC reader: 0.15 CPU-s of each WARC run). The distribution a name
    normally names is found directly; when its metadata ``Name`` is that name, datatrove's scan would have found it
    too and answers the same ``True``. Any other case is answered by the scan itself."""

    @lru_cache
    def available(distribution_name: str) -> bool | None:
        try:
            found = importlib.metadata.distribution(distribution_name).metadata["Name"]
        except (importlib.metadata.PackageNotFoundError, ValueError, KeyError):
            found = None
        if found and found.lower() == distribution_name:
            return True
        return scan(distribution_name)

    available.scan = scan  # type: ignore[attr-defined]  # datatrove's own, for the test that compares the two
    return available


if _import_utils._is_distribution_available.__module__ != __name__:  # once, however often this module is loaded
    _import_utils._is_distribution_available = _direct_distribution_lookup(_import_utils._is_distribution_available)


@dataclass
class Drop:
    """Why a document leaves the pipeline. ``stage`` overrides the dropping step's stage name."""

    rule: str
    score: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    stage: str | None = None


def drop_row(doc: Document, stage: str, drop: Drop) -> dict[str, Any]:
    """The JSON row recorded for one dropped document, redacted by ``redact_row``.

    ``default_redactor()`` is used whatever the recipe's ``pii`` section says (also ``pii: null``), because
    most drops happen before the PII stage and the rows are read by people, not trained on.
    """
    row: dict[str, Any] = {
        "id": doc.id,
        "source": doc.metadata.get("source"),
        "stage": drop.stage or stage,
        "rule": drop.rule,
        "score": None if drop.score is None else float(drop.score),
        "url": doc.metadata.get("url"),
        "snippet": doc.text or "",
    }
    row.update(drop.extra)
    return redact_row(row)


class DropWriter:
    """Appends drop rows for one (stage, rank) to a gzipped JSONL file; opened lazily."""

    def __init__(self, drops_dir: str | None, stage: str, rank: int):
        self.path = None if drops_dir is None else os.path.join(drops_dir, stage, f"{rank:05d}.jsonl.gz")
        self._handle: IO[str] | None = None
        self.count = 0

    def write(self, row: dict[str, Any]) -> None:
        self.count += 1
        if self.path is None:
            return
        if self._handle is None:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            # "wt" truncates: a rank rerun after a crash rewrites its rows instead of duplicating them
            self._handle = gzip.open(self.path, "wt", encoding="utf-8", errors="replace", compresslevel=3)  # noqa: SIM115 - closed in close()
        self._handle.write(json.dumps(row, ensure_ascii=False) + "\n")

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def __enter__(self) -> DropWriter:
        if self.path is not None and os.path.exists(self.path):
            os.remove(self.path)  # a rerun of this rank starts from a clean slate
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class PerSourceDropWriter:
    """``DropWriter``'s interface over one file per source: ``<drops_dir>/<source>/<stage>/<rank>.jsonl.gz``
    (a row without a source goes to ``default``). Used where one step sees several sources (dedup's filter)."""

    def __init__(self, drops_dir: str, stage: str, rank: int):
        self.drops_dir, self.stage, self.rank = drops_dir, stage, rank
        self._writers: dict[str, DropWriter] = {}
        self.count = 0

    def write(self, row: dict[str, Any]) -> None:
        source = str(row.get("source") or "default")
        if source not in self._writers:
            self._writers[source] = DropWriter(os.path.join(self.drops_dir, source), self.stage, self.rank).__enter__()
        self._writers[source].write(row)
        self.count += 1

    def close(self) -> None:
        for writer in self._writers.values():
            writer.close()

    def __enter__(self) -> PerSourceDropWriter:
        return self  # each source's file is cleared when its first row comes (DropWriter.__enter__)

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_error_drop(doc: Document) -> Drop | None:
    """The drop of a reader's placeholder (``metadata["read_error"]``): stage ``read``, its rule, and the file and
    detail it names; ``None`` for a document that was read. The one rule every accounted step applies to them."""
    meta = doc.metadata
    if not meta.get("read_error"):
        return None
    extra = {k: meta[k] for k in ("file", "read_error_detail") if meta.get(k) is not None}
    return Drop(rule=str(meta["read_error"]), stage="read", extra=extra)


class AccountedStep(PipelineStep):
    """Base for tokenmill stages: subclasses implement ``process`` and never lose a document silently.

    ``process`` may modify ``doc`` in place (text, metadata) and returns ``None`` to keep it or a
    ``Drop`` to remove it. Stats (``in``, ``kept``, ``dropped``, ``dropped_<rule>``) go through
    datatrove's ``stat_update`` so they appear in the executor's ``stats.json``.
    """

    stage: ClassVar[str] = "stage"
    type = "🧮 - TOKENMILL"

    def __init__(self, drops_dir: str | None = None):
        super().__init__()
        self.drops_dir = drops_dir

    def setup(self) -> None:
        """Load heavy resources (models, compiled regexes) once per rank, inside the worker."""

    def resources(self) -> AbstractContextManager[object]:
        """Resources that live exactly as long as one rank's run (e.g. a sandbox process), entered by ``run``."""
        return nullcontext()

    def process(self, doc: Document) -> Drop | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def process_batch(self, docs: list[Document]) -> list[Drop | None]:
        """Override for batched work; the default calls ``process`` per document."""
        return [self.process(doc) for doc in docs]

    batch_size: int = 1

    def open_drops(self, rank: int) -> DropWriter | PerSourceDropWriter:
        """Where this rank's drop rows go: ``<drops_dir>/<stage>/<rank>.jsonl.gz`` (one source per step)."""
        return DropWriter(self.drops_dir, self.stage, rank)

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        self.setup()
        with self.open_drops(rank) as drops, self.resources():
            batch: list[Document] = []
            for doc in data:
                batch.append(doc)
                if len(batch) >= self.batch_size:
                    yield from self._handle_batch(batch, drops)
                    batch = []
            if batch:
                yield from self._handle_batch(batch, drops)

    def _handle_batch(self, batch: list[Document], drops: DropWriter | PerSourceDropWriter) -> DocumentsPipeline:
        with self.track_time("batch" if self.batch_size > 1 else None):
            verdicts = self.process_batch(batch)
        for doc, verdict in zip(batch, verdicts, strict=True):
            self.stat_update("in")
            if verdict is None:
                self.stat_update("kept")
                yield doc
            else:
                self.stat_update("dropped", f"dropped_{verdict.rule}")
                drops.write(drop_row(doc, self.stage, verdict))
