"""Routing (classify ``mode: route``, domain mining): documents one source's classifier marks join another source.

The classify stage only marks a document (``metadata.routed_to``); it then passes the rest of its own source's
pipeline (decontaminate, pii, ...) like any other, so a routed document is as clean as a kept one. At the writer
end of the pipeline ``RouteWriter`` takes the marked documents out of the stream and writes them, in the same
format as the curated output, to the target's folder::

    <run>/curated/<target>/routed-from-<origin>/<rank>.jsonl.gz

with ``metadata.source = <target>`` and ``metadata.routed_from = <origin>``: dedup and tokenize then treat them
as the target's documents (its priority, mixing weight and held-out split). The writer counts ``routed`` and
``routed_to_<target>`` in the step's stats; the accounts (``pipeline.accounting``) check those counts against
the documents actually present in the target's folders, so ``read = kept + routed + dropped`` per source is
measured, not assumed.

Only the origin writes a ``routed-from-<origin>`` folder, so clearing a source's outputs clears exactly what it
routed elsewhere (``clear_routed_from``) and never what other sources routed into it.
"""

from __future__ import annotations

from pathlib import Path

from datatrove.data import DocumentsPipeline

from pipeline.accounting import ROUTE_WRITER, STAT_ROUTED, STAT_ROUTED_TO
from pipeline.curate.classify import ROUTED_TO
from pipeline.jsonl_writer import GZIP3, DocumentWriter
from pipeline.layout import ROUTED_PREFIX, RunLayout
from pipeline.ownership import record_of, remove_owned
from pipeline.shards.format import ShardManifest

ROUTED_FROM = "routed_from"


def routed_folder(layout: RunLayout, target: str, origin: str) -> Path:
    """Where ``origin``'s documents routed into ``target`` are written (``RunLayout.routed_folder``)."""
    return layout.routed_folder(target, origin)


def routed_in_folders(layout: RunLayout, target: str) -> dict[str, Path]:
    """origin → folder of every ``routed-from-<origin>`` folder under ``target``'s curated folder."""
    return layout.routed_in_folders(target)


def clear_routed_from(layout: RunLayout, origin: str) -> None:
    """Remove what ``origin`` routed into other sources' folders (only the folders it created)."""
    curated = layout.curated()
    if not curated.is_dir():
        return
    for target in sorted(curated.iterdir()):
        folder = target / f"{ROUTED_PREFIX}{origin}"
        if folder.is_dir():
            remove_owned(folder, record_of(layout.root))


class RouteWriter(DocumentWriter):
    """Writes the documents marked ``routed_to`` to ``curated/<target>/routed-from-<origin>/`` and passes the
    others on to the source's own writer.

    A ``DocumentWriter`` (same adapter, compression and per-rank file name as the curated writer), so a rank that
    reruns after a crash rewrites its file instead of appending to it, exactly like the curated output.
    """

    name = ROUTE_WRITER
    type = "🧮 - TOKENMILL"

    def __init__(self, layout: RunLayout, origin: str):
        super().__init__(
            str(layout.curated()),
            output_filename=f"${{{ROUTED_TO}}}/{ROUTED_PREFIX}{origin}/${{rank}}.jsonl.gz",
            compression=GZIP3,
        )
        self.origin = origin

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        with self:
            for doc in data:
                target = doc.metadata.get(ROUTED_TO)
                if not target:
                    yield doc
                    continue
                doc.metadata["source"] = target
                doc.metadata[ROUTED_FROM] = self.origin
                with self.track_time():
                    self.write(doc, rank)
                self.stat_update(STAT_ROUTED, f"{STAT_ROUTED_TO}{target}")


def routed_tokens(manifest: ShardManifest) -> dict[str, dict[str, int]]:
    """origin → target → tokens (train + held out) routed, from a shards manifest's ``sources.<target>.routed_from``."""
    found: dict[str, dict[str, int]] = {}
    for target, entry in sorted(manifest.sources.items()):
        for origin, counts in entry.routed_from.items():  # sorted by origin
            found.setdefault(origin, {})[target] = counts.tokens
    return found


__all__ = [
    "ROUTED_FROM",
    "ROUTED_PREFIX",
    "RouteWriter",
    "clear_routed_from",
    "routed_folder",
    "routed_in_folders",
    "routed_tokens",
]
