"""The accounting contract every tokenmill stage follows.

Every document a stage receives is either passed on or dropped with a ``Drop`` (rule, score).
Drops are written as one JSON row per document under ``<run>/dropped/<source>/<stage>/<rank>.jsonl.gz``
and counted in the step's datatrove stats as ``dropped_<rule>``; the end-of-run check
``read == kept + dropped`` (``pipeline.accounting``) reads those rows back.
"""

from __future__ import annotations

import gzip
import json
import os
import re
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import IO, Any, ClassVar

from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from pipeline.redact import PIIRedactor, redact_url

SNIPPET_CHARS = 300


@dataclass
class Drop:
    """Why a document leaves the pipeline. ``stage`` overrides the dropping step's stage name."""

    rule: str
    score: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    stage: str | None = None


# longer than any value written with spaces (a grouped IBAN is at most 42 characters, a phone with an
# extension about 30) and than the context a detector looks at around a value
REDACTION_MARGIN = 128
# a window is extended to the next whitespace so that no space-free value (a key, a token, an e-mail)
# straddles its end; a run of non-space characters longer than this is not a value and is cut anyway
MAX_TOKEN_CHARS = 4096
_WHITESPACE = re.compile(r"\s")

_default_redactor = None


def default_redactor():
    """The ``PIIRedactor`` with every type on, for what a run writes outside the kept text: drop rows, report
    examples. It does not depend on the recipe's ``pii`` section (also not on ``pii: null``): those rows are
    for people reading why a document went, never training data, so they are always redacted in full."""
    global _default_redactor
    if _default_redactor is None:
        _default_redactor = PIIRedactor()
    return _default_redactor


def cut_at_token(text: str, limit: int, strict: bool = False) -> str:
    """``text[:limit]``, shortened to the last whitespace when the cut falls inside a run of non-space
    characters (half a placeholder or half a token is never shown). ``strict``: with no whitespace to go
    back to, return ``""`` instead of the cut run."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    if not cut or cut[-1].isspace() or text[limit].isspace():
        return cut.rstrip()
    for i in range(len(cut) - 1, -1, -1):
        if cut[i].isspace():
            return cut[:i].rstrip()
    return "" if strict else cut


def _window_end(text: str, want: int) -> int:
    if want >= len(text):
        return len(text)
    found = _WHITESPACE.search(text, want, want + MAX_TOKEN_CHARS)
    return found.start() if found else min(len(text), want + MAX_TOKEN_CHARS)


def redacted_snippet(text: str, limit: int = SNIPPET_CHARS, redactor=None, complete: bool = True) -> str:
    """The first ``limit`` characters of ``text`` *after* redaction, with no part of a value left.

    Redacting a prefix and cutting it can show part of a value: one that straddles the window's end is not
    recognised, and placeholders shorter than their values pull it forward into the snippet. So the window
    (``limit + REDACTION_MARGIN``, extended to the next whitespace) is redacted and accepted only when its last
    ``REDACTION_MARGIN`` characters came back unchanged and the redacted text still reaches ``limit +
    REDACTION_MARGIN``: then the cut lies at least the margin before the window's end, before any value the
    end could have split. Otherwise the window doubles (at worst the whole text is redacted once more). The
    cut then goes back to a whitespace (``cut_at_token``).

    ``complete=False``: ``text`` is itself a cut prefix (the end is not the document's end), so it is never
    taken as "whole"; when it is too short to be safe, only its safe part (or nothing) is returned.
    ``redactor``: default ``default_redactor()``.
    """
    if not text:
        return ""
    redactor = redactor or default_redactor()
    want = limit + REDACTION_MARGIN
    while True:
        end = _window_end(text, want)
        head = text[:end]
        redacted = redactor.redact(head)[0]
        at_end = end >= len(text)
        tail_unchanged = redacted.endswith(head[-REDACTION_MARGIN:])
        if at_end and complete:
            return cut_at_token(redacted, limit)
        if tail_unchanged and len(redacted) >= limit + REDACTION_MARGIN:
            return cut_at_token(redacted, limit, strict=not complete)
        if at_end:  # an incomplete text that cannot be shown in full: its part before the margin, or nothing
            safe = len(redacted) - REDACTION_MARGIN if tail_unchanged else 0
            return cut_at_token(redacted, max(0, min(limit, safe)), strict=True) if safe > 0 else ""
        want = 2 * end


def redact_fields(value: Any, limit: int = 1000, redactor=None) -> Any:
    """Strings in ``value`` (also inside lists and dicts) redacted and cut (``redacted_snippet``); other values
    as they are. Used for the extra fields of drop rows (read-error details, file names, ids of duplicates)."""
    if isinstance(value, str):
        return redacted_snippet(value, limit, redactor)
    if isinstance(value, dict):
        return {k: redact_fields(v, limit, redactor) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_fields(v, limit, redactor) for v in value]
    return value


# the fields of a drop row that name it rather than quote the document: never redacted
ROW_KEYS_NOT_TEXT = frozenset({"id", "source", "stage", "rule", "score"})


def redact_row(row: dict[str, Any], redactor=None) -> dict[str, Any]:
    """A drop row (or a report example taken from one) with every text field redacted: ``url`` through
    ``redact_url``, ``snippet`` cut after redaction (``redacted_snippet``), every other string -- also inside
    lists and dicts -- through ``redact_fields``. ``ROW_KEYS_NOT_TEXT`` are kept as they are: the id is how a
    drop is traced back to its input. Idempotent: a redacted row comes back unchanged."""
    redactor = redactor or default_redactor()
    out: dict[str, Any] = {}
    for key, value in row.items():
        if key in ROW_KEYS_NOT_TEXT or value is None:
            out[key] = value
        elif key == "url" and isinstance(value, str):
            out[key] = redact_url(value, redactor)
        elif key == "snippet" and isinstance(value, str):
            out[key] = redacted_snippet(value, redactor=redactor)
        else:
            out[key] = redact_fields(value, redactor=redactor)
    return out


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
