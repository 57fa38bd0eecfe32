"""Step 4, in one task: verification, connected components and survivors — over the pairs only.

Input: the exact units' copies (``exact/*.npz``: each copy and its group's head, heads matched by an index
entry) and the bucket units' candidate pairs (``buckets/*.npy``), from ``buckets.py``. Nothing here is per
document: signatures, lengths, sources and ids are read (``SignatureSet``, ``IndexView``) only for the
documents that appear in a pair, so memory grows with the duplicates, not the corpus.
Output under ``<stage>/clusters/``: ``decisions/<rank>.jsonl.gz`` (one row per document that is dropped or
that survives a cluster, addressed by its position in the rank) and, written last, ``summary.json``.

1. **Verification**: a candidate pair counts only if the share of equal signature values (the estimated
   Jaccard similarity) is at least ``threshold`` (in batches of ``VERIFY_CHUNK`` pairs).
2. **Clusters**: connected components of the verified pairs (``component_labels`` over the pairs' endpoints
   only; the partition ``scipy.sparse.csgraph`` finds, without importing scipy), each exact group standing
   behind its head.
3. **Survivor** of each cluster, deterministic: an index entry (already published by an earlier run) wins;
   otherwise the document whose source has the highest ``priority`` (recipe ``sources[].priority``), then the
   longest text, then the smallest id (string order), then the position in the input.

Every dropped document records ``duplicate_of`` (the survivor's id), ``similarity`` (estimated Jaccard with
the survivor, 1.0 for exact copies), ``cluster_size`` and, for index survivors, ``matched_run``. The rule is
``exact_duplicate`` when its normalised text equals the survivor's, else ``near_duplicate``.
"""

from __future__ import annotations

import gzip
import json
import os
import time
from typing import Any

import numpy as np

from pipeline.atomic import atomic_open, write_json_atomic
from pipeline.dedup.buckets import Records, bucket_units, exact_units, load_exact
from pipeline.dedup.cluster_summary import cluster_summary
from pipeline.dedup.config import DedupConfig
from pipeline.dedup.index_view import IndexView
from pipeline.dedup.memory import cluster_bound, peak_rss
from pipeline.dedup.signatures import SignatureSet
from pipeline.dedup.store import DedupStateError

__all__ = ["DedupStateError", "run_clustering"]

VERIFY_CHUNK = 8192  # candidate pairs compared at once: 2 × 8192 signatures in memory (memory.py constant)
EXACT, NEAR = 0, 1
RULES = ("exact_duplicate", "near_duplicate")


class Nodes:
    """Signatures and preference fields of graph nodes: run rows (``>= 0``) and index entries (``-1 - e``)."""

    def __init__(self, signatures: SignatureSet, view: IndexView, priority: np.ndarray):
        self.signatures, self.view, self.priority = signatures, view, priority

    def sigs(self, nodes: np.ndarray) -> np.ndarray:
        nodes = np.asarray(nodes, dtype=np.int64)
        out = np.empty((len(nodes), self.signatures.num_perm), dtype=np.uint32)
        run = nodes >= 0
        if run.any():
            out[run] = self.signatures.sigs(nodes[run])
        if (~run).any():
            out[~run] = self.view.sigs(-1 - nodes[~run])
        return out

    def preference(self, nodes: np.ndarray, groups: np.ndarray) -> np.ndarray:
        """Positions of ``nodes`` sorted by (group, survivor preference)."""
        run = nodes >= 0
        prio = np.zeros(len(nodes), np.int64)
        length = np.zeros(len(nodes), np.int64)
        cols = self.signatures.cols(nodes[run])
        prio[run], length[run] = self.priority[cols["source"]], cols["length"]
        records = Records([groups], run.astype(np.int8), prio, length, nodes)
        return records.preference_sorted(self.signatures)


def component_labels(k: int, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """A label per node ``0..k-1``, equal exactly for the nodes connected by edges ``(u[i], v[i])``: each
    component's smallest node, by min-label propagation with pointer jumping (NumPy only).

    Why not ``scipy.sparse.csgraph.connected_components``: importing ``scipy.sparse`` costs ~0.35 CPU-s per
    process (it clones NumPy's namespace, loading ``numpy.f2py`` and ``numpy.testing``), paid by every
    ``tokenmill curate`` run with one near-duplicate pair; nothing else on that path needs scipy. Only the
    partition matters (survivors are chosen per component, ``Nodes.preference``), and it is the same.
    """
    labels = np.arange(k, dtype=np.int64)
    if not len(u):
        return labels
    while True:
        low = np.minimum(labels[u], labels[v])
        before = labels.copy()
        np.minimum.at(labels, u, low)
        np.minimum.at(labels, v, low)
        labels = labels[labels]  # pointer jumping: a label points at a smaller node of the same component
        while True:
            jumped = labels[labels]
            if np.array_equal(jumped, labels):
                break
            labels = jumped
        if np.array_equal(labels, before):
            return labels


def _lookup(keys_sorted: np.ndarray, values: np.ndarray, queries: np.ndarray, missing: int = -1) -> np.ndarray:
    """``values`` of ``queries`` in ``keys_sorted`` (``missing`` where absent)."""
    out = np.full(len(queries), missing, dtype=np.int64)
    if len(keys_sorted) == 0 or len(queries) == 0:
        return out
    pos = np.minimum(np.searchsorted(keys_sorted, queries), len(keys_sorted) - 1)
    hit = keys_sorted[pos] == queries
    out[hit] = values[pos[hit]]
    return out


def load_pairs(bucket_dir: str, units: int) -> np.ndarray:
    """Unique candidate pairs of all bucket units, (n, 2) sorted."""
    parts = []
    for unit in range(units):
        path = os.path.join(bucket_dir, f"{unit:05d}.npy")
        if not os.path.exists(path):
            raise DedupStateError(f"{path}: bucket unit {unit} is missing; rerun the dedup stage to resume")
        parts.append(np.load(path, allow_pickle=False))
    if not parts:
        return np.empty((0, 2), np.int64)
    return np.unique(np.concatenate(parts), axis=0)


def verify(nodes: Nodes, pairs: np.ndarray, threshold: float, chunk: int = VERIFY_CHUNK) -> np.ndarray:
    """The candidate pairs whose estimated Jaccard reaches ``threshold``."""
    keep = []
    for start in range(0, len(pairs), chunk):
        part = pairs[start : start + chunk]
        sim = (nodes.sigs(part[:, 0]) == nodes.sigs(part[:, 1])).mean(axis=1)
        keep.append(part[sim >= threshold])
    return np.concatenate(keep) if keep else np.empty((0, 2), np.int64)


def similarities(nodes: Nodes, a: np.ndarray, b: np.ndarray, chunk: int = VERIFY_CHUNK) -> np.ndarray:
    out = np.empty(len(a))
    for start in range(0, len(a), chunk):
        sl = slice(start, start + chunk)
        out[sl] = (nodes.sigs(a[sl]) == nodes.sigs(b[sl])).mean(axis=1)
    return out


class Graph:
    """Exact groups behind their heads, and the components of the verified near-duplicate pairs."""

    def __init__(self, exact: dict[str, np.ndarray], verified: np.ndarray, nodes: Nodes):
        by_member = np.argsort(exact["member"])
        self.member, self.member_head = exact["member"][by_member], exact["head"][by_member]
        heads, counts = np.unique(exact["head"], return_counts=True)
        self.group_heads, self.group_sizes = heads, counts + 1
        by_head = np.argsort(exact["ix_head"])
        self.ix_head, self.ix_entry = exact["ix_head"][by_head], exact["ix_entry"][by_head]
        self.graph_nodes = np.unique(verified)  # every endpoint of a verified pair, sorted
        self.survivor = self.graph_nodes.copy()
        self.comp_docs = self.group_size(self.graph_nodes)
        if len(verified):
            k = len(self.graph_nodes)
            u, v = np.searchsorted(self.graph_nodes, verified[:, 0]), np.searchsorted(self.graph_nodes, verified[:, 1])
            labels = component_labels(k, u, v)
            order = nodes.preference(self.graph_nodes, labels)
            new = np.ones(k, dtype=bool)
            new[1:] = labels[order][1:] != labels[order][:-1]
            head_pos = np.flatnonzero(new)[np.cumsum(new) - 1]
            self.survivor[order] = self.graph_nodes[order[head_pos]]
            self.comp_docs = np.bincount(labels, weights=self.comp_docs).astype(np.int64)[labels]

    def group_size(self, nodes: np.ndarray) -> np.ndarray:
        """Documents an exact head stands for (1 for an index entry or a document without copies)."""
        size = _lookup(self.group_heads, self.group_sizes, nodes, missing=1)
        size[nodes < 0] = 1
        return size

    def head_of(self, rows: np.ndarray) -> np.ndarray:
        head = _lookup(self.member, self.member_head, rows)
        return np.where(head < 0, rows, head)


class Decisions:
    """Drop decisions (row, rule, target node, similarity, cluster size) and the kept survivors."""

    def __init__(self, graph: Graph, nodes: Nodes):
        moved = graph.graph_nodes[(graph.survivor != graph.graph_nodes) & (graph.graph_nodes >= 0)]
        # the rows decided, in the order the report lists cluster members: copies, moved heads, index copies
        candidates = np.concatenate([graph.member, moved, graph.ix_head])
        _, first = np.unique(candidates, return_index=True)
        rows = candidates[np.sort(first)]
        head = graph.head_of(rows)
        ix = _lookup(graph.ix_head, graph.ix_entry, head)
        survivor = _lookup(graph.graph_nodes, graph.survivor, head, missing=-(2**62))
        is_moved = (ix < 0) & (survivor != -(2**62)) & (survivor != head)
        target = np.where(ix >= 0, -1 - ix, np.where(is_moved, survivor, head))
        size = np.where(
            ix >= 0,
            graph.group_size(head) + 1,
            np.where(survivor != -(2**62), _lookup(graph.graph_nodes, graph.comp_docs, head), graph.group_size(head)),
        )
        rule = np.full(len(rows), EXACT, np.int8)
        sim = np.ones(len(rows))
        if is_moved.any():
            m = np.flatnonzero(is_moved)
            to_run = m[target[m] >= 0]
            same = np.zeros(len(m), dtype=bool)
            if len(to_run):
                a, b = nodes.signatures.cols(rows[to_run]), nodes.signatures.cols(target[to_run])
                same[target[m] >= 0] = (a["hi"] == b["hi"]) & (a["lo"] == b["lo"])
            near = m[~same]
            rule[near] = NEAR
            sim[near] = similarities(nodes, rows[near], target[near])
        self.rows, self.rule, self.target, self.sim, self.size = rows, rule, target, sim, size
        # per cluster (its survivor node): size and documents dropped; run survivors get a keep row each
        self.targets, first, self.dropped = np.unique(target, return_index=True, return_counts=True)
        self.target_size = size[first]
        run = self.targets >= 0
        self.keep_rows, self.keep_size, self.keep_dropped = self.targets[run], self.target_size[run], self.dropped[run]


def run_clustering(
    stage_dir: str, out_dir: str, world_size: int, config: DedupConfig, source_priority: dict[str, int]
) -> dict[str, Any]:
    """Decide, for every document in a pair, keep or drop (and why); write decisions and ``summary.json``."""
    started, cpu_started = time.perf_counter(), time.process_time()
    signatures = SignatureSet(os.path.join(stage_dir, "signatures"), world_size, config)
    view = IndexView.load(os.path.join(stage_dir, "index_view.json"))
    priority = np.array([source_priority.get(s, 0) for s in signatures.sources] or [0], dtype=np.int64)
    nodes = Nodes(signatures, view, priority)
    exact = load_exact(os.path.join(stage_dir, "exact"), len(exact_units(signatures, view, config)))
    pairs = load_pairs(os.path.join(stage_dir, "buckets"), len(bucket_units(signatures, view, config)))
    loaded = time.perf_counter()
    verified = verify(nodes, pairs, config.threshold)
    graph = Graph(exact, verified, nodes)
    decisions = Decisions(graph, nodes)
    clustered = time.perf_counter()
    index_meta = _index_meta(view, decisions)
    _write_decisions(out_dir, signatures, decisions, index_meta)
    summary = cluster_summary(stage_dir, signatures, view, config, decisions, index_meta)
    summary["pairs"] = {"candidates": int(len(pairs)), "verified": int(len(verified))}
    summary["memory"] = {
        "bound_bytes": cluster_bound(len(pairs), len(decisions.rows) + len(graph.graph_nodes), config.num_perm),
        "pairs_read": int(len(pairs)),
        "nodes": int(len(graph.graph_nodes)),
        "peak_rss_bytes": peak_rss(),
    }
    summary["seconds"] = {
        "load": round(loaded - started, 3),
        "cluster": round(clustered - loaded, 3),
        "total": round(time.perf_counter() - started, 3),
        "cpu": round(time.process_time() - cpu_started, 3),
    }
    write_json_atomic(os.path.join(out_dir, "summary.json"), summary, ensure_ascii=False, indent=1)
    return summary


def _index_meta(view: IndexView, decisions: Decisions) -> dict[int, dict[str, Any]]:
    entries = sorted(set((-1 - decisions.target[decisions.target < 0]).tolist()))
    return dict(zip(entries, view.describe(entries), strict=True))


def _write_decisions(out_dir: str, signatures: SignatureSet, d: Decisions, index_meta: dict) -> None:
    """``decisions/<rank>.jsonl.gz``: rows by position within the rank, drops and keeps together."""
    os.makedirs(os.path.join(out_dir, "decisions"), exist_ok=True)
    rows = np.concatenate([d.rows, d.keep_rows])
    kind = np.concatenate([np.zeros(len(d.rows), np.int8), np.ones(len(d.keep_rows), np.int8)])
    which = np.concatenate([np.arange(len(d.rows)), np.arange(len(d.keep_rows))])
    order = np.argsort(rows, kind="stable")
    rows, kind, which = rows[order], kind[order], which[order]
    bounds = np.searchsorted(rows, signatures.offsets)
    sources = signatures.sources
    for rank in range(signatures.world_size):
        path = os.path.join(out_dir, "decisions", f"{rank:05d}.jsonl.gz")
        with atomic_open(path, "wt", opener=gzip.open, compresslevel=3) as handle:
            for start in range(int(bounds[rank]), int(bounds[rank + 1]), VERIFY_CHUNK):
                sl = slice(start, min(start + VERIFY_CHUNK, int(bounds[rank + 1])))
                part_rows, part_kind, part_which = rows[sl], kind[sl], which[sl]
                drops = part_which[part_kind == 0]
                run_targets = d.target[drops][d.target[drops] >= 0]
                ids = dict(zip(part_rows.tolist(), signatures.ids(part_rows), strict=True))
                t_ids = dict(zip(run_targets.tolist(), signatures.ids(run_targets), strict=True))
                t_src = dict(zip(run_targets.tolist(), signatures.cols(run_targets)["source"].tolist(), strict=True))
                for row, k, w in zip(part_rows.tolist(), part_kind.tolist(), part_which.tolist(), strict=True):
                    record: dict[str, Any] = {"position": row - int(signatures.offsets[rank]), "id": ids[row]}
                    if k == 1:
                        record.update(
                            action="keep", cluster_size=int(d.keep_size[w]), duplicates_dropped=int(d.keep_dropped[w])
                        )
                    else:
                        target = int(d.target[w])
                        meta = index_meta[-1 - target] if target < 0 else None
                        record.update(
                            action="drop",
                            rule=RULES[d.rule[w]],
                            duplicate_of=meta.get("id") if meta else t_ids[target],
                            duplicate_source=meta.get("source") if meta else sources[t_src[target]],
                            similarity=round(float(d.sim[w]), 4),
                            cluster_size=int(d.size[w]),
                        )
                        if meta is not None and meta.get("run") is not None:
                            record["matched_run"] = meta.get("run")
                    handle.write(json.dumps(record, ensure_ascii=False) + "\n")
