"""What one run compares with: the index entries of earlier runs as files, read once and only in slices.

An ``IndexView`` is a list of segments, each with its signatures (``.sig.npy``, read by row for candidate
pairs only), names (``.meta.jsonl.gz``) and two sorted-run files (``store.py``): ``.bands.bin`` (per chunk,
each band's 64-bit keys sorted, with the entry number) and ``.exact.bin`` (exact hashes sorted). The bucket
and exact ranks merge those slices with the run's own, so a run reads each index file once — before, the
clustering task read every signature column of the index once per band (32 times).

A disk index stores the two sorted files with each segment (written by ``DiskIndex.add``); a segment of an
older index, or one banded with other ``bands``/``rows``, is sorted once into the run's stage folder. A
Redis index is *snapshotted*: the entries sharing a band or the exact hash with one of the run's documents
are fetched (streaming over the run's signature files, one chunk at a time) and written as one local
segment. The view is written to ``<stage>/index_view.json`` once, so a resumed run compares with the same
entries even if another run added to the index meanwhile.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from pipeline.atomic import atomic_open, write_json_atomic
from pipeline.dedup import store

Chunk = tuple[np.ndarray, np.ndarray, list[tuple]]  # signatures, exact hashes, (run, source, id, url) per entry


@dataclass
class SegmentView:
    """One segment's files (absolute paths) and where its entries start in the view's numbering."""

    run: str
    count: int
    offset: int
    sig: str
    meta: str
    bands: str
    band_runs: list[int]
    exact: str
    exact_runs: list[int]


@dataclass
class IndexView:
    num_perm: int
    bands: int
    segments: list[SegmentView] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(s.count for s in self.segments)

    def save(self, path: str) -> None:
        write_json_atomic(path, asdict(self), indent=1)

    @classmethod
    def load(cls, path: str) -> IndexView:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        return cls(data["num_perm"], data["bands"], [SegmentView(**s) for s in data["segments"]])

    def _split(self, entries: np.ndarray):
        entries = np.asarray(entries, dtype=np.int64)
        starts = np.array([s.offset for s in self.segments], dtype=np.int64)
        seg_of = np.searchsorted(starts, entries, side="right") - 1
        for seg in np.unique(seg_of).tolist():
            where = np.flatnonzero(seg_of == seg)
            yield self.segments[seg], entries[where] - self.segments[seg].offset, where

    def sigs(self, entries: np.ndarray) -> np.ndarray:
        out = np.empty((len(entries), self.num_perm), dtype=np.uint32)
        for segment, local, where in self._split(entries):
            header = store.npy_header_size(segment.sig)
            out[where] = store.read_rows(segment.sig, np.dtype("<u4"), local, header=header, width=self.num_perm)
        return out

    def describe(self, entries: list[int]) -> list[dict[str, Any]]:
        """``{run, source, id, url}`` of each entry (its segment's names read up to the last one asked)."""
        out: list[dict[str, Any]] = [{} for _ in entries]
        for segment, local, where in self._split(np.array(entries, dtype=np.int64)):
            wanted = dict(zip(local.tolist(), where.tolist(), strict=True))
            last = max(wanted)
            with gzip.open(segment.meta, "rt", encoding="utf-8") as handle:
                for line_no, line in enumerate(handle):
                    if line_no in wanted:
                        run, source, doc_id, url = json.loads(line)
                        out[wanted[line_no]] = {"run": run, "source": source, "id": doc_id, "url": url}
                    if line_no >= last:
                        break
        return out

    def runs(self, kind: str) -> list[tuple[int, str, int, int]]:
        """Sorted runs: (entry offset of the segment, path, first record, records per band)."""
        out = []
        for segment in self.segments:
            counts = segment.band_runs if kind == "bands" else segment.exact_runs
            per = self.bands if kind == "bands" else 1
            path = segment.bands if kind == "bands" else segment.exact
            for start, count in zip(store.run_starts(counts, per), counts, strict=True):
                out.append((segment.offset, path, start, count))
        return out


def sorted_runs(chunks: Iterable[tuple[np.ndarray, np.ndarray]], bands: int, rows: int, bands_out, exact_out):
    """Write the ``.bands.bin`` and ``.exact.bin`` runs of entries given as (signatures, exact) chunks;
    returns the run lengths (the same for both files: every entry is in both)."""
    runs, offset = [], 0
    for sigs, exact in chunks:
        n = len(sigs)
        if n == 0:
            continue

        def fill(keys: np.ndarray, order: np.ndarray, offset=offset) -> np.ndarray:
            rec = np.empty(len(keys), dtype=store.INDEX_BAND)
            rec["key"], rec["entry"] = keys, order + offset
            return rec

        for records in store.sorted_band_runs(sigs, bands, rows, fill):
            bands_out.write(records.tobytes())
        order = np.argsort(exact[:, 0], kind="stable")  # by hi, entries ascending among equal hi
        rec = np.empty(n, dtype=store.INDEX_EXACT)
        rec["hi"], rec["lo"], rec["entry"] = exact[order, 0], exact[order, 1], order + offset
        exact_out.write(rec.tobytes())
        runs.append(n)
        offset += n
    return runs


def write_segment(folder: str, stem: str, count: int, chunks: Iterator[Chunk], bands: int, rows: int):
    """Stream one segment's five files from (signatures, exact, names) chunks; returns {role: path} and the
    run lengths of the sorted files. Memory: one chunk."""
    num_perm = None
    paths = {
        role: os.path.join(folder, stem + suffix)
        for role, suffix in (
            ("sig", ".sig.npy"),
            ("exact", ".exact.npy"),
            ("meta", ".meta.jsonl.gz"),
            ("bands", ".bands.bin"),
            ("exact_sorted", ".exact.bin"),
        )
    }
    written = 0
    with (
        atomic_open(paths["sig"], "wb") as sig_out,
        atomic_open(paths["exact"], "wb") as exact_out,
        atomic_open(paths["meta"], "wb") as meta_raw,
        atomic_open(paths["bands"], "wb") as bands_out,
        atomic_open(paths["exact_sorted"], "wb") as sorted_out,
        gzip.open(meta_raw, "wt", encoding="utf-8", compresslevel=3) as meta_out,
    ):

        def rows_of() -> Iterator[tuple[np.ndarray, np.ndarray]]:
            nonlocal num_perm, written
            for sigs, exact, metas in chunks:
                if num_perm is None:
                    num_perm = sigs.shape[1]
                    store.write_npy_header(sig_out, "<u4", (count, num_perm))
                    store.write_npy_header(exact_out, "<u8", (count, 2))
                sig_out.write(np.ascontiguousarray(sigs, dtype="<u4").tobytes())
                exact_out.write(np.ascontiguousarray(exact, dtype="<u8").tobytes())
                for meta in metas:
                    meta_out.write(json.dumps(list(meta), ensure_ascii=False) + "\n")
                written += len(sigs)
                yield sigs, exact

        runs = sorted_runs(rows_of(), bands, rows, bands_out, sorted_out)
        if num_perm is None:  # no entry at all: still valid, empty files
            raise ValueError("write_segment needs at least one chunk")
        if written != count:
            raise ValueError(f"segment {stem}: {written} entries written, {count} announced")
    return paths, runs


def segment_chunks(
    sig_path: str, exact_path: str, count: int, num_perm: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """An existing segment's (signatures, exact) in chunks of ``store.CHUNK`` entries, read once."""
    sig_header, exact_header = store.npy_header_size(sig_path), store.npy_header_size(exact_path)
    for start in range(0, count, store.CHUNK):
        rows = np.arange(start, min(count, start + store.CHUNK))
        yield (
            store.read_rows(sig_path, np.dtype("<u4"), rows, header=sig_header, width=num_perm),
            store.read_rows(exact_path, np.dtype("<u8"), rows, header=exact_header, width=2),
        )
