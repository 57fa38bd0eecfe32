"""Documents for training or evaluating a classifier, from anything the readers accept.

A path is a folder of documents, a JSONL/Parquet file or folder, a WARC crawl (its HTML goes through our
extraction, as in curation) or a curated run directory (its kept documents: ``deduped/`` where dedup ran,
else ``curated/``). Every record read is either used or counted as skipped with the rule that dropped it
(read errors, non-200 responses, empty extractions): ``Loaded.skipped``.

``max_docs`` keeps a uniform random sample of that many documents (reservoir sampling with ``seed``), so a
crawl far larger than memory can serve as the negative class (``--negative-sample N``).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from datatrove.data import Document

from pipeline.classify.scoring import flatten
from pipeline.config import SourceConfig
from pipeline.curate.extract import ExtractStage
from pipeline.layout import RunLayout
from pipeline.read import InputError, build_reader

__all__ = ["Loaded", "flatten", "iter_documents", "load_texts"]


@dataclass
class Loaded:
    """Texts taken from one or more paths, with what was read and why the rest was not used."""

    texts: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    read: int = 0
    skipped: Counter = field(default_factory=Counter)

    @property
    def usable(self) -> int:
        """Documents with text (before sampling): ``read - sum(skipped)``."""
        return self.read - sum(self.skipped.values())

    def summary(self) -> dict:
        return {"read": self.read, "skipped": dict(sorted(self.skipped.items())), "used": len(self.texts)}


def _run_dir_sources(path: Path) -> list[tuple[str, Path]] | None:
    """``[(source, folder of kept JSONL)]`` when ``path`` is a tokenmill run directory, else ``None``."""
    layout = RunLayout.at(path)
    if not layout.is_run():
        return None
    sources = sorted(p.name for p in layout.curated().iterdir() if p.is_dir()) if layout.curated().is_dir() else []
    return [(name, layout.final_documents(name)) for name in sources]


def iter_documents(path: str | Path, name: str = "input") -> Iterator[Document]:
    """Every record of ``path`` as the readers and the extract stage make it; placeholders and drops come out
    with ``metadata["skip"]`` set to ``stage/rule`` (they are counted, not used)."""
    path = Path(path)
    run_sources = _run_dir_sources(path)
    if run_sources is not None:
        if not run_sources:
            raise InputError(f"{path}: a run directory without curated documents (run `tokenmill curate` first)")
        for source, folder in run_sources:
            if not any(folder.glob("**/*.jsonl.gz")):  # routed-from-<origin>/ folders included
                continue
            reader = build_reader(SourceConfig(name=source, kind="jsonl", path=str(folder)))
            yield from reader.run(None, rank=0, world_size=1)
        return
    reader = build_reader(SourceConfig(name=name, kind="auto", path=str(path)))
    yield from _extracted(reader.run(None, rank=0, world_size=1))


def _extracted(documents: Iterable[Document]) -> Iterator[Document]:
    """The extract stage's decisions on raw records (HTML → text, read errors, non-200 responses)."""
    stage = ExtractStage()
    stage.setup()
    with stage.resources():
        for doc in documents:
            verdict = stage.process(doc)
            if verdict is not None:
                doc.metadata["skip"] = f"{verdict.stage or stage.stage}/{verdict.rule}"
            yield doc


def load_texts(paths: Iterable[str | Path], max_docs: int | None = None, seed: int = 0, name: str = "input") -> Loaded:
    """Flat texts (``flatten``) of every usable document under ``paths``; at most ``max_docs`` of them, a uniform
    sample drawn with ``seed`` (Algorithm R: one pass, ``max_docs`` texts in memory)."""
    loaded = Loaded()
    rng = random.Random(seed)
    seen = 0
    for path in paths:
        for doc in iter_documents(path, name):
            loaded.read += 1
            skip = doc.metadata.get("skip")
            text = "" if skip else flatten(doc.text or "")
            if skip or not text:
                loaded.skipped[skip or "extract/empty"] += 1
                continue
            seen += 1
            if max_docs is None or len(loaded.texts) < max_docs:
                loaded.texts.append(text)
                loaded.ids.append(str(doc.id))
            else:
                slot = rng.randrange(seen)
                if slot < max_docs:
                    loaded.texts[slot] = text
                    loaded.ids[slot] = str(doc.id)
    return loaded
