"""Write documents, in a given order, into size-capped shard files (datatrove layout, see ``format.py``).

The copy is a plain per-document slice assignment from memory-mapped part files into one buffer per shard;
benchmarks/tokenize_bench.py measures it far above the 50 M tokens/s target, so no vectorised gather.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pipeline.ownership import RunRecord, remove_owned
from pipeline.shards.format import INDEX_SUFFIX, write_shard


@dataclass
class DocumentTable:
    """Every encoded document: which part file holds it, where, and how long it is (EOS included)."""

    parts: list[np.ndarray] = field(default_factory=list)
    part: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    start: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    length: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))


def shard_bounds(lengths: np.ndarray, max_tokens: int) -> list[tuple[int, int]]:
    """Greedy split of consecutive documents into shards of at most ``max_tokens`` (a longer document stands alone)."""
    bounds: list[tuple[int, int]] = []
    cumulative = np.cumsum(lengths, dtype=np.int64)
    start, n = 0, len(lengths)
    while start < n:
        before = cumulative[start - 1] if start else 0
        end = int(np.searchsorted(cumulative, before + max_tokens, side="right"))
        end = max(end, start + 1)
        bounds.append((start, end))
        start = end
    return bounds


def write_documents(
    table: DocumentTable,
    order: np.ndarray,
    folder: Path,
    stem: str,
    dtype: np.dtype,
    max_tokens: int,
) -> list[dict]:
    """Write ``table``'s documents in ``order`` as ``folder/stem_NNNNN.ds`` (+ index); one entry per file."""
    folder.mkdir(parents=True, exist_ok=True)
    lengths = table.length[order]
    parts, part_of, start_of = table.parts, table.part[order].tolist(), table.start[order].tolist()
    files = []
    for number, (lo, hi) in enumerate(shard_bounds(lengths, max_tokens)):
        doc_lengths = lengths[lo:hi]
        ends = np.cumsum(doc_lengths, dtype=np.uint64)
        buffer = np.empty(int(ends[-1]), dtype=dtype)
        position = 0
        for part, start, length in zip(part_of[lo:hi], start_of[lo:hi], doc_lengths.tolist(), strict=True):
            buffer[position : position + length] = parts[part][start : start + length]
            position += length
        path = folder / f"{stem}_{number:05d}.ds"
        write_shard(path, buffer, ends)
        files.append({"path": path, "tokens": int(ends[-1]), "documents": hi - lo, "bytes": buffer.nbytes})
    return files


def remove_shards(folder: Path, record: RunRecord) -> None:
    """Delete the ``.ds``/``.ds.index`` files a previous run left in ``folder`` (and nothing else), each through
    the shard folder's ``record`` (``pipeline.ownership.remove_owned``)."""
    if not folder.is_dir():
        return
    for path in folder.rglob("*"):
        if path.is_file() and (path.name.endswith((".ds", f".ds{INDEX_SUFFIX}")) or path.name.endswith(".partial")):
            remove_owned(path, record)
