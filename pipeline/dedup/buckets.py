"""Steps 2 and 3, in parallel ranks: exact groups and LSH candidate pairs, sharded by band and key range.

No rank holds the corpus: the work is cut into *units*, each one key range of the exact hashes (step 2) or
of one band's keys (step 3), sized to ``UNIT_RECORDS`` records whatever the corpus size; rank ``r`` of ``R``
runs units ``r, r + R, …``. A unit reads its slice of every sorted run (``store.key_slice``: the run
signature ranks' and the index view's), sorts it with numpy and writes only pairs — datatrove's
``MinhashDedupBuckets`` reads the same kind of sorted files, but merges them with ``heapq`` one record at a
time. A bucket or an exact group never straddles two units (units split by key), so the pairs do not depend
on the rank count.

* **Exact unit** → ``exact/<unit>.npz``: ``member``/``head`` (each copy and its group's preferred
  document) and ``ix_head``/``ix_entry`` (a group head whose exact hash an index entry has: the first
  entry with the same high 64 bits, as before).
* **Bucket unit** → ``buckets/<unit>.npy``: candidate pairs of nodes (run row ``g >= 0``, index entry
  ``e`` as ``-1 - e``). Copies and index-matched heads are left out (they read the exact units' output:
  memory proportional to duplicates). Inside a bucket, in preference order, each member is paired with the
  bucket's best member and its predecessor; index–index pairs are left out.

Preference order (the survivor rule): index entries first (lower entry first), then source priority ↓,
length ↓, id ↑, row ↑. Records carry priority and length; only documents tied on both in one bucket or
group have their ids read (``.ids``). Lengths of 4 Gi characters or more compare equal (uint32 records).
"""

from __future__ import annotations

import math
import os

import numpy as np
from datatrove.pipeline.base import PipelineStep

from pipeline.atomic import atomic_open
from pipeline.dedup import store
from pipeline.dedup.config import DedupConfig
from pipeline.dedup.index_view import IndexView
from pipeline.dedup.memory import record_peak
from pipeline.dedup.signatures import SignatureSet

UNIT_RECORDS = 1 << 19  # records per unit: ~40 MiB of sort arrays, whatever the corpus


def unit_count(records: int) -> int:
    return max(1, math.ceil(records / UNIT_RECORDS))


def exact_units(signatures: SignatureSet, view: IndexView, config: DedupConfig) -> list[tuple[int, int]]:
    """Key ranges of the exact units (none when exact dedup is off)."""
    if not config.exact:
        return []
    records = sum(sum(m["exact_runs"]) for m in signatures.manifests) + view.total
    return store.key_ranges(unit_count(records))


def bucket_units(signatures: SignatureSet, view: IndexView, config: DedupConfig) -> list[tuple[int, int, int]]:
    """(band, key range) of the bucket units (none when near dedup is off)."""
    if not config.near:
        return []
    records = sum(sum(m["band_runs"]) for m in signatures.manifests) + view.total
    return [(band, lo, hi) for band in range(config.bands) for lo, hi in store.key_ranges(unit_count(records))]


class Records:
    """A unit's records from every run, as columns: sort key(s), preference fields and node."""

    def __init__(self, keys: list[np.ndarray], index_first: np.ndarray, prio: np.ndarray, length, node):
        self.keys, self.cls, self.prio, self.length, self.node = keys, index_first, prio, length, node

    def preference_sorted(self, signatures: SignatureSet) -> np.ndarray:
        """Positions sorted by (keys…, preference); ties on priority and length settled by id."""
        tiebreak = np.where(self.cls == 0, -1 - self.node, self.node)  # entry number, or run row
        order = np.lexsort((tiebreak, -self.length, -self.prio, self.cls, *reversed(self.keys)))
        same = np.ones(max(len(order) - 1, 0), dtype=bool)
        for column in (*self.keys, self.cls, self.prio, self.length):
            sorted_col = column[order]
            same &= sorted_col[1:] == sorted_col[:-1]
        same &= self.cls[order][1:] == 1
        if not same.any():
            return order
        starts = np.flatnonzero(same & ~np.concatenate([[False], same[:-1]]))
        ends = np.flatnonzero(same & ~np.concatenate([same[1:], [False]])) + 2
        tied = np.unique(np.concatenate([order[s:e] for s, e in zip(starts, ends, strict=True)]))
        ids = dict(zip(tied.tolist(), signatures.ids(self.node[tied]), strict=True))
        for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
            order[s:e] = sorted(order[s:e].tolist(), key=lambda p: (ids[p], int(self.node[p])))
        return order


def _priorities(signatures: SignatureSet, source_priority: dict[str, int]) -> list[np.ndarray]:
    """Per rank: local source code -> priority."""
    table = np.array([source_priority.get(s, 0) for s in signatures.sources] or [0], dtype=np.int64)
    return [table[codes] for codes in signatures.source_maps]


def _band_records(signatures, view, band: int, lo: int, hi: int, prio_of) -> Records:
    keys, cls, prio, length, node = [], [], [], [], []
    for offset, path, start, count in view.runs("bands"):
        rec = store.key_slice(path, store.INDEX_BAND, start + band * count, count, lo, hi)
        keys.append(rec["key"])
        node.append(-1 - (offset + rec["entry"].astype(np.int64)))
        cls.append(np.zeros(len(rec), np.int8))
        prio.append(np.zeros(len(rec), np.int64))
        length.append(np.zeros(len(rec), np.int64))
    for rank, path, start, count in signatures.runs("bands"):
        rec = store.key_slice(path, store.BAND, start + band * count, count, lo, hi)
        keys.append(rec["key"])
        node.append(signatures.offsets[rank] + rec["pos"].astype(np.int64))
        cls.append(np.ones(len(rec), np.int8))
        prio.append(prio_of[rank][rec["source"]])
        length.append(rec["length"].astype(np.int64))
    cat = [np.concatenate(c) if c else np.empty(0, np.int64) for c in (keys, cls, prio, length, node)]
    return Records([cat[0].astype(np.uint64)], cat[1], cat[2], cat[3], cat[4].astype(np.int64))


def bucket_pairs(records: Records, signatures: SignatureSet, excluded: np.ndarray) -> np.ndarray:
    """Candidate pairs (n, 2) of one bucket unit, unique, each row (smaller node, larger node)."""
    run = records.cls == 1
    drop = run & _isin_sorted(records.node, excluded)
    if drop.any():
        keep = ~drop
        records = Records(
            [records.keys[0][keep]], records.cls[keep], records.prio[keep], records.length[keep], records.node[keep]
        )
    order = records.preference_sorted(signatures)
    keys = records.keys[0][order]
    new = np.ones(len(keys), dtype=bool)
    new[1:] = keys[1:] != keys[:-1]
    starts = np.flatnonzero(new)
    head_pos = starts[np.cumsum(new) - 1]
    member = np.flatnonzero(~new)
    if len(member) == 0:
        return np.empty((0, 2), np.int64)
    nodes = records.node[order]
    v = nodes[member]
    parts = []
    for u in (nodes[head_pos[member]], nodes[member - 1]):
        useful = (u != v) & ((u >= 0) | (v >= 0))  # index–index pairs are left out
        parts.append(np.stack([np.minimum(u, v)[useful], np.maximum(u, v)[useful]], axis=1))
    return np.unique(np.concatenate(parts), axis=0)


def _isin_sorted(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    if len(sorted_set) == 0 or len(values) == 0:
        return np.zeros(len(values), dtype=bool)
    pos = np.minimum(np.searchsorted(sorted_set, values), len(sorted_set) - 1)
    return sorted_set[pos] == values


def exact_groups(signatures, view, lo: int, hi: int, prio_of) -> dict[str, np.ndarray]:
    """One exact unit: copies and their heads, and heads matched by an index entry's exact hash."""
    his, los, prio, length, node = [], [], [], [], []
    for rank, path, start, count in signatures.runs("exact"):
        rec = store.key_slice(path, store.EXACT, start, count, lo, hi, field="hi")
        his.append(rec["hi"])
        los.append(rec["lo"])
        node.append(signatures.offsets[rank] + rec["pos"].astype(np.int64))
        prio.append(prio_of[rank][rec["source"]])
        length.append(rec["length"].astype(np.int64))
    empty = np.empty(0, np.int64)
    if not node or not sum(len(n) for n in node):
        return {"member": empty, "head": empty, "ix_head": empty, "ix_entry": empty}
    hi_col, lo_col = np.concatenate(his), np.concatenate(los)
    records = Records(
        [hi_col, lo_col],
        np.ones(len(hi_col), np.int8),
        np.concatenate(prio),
        np.concatenate(length),
        np.concatenate(node),
    )
    order = records.preference_sorted(signatures)
    h, lw, nodes = hi_col[order], lo_col[order], records.node[order]
    new = np.ones(len(order), dtype=bool)
    new[1:] = (h[1:] != h[:-1]) | (lw[1:] != lw[:-1])
    head_pos = np.flatnonzero(new)[np.cumsum(new) - 1]
    member = np.flatnonzero(~new)
    out = {"member": nodes[member], "head": nodes[head_pos[member]], "ix_head": empty, "ix_entry": empty}
    ix_hi, ix_lo, ix_entry = [], [], []
    for offset, path, start, count in view.runs("exact"):
        rec = store.key_slice(path, store.INDEX_EXACT, start, count, lo, hi, field="hi")
        ix_hi.append(rec["hi"])
        ix_lo.append(rec["lo"])
        ix_entry.append(offset + rec["entry"].astype(np.int64))
    if ix_hi and sum(len(x) for x in ix_hi):
        e_hi, e_lo, e_entry = (np.concatenate(c) for c in (ix_hi, ix_lo, ix_entry))
        by = np.lexsort((e_entry, e_hi))
        e_hi, e_lo, e_entry = e_hi[by], e_lo[by], e_entry[by]
        first = np.concatenate([[True], e_hi[1:] != e_hi[:-1]])  # the lowest entry of each high half
        e_hi, e_lo, e_entry = e_hi[first], e_lo[first], e_entry[first]
        heads = np.flatnonzero(new)
        pos = np.minimum(np.searchsorted(e_hi, h[heads]), len(e_hi) - 1)
        hit = (e_hi[pos] == h[heads]) & (e_lo[pos] == lw[heads])
        out["ix_head"], out["ix_entry"] = nodes[heads[hit]], e_entry[pos[hit]]
    return out


def load_exact(exact_dir: str, units: int) -> dict[str, np.ndarray]:
    """All exact units' output, concatenated (proportional to duplicates)."""
    parts: dict[str, list[np.ndarray]] = {"member": [], "head": [], "ix_head": [], "ix_entry": []}
    for unit in range(units):
        path = os.path.join(exact_dir, f"{unit:05d}.npz")
        if not os.path.exists(path):
            raise store.DedupStateError(f"{path}: exact unit {unit} is missing; rerun the dedup stage to resume")
        with np.load(path, allow_pickle=False) as data:
            for name in parts:
                parts[name].append(data[name])
    return {k: np.concatenate(v) if v else np.empty(0, np.int64) for k, v in parts.items()}


class _UnitStep(PipelineStep):
    """Runs this rank's share of the units; a unit whose output exists is skipped (resume inside a rank)."""

    type = "🧮 - TOKENMILL"
    folder = ""

    def __init__(self, stage_dir: str, world_size: int, config: DedupConfig, source_priority: dict[str, int]):
        super().__init__()
        self.stage_dir, self.sig_ranks, self.config = stage_dir, world_size, config
        self.source_priority = dict(source_priority)

    def _context(self):
        signatures = SignatureSet(os.path.join(self.stage_dir, "signatures"), self.sig_ranks, self.config)
        view = IndexView.load(os.path.join(self.stage_dir, "index_view.json"))
        return signatures, view, _priorities(signatures, self.source_priority)

    def run(self, data=None, rank: int = 0, world_size: int = 1):
        signatures, view, prio_of = self._context()
        units = self.units(signatures, view)
        folder = os.path.join(self.stage_dir, self.folder)
        os.makedirs(folder, exist_ok=True)
        state = self.prepare(signatures, view)
        for unit in range(rank, len(units), world_size):
            with self.track_time():
                self.run_unit(unit, units[unit], signatures, view, prio_of, state, folder)
            self.stat_update("units")
        record_peak(self.stage_dir, self.folder, rank)
        return
        yield  # a generator, like every datatrove step (never reached)

    def prepare(self, signatures, view):
        return None


class DedupExactStep(_UnitStep):
    name = "🫆 Dedup exact groups"
    folder = "exact"

    def units(self, signatures, view):
        return exact_units(signatures, view, self.config)

    def run_unit(self, unit, bounds: tuple[int, int], signatures, view, prio_of, state, folder) -> None:
        path = os.path.join(folder, f"{unit:05d}.npz")
        if os.path.exists(path):
            return
        out = exact_groups(signatures, view, *bounds, prio_of)
        with atomic_open(path, "wb") as handle:
            np.savez(handle, allow_pickle=False, **out)  # numeric arrays only


class DedupBucketStep(_UnitStep):
    name = "🫆 Dedup LSH buckets"
    folder = "buckets"

    def units(self, signatures, view):
        return bucket_units(signatures, view, self.config)

    def prepare(self, signatures, view):
        exact = load_exact(os.path.join(self.stage_dir, "exact"), len(exact_units(signatures, view, self.config)))
        return np.unique(np.concatenate([exact["member"], exact["ix_head"]]))  # not nodes of the near graph

    def run_unit(self, unit, bounds, signatures, view, prio_of, excluded, folder) -> None:
        path = os.path.join(folder, f"{unit:05d}.npy")
        if os.path.exists(path):
            return
        band, lo, hi = bounds
        pairs = bucket_pairs(_band_records(signatures, view, band, lo, hi, prio_of), signatures, excluded)
        with atomic_open(path, "wb") as handle:
            np.save(handle, pairs)
