"""Stage 2 of 3, in one task: exact groups, LSH candidates, verification, connected components, survivors.

Input: every rank's signature files (``signatures.py``) and, optionally, index entries of earlier runs.
Output under ``<stage>/clusters/``: ``decisions/<rank>.jsonl.gz`` (one row per document that is dropped or
that survives a cluster, addressed by its position in the rank), ``keep.npy`` (which rows are kept, for the
index update) and, written last, ``summary.json`` (counts, histogram, top clusters, memory figures).

The steps:

1. **Exact**: documents (with at least one word) are grouped by the 128-bit hash of their normalised text;
   each group keeps its preferred member.
2. **Candidates**: one representative per exact group is cut into ``bands`` × ``rows``; documents whose band
   values are equal in at least one band are candidates — the LSH banding of datasketch's ``MinHashLSH``,
   done by sorting a 64-bit key per band instead of filling hash tables. Why not ``MinHashLSH`` itself:
   measured on the benchmark's 20k documents with 32 × 4 bands, its in-memory dict storage held 9.7 KB per
   document (a Python ``set`` and ``bytes`` per band) and took 5.0 s to fill and query; the sort needs 49 B
   per document for one band at a time and took 0.14 s. (The Redis index does use ``MinHashLSH``.)
   Inside a bucket (sorted by preference) each member is paired with the bucket's best member and its
   predecessor: enough edges to connect a bucket, linear in its size.
3. **Verification**: a candidate pair counts only if the share of equal signature values (the estimated
   Jaccard similarity) is at least ``threshold``.
4. **Clusters**: connected components of the verified pairs (``scipy.sparse.csgraph``; the same partition as
   union-find over the pairs), with exact copies folded into their representative.
5. **Survivor** of each cluster, deterministic: an index entry (already published by an earlier run) wins;
   otherwise the document whose source has the highest ``priority`` (recipe ``sources[].priority``), then the
   longest text, then the smallest id (string order), then the position in the input.

Every dropped document records ``duplicate_of`` (the survivor's id), ``similarity`` (estimated Jaccard with
the survivor, 1.0 for exact copies), ``cluster_size`` and, for index survivors, ``matched_run``. The rule is
``exact_duplicate`` when its normalised text equals the survivor's, else ``near_duplicate``.

Memory, computable before a run (printed in the report): ``N × (4·num_perm + 120 + id_bytes) + D × 700
+ M × 80 + C × 40 + 18 MiB`` bytes for N documents (signature, exact hash, length, kind, source, preference, grouping
arrays, the id string), D decisions (dropped documents and cluster survivors), M index entries, C candidate
pairs, and a fixed verification batch; see ``memory.py``. Measured on the benchmark (20k documents): 19 MB
allocated at the peak against a bound of 37 MB.
"""

from __future__ import annotations

import gzip
import json
import os
import resource
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline.atomic import atomic_open, write_json_atomic
from pipeline.dedup.config import DedupConfig
from pipeline.dedup.memory import cluster_bound, ids_bytes
from pipeline.dedup.minhash import KIND_EMPTY, KIND_INVALID, KIND_NORMAL, KIND_SHORT
from pipeline.dedup.signatures import SNIPPET_CHARS, rank_paths
from pipeline.errors import TokenmillError
from pipeline.redact import redact_name, redacted_snippet

_U64 = np.uint64
VERIFY_CHUNK = 8192  # candidate pairs compared at once: 2 × 8192 signatures in memory (memory.py constant)


class DedupStateError(TokenmillError, RuntimeError):
    """Intermediate files of the dedup stage are missing or were made with other settings."""


def _band_keys(block: np.ndarray) -> np.ndarray:
    """One 64-bit key per row for a (n, rows) uint32 band: equal bands give equal keys."""
    h = np.zeros(len(block), dtype=_U64)
    for col in range(block.shape[1]):
        h *= _U64(0x9E3779B97F4A7C15)
        h += block[:, col].astype(_U64)
    h ^= h >> _U64(33)
    h *= _U64(0xFF51AFD7ED558CCD)
    h ^= h >> _U64(33)
    return h


def load_signatures(signature_dir: str, world_size: int, config: DedupConfig) -> dict[str, Any]:
    """All ranks' signature columns, concatenated in rank order (global row = rank offset + position)."""
    fingerprint = config.signature_fingerprint()
    manifests = []
    for rank in range(world_size):
        path = rank_paths(signature_dir, rank)[".json"]
        if not os.path.exists(path):
            raise DedupStateError(f"{path}: signatures of rank {rank} are missing; rerun the dedup stage to resume")
        with open(path, encoding="utf-8") as handle:
            manifest = json.load(handle)
        if manifest["fingerprint"] != fingerprint:
            raise DedupStateError(
                f"{path}: signatures were made with other parameters ({manifest['fingerprint']}); "
                f"delete {os.path.dirname(os.path.dirname(path))} to start the dedup stage over"
            )
        manifests.append(manifest)
    counts = [m["count"] for m in manifests]
    total = sum(counts)
    num_perm = config.num_perm
    sources: list[str] = []
    sig = np.empty((total, num_perm), dtype=np.uint32)
    exact = np.empty((total, 2), dtype=np.uint64)
    length = np.empty(total, dtype=np.int64)
    kind = np.empty(total, dtype=np.uint8)
    source = np.empty(total, dtype=np.int32)
    ids: list[str] = []
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    for rank, manifest in enumerate(manifests):
        paths = rank_paths(signature_dir, rank)
        lo, hi = offsets[rank], offsets[rank + 1]
        if hi > lo:
            expected = (hi - lo) * num_perm * 4
            if os.path.getsize(paths[".sig"]) != expected:
                raise DedupStateError(f"{paths['.sig']}: {os.path.getsize(paths['.sig'])} bytes, expected {expected}")
            with open(paths[".sig"], "rb") as handle:  # straight into the big array: no second copy of a rank
                handle.readinto(memoryview(sig[lo:hi]).cast("B"))
            with np.load(paths[".cols.npz"]) as cols:
                exact[lo:hi] = cols["exact"]
                length[lo:hi] = cols["length"]
                kind[lo:hi] = cols["kind"]
                remap = np.array([_code(sources, s) for s in manifest["sources"]] or [0], dtype=np.int32)
                source[lo:hi] = remap[cols["source"]]
        with gzip.open(paths[".docs.jsonl.gz"], "rt", encoding="utf-8") as handle:
            for line in handle:
                ids.append(json.loads(line)[0])
        if len(ids) != hi:
            raise DedupStateError(f"{paths['.docs.jsonl.gz']}: {len(ids) - lo} documents, expected {hi - lo}")
    return {
        "sig": sig,
        "exact": exact,
        "length": length,
        "kind": kind,
        "source": source,
        "ids": ids,
        "sources": sources,
        "offsets": offsets,
        "counts": counts,
    }


def _code(table: list[str], name: str) -> int:
    if name not in table:
        table.append(name)
    return table.index(name)


def preference_order(ids: list[str], length: np.ndarray, priority: np.ndarray) -> np.ndarray:
    """pref[row]: 0 for the document the survivor rule likes best (priority ↓, length ↓, id ↑, row ↑)."""
    n = len(ids)
    id_rank = np.empty(n, dtype=np.int64)
    id_rank[np.array(sorted(range(n), key=ids.__getitem__), dtype=np.int64)] = np.arange(n)
    order = np.lexsort((np.arange(n), id_rank, -length, -priority.astype(np.int64)))
    pref = np.empty(n, dtype=np.int64)
    pref[order] = np.arange(n)
    return pref


def _group_heads(sorted_keys: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """For rows already sorted by keys: start flag per row and the position of each row's group start."""
    n = len(sorted_keys[0])
    new = np.ones(n, dtype=bool)
    if n > 1:
        same = np.ones(n - 1, dtype=bool)
        for key in sorted_keys:
            same &= key[1:] == key[:-1]
        new[1:] = ~same
    starts = np.flatnonzero(new)
    head_pos = starts[np.cumsum(new) - 1]
    return new, head_pos


class _Nodes:
    """Signature access for graph nodes: run representatives first, then index entries."""

    def __init__(self, run_sig: np.ndarray, run_rows: np.ndarray, index_sigs) -> None:
        self.run_sig, self.run_rows, self.index_sigs = run_sig, run_rows, index_sigs
        self.n_run = len(run_rows)
        self.total = self.n_run + (0 if index_sigs is None else len(index_sigs))

    def sigs(self, nodes: np.ndarray) -> np.ndarray:
        out = np.empty((len(nodes), self.run_sig.shape[1]), dtype=np.uint32)
        is_run = nodes < self.n_run
        out[is_run] = self.run_sig[self.run_rows[nodes[is_run]]]
        if (~is_run).any():
            idx = nodes[~is_run] - self.n_run
            order = np.argsort(idx)  # memory-mapped rows are read in file order
            fetched = np.asarray(self.index_sigs[idx[order]])
            tmp = np.empty_like(fetched)
            tmp[order] = fetched
            out[~is_run] = tmp
        return out

    def band(self, band: int, rows: int) -> np.ndarray:
        cols = slice(band * rows, (band + 1) * rows)
        run_part = self.run_sig[self.run_rows, cols]
        if self.index_sigs is None or len(self.index_sigs) == 0:
            return run_part
        return np.concatenate([run_part, np.asarray(self.index_sigs[:, cols])])


def candidate_pairs(nodes: _Nodes, node_pref: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """Unique candidate edges (u < v) as uint64 ``u * total + v``; index–index pairs are left out."""
    total = nodes.total
    collected = []
    for band in range(bands):
        keys = _band_keys(nodes.band(band, rows))
        order = np.lexsort((node_pref, keys))
        new, head_pos = _group_heads([keys[order]])
        member = np.flatnonzero(~new)
        if len(member) == 0:
            continue
        v = order[member]
        for u in (order[head_pos[member]], order[member - 1]):
            a, b = np.minimum(u, v), np.maximum(u, v)
            useful = (a != b) & (a < nodes.n_run)  # a < b, so an index–index pair has a >= n_run
            collected.append(np.unique(a[useful].astype(_U64) * _U64(total) + b[useful].astype(_U64)))
    if not collected:
        return np.empty(0, dtype=_U64)
    return np.unique(np.concatenate(collected))


def verify(nodes: _Nodes, edges: np.ndarray, threshold: float, chunk: int = VERIFY_CHUNK) -> tuple[np.ndarray, ...]:
    """Keep the candidate pairs whose estimated Jaccard reaches ``threshold``: (u, v, similarity)."""
    total = _U64(nodes.total)
    keep_u, keep_v, keep_s = [], [], []
    for start in range(0, len(edges), chunk):
        part = edges[start : start + chunk]
        u, v = (part // total).astype(np.int64), (part % total).astype(np.int64)
        sim = (nodes.sigs(u) == nodes.sigs(v)).mean(axis=1)
        ok = sim >= threshold
        keep_u.append(u[ok])
        keep_v.append(v[ok])
        keep_s.append(sim[ok])
    if not keep_u:
        return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0)
    return np.concatenate(keep_u), np.concatenate(keep_v), np.concatenate(keep_s)


def components(total: int, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Component label per node (union-find over the verified pairs)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    graph = coo_matrix((np.ones(len(u), dtype=np.int8), (u, v)), shape=(total, total))
    _, labels = connected_components(graph, directed=False)
    return labels


def run_clustering(
    signature_dir: str,
    out_dir: str,
    world_size: int,
    config: DedupConfig,
    source_priority: dict[str, int],
    index=None,
) -> dict[str, Any]:
    """Decide, for every document, keep or drop (and why); write decisions and ``summary.json``.

    The steps, each a function below: exact groups (``_exact_groups``), matches with the index's exact hashes
    (``_index_exact_matches``), the near-duplicate graph and its components (``_near_components``), one decision
    per row (``_decide``), then the decision files, the counts the filter must reproduce and the summary.
    """
    started = time.perf_counter()
    cpu_started = time.process_time()
    data = load_signatures(signature_dir, world_size, config)
    sig, exact, kind, ids = data["sig"], data["exact"], data["kind"], data["ids"]
    sources = data["sources"]
    n = len(ids)
    priority = np.array([source_priority.get(s, 0) for s in sources] or [0], dtype=np.int64)[data["source"]]
    pref = preference_order(ids, data["length"], priority)
    loaded = time.perf_counter()

    rep, eligible, group_size = _exact_groups(exact, kind, pref, n, config)
    entries, index_exact = _index_exact_matches(index, sig, exact, kind, rep, eligible, n)
    graph = _near_components(sig, kind, rep, index_exact, entries, pref, group_size, config)
    clustered = time.perf_counter()
    decisions, cluster_members, cluster_size, node_of_row, index_meta = _decide(
        data, rep, group_size, index_exact, entries, graph
    )
    keep = _keep_mask(n, kind, decisions)
    _write_decisions(out_dir, world_size, data["offsets"], ids, decisions, keep)
    per_source = _expected_counts(data, decisions)
    histogram = Counter(_size_bucket(size) for size in cluster_size.values())
    top_clusters = _top_clusters(
        signature_dir, world_size, data, config, decisions, cluster_members, cluster_size, index_meta
    )
    n_index_nodes = graph.nodes.total - graph.nodes.n_run
    n_candidates, n_verified = graph.n_candidates, graph.n_verified
    id_bytes = ids_bytes(ids)
    summary = {
        "documents": n,
        "sources": sources,
        "per_source": per_source,
        "pairs": {"candidates": int(n_candidates), "verified": int(n_verified)},
        "clusters": len(cluster_members),
        "cluster_size_histogram": dict(sorted(histogram.items(), key=lambda kv: _bucket_order(kv[0]))),
        "top_clusters": top_clusters,
        "index": {
            "entries_compared": 0 if entries is None else len(entries),
            "matched_exact": int(
                sum(1 for d in decisions.values() if d.get("matched_run") and d["rule"] == "exact_duplicate")
            ),
            "matched_near": int(
                sum(1 for d in decisions.values() if d.get("matched_run") and d["rule"] == "near_duplicate")
            ),
        },
        "memory": {
            "bound_bytes": cluster_bound(
                n, config.num_perm, id_bytes / max(n, 1), n_index_nodes, n_candidates, n_decisions=len(decisions)
            ),
            "array_bytes": int(
                sig.nbytes
                + exact.nbytes
                + data["length"].nbytes
                + kind.nbytes
                + data["source"].nbytes
                + pref.nbytes
                + rep.nbytes
                + group_size.nbytes
                + index_exact.nbytes
                + node_of_row.nbytes
            ),
            "id_bytes": id_bytes,
            "peak_rss_bytes": _peak_rss(),
        },
        "seconds": {
            "load": round(loaded - started, 3),
            "cluster": round(clustered - loaded, 3),
            "total": round(time.perf_counter() - started, 3),
            "cpu": round(time.process_time() - cpu_started, 3),
        },
    }
    write_json_atomic(os.path.join(out_dir, "summary.json"), summary, ensure_ascii=False, indent=1)
    return summary


def _exact_groups(exact: np.ndarray, kind: np.ndarray, pref: np.ndarray, n: int, config: DedupConfig):
    """Step 1: every row's exact group representative (its preferred member), the rows eligible for exact
    matching, and each representative's group size."""
    rep = np.arange(n, dtype=np.int64)  # the exact group's preferred member
    eligible = np.flatnonzero((kind == KIND_NORMAL) | (kind == KIND_SHORT)) if config.exact else np.empty(0, np.int64)
    if len(eligible):
        order = eligible[np.lexsort((pref[eligible], exact[eligible, 1], exact[eligible, 0]))]
        _, head_pos = _group_heads([exact[order, 0], exact[order, 1]])
        rep[order] = order[head_pos]
    group_size = np.bincount(rep, minlength=n)

    return rep, eligible, group_size


def _index_exact_matches(index, sig, exact, kind, rep, eligible, n: int):
    """The index entries to compare with (exact matches by hash, near candidates by the run's banding) and,
    per row, the index entry with the same exact hash (``-1``: none)."""
    entries = None
    if index is not None:
        heads = np.flatnonzero((rep == np.arange(n)) & ((kind == KIND_NORMAL) | (kind == KIND_SHORT)))
        normal_heads = heads[kind[heads] == KIND_NORMAL]
        entries = index.entries(sig[normal_heads], exact[heads])
    index_exact = np.full(n, -1, dtype=np.int64)  # row -> index entry with the same exact hash
    if entries is not None and len(entries) and len(eligible):
        by_hi = np.argsort(entries.exact[:, 0], kind="stable")
        heads = np.flatnonzero((rep == np.arange(n)) & ((kind == KIND_NORMAL) | (kind == KIND_SHORT)))
        pos = np.searchsorted(entries.exact[by_hi, 0], exact[heads, 0])
        pos = np.minimum(pos, len(by_hi) - 1)
        cand = by_hi[pos]
        hit = (entries.exact[cand, 0] == exact[heads, 0]) & (entries.exact[cand, 1] == exact[heads, 1])
        index_exact[heads[hit]] = cand[hit]

    return entries, index_exact


@dataclass
class _Graph:
    """Steps 2-4: the near-duplicate graph over exact-group representatives and index entries."""

    run_rows: np.ndarray
    nodes: _Nodes
    survivor_node: np.ndarray
    comp_docs: np.ndarray
    n_candidates: int
    n_verified: int


def _near_components(sig, kind, rep, index_exact, entries, pref, group_size, config: DedupConfig) -> _Graph:
    """Candidate pairs by banding, verified by signature agreement, joined into components; each node's
    survivor is its component's preferred node."""
    n = len(rep)
    run_rows = np.flatnonzero((rep == np.arange(n)) & (kind == KIND_NORMAL) & (index_exact < 0))
    index_sigs = entries.sigs if entries is not None and len(entries) and config.near else None
    nodes = _Nodes(sig, run_rows, index_sigs)
    n_index_nodes = nodes.total - nodes.n_run
    node_pref = np.concatenate([pref[run_rows], np.arange(n_index_nodes, dtype=np.int64) - n_index_nodes])
    survivor_node = np.arange(nodes.total, dtype=np.int64)
    # documents per node: a run node stands for its whole exact group; becomes documents per component
    comp_docs = np.ones(nodes.total, dtype=np.int64)
    comp_docs[: nodes.n_run] = group_size[run_rows]
    n_candidates = n_verified = 0
    if config.near and nodes.total > 1:
        edges = candidate_pairs(nodes, node_pref, config.bands, config.rows)
        n_candidates = len(edges)
        u, v, _ = verify(nodes, edges, config.threshold)
        n_verified = len(u)
        del edges
        if n_verified:
            labels = components(nodes.total, u, v)
            by_label = np.lexsort((node_pref, labels))
            new, head_pos = _group_heads([labels[by_label]])
            survivor_node[by_label] = by_label[head_pos]
            comp_docs = np.bincount(labels, weights=comp_docs).astype(np.int64)[labels]
    return _Graph(run_rows, nodes, survivor_node, comp_docs, n_candidates, n_verified)


def _decide(data: dict[str, Any], rep, group_size, index_exact, entries, graph: _Graph):
    """Step 5: a drop decision per duplicate row (rule, duplicate_of, similarity, cluster size) and a keep
    decision per survivor with duplicates; also the cluster members and sizes the summary reports."""
    sig, exact, ids, sources = data["sig"], data["exact"], data["ids"], data["sources"]
    n = len(ids)
    run_rows, nodes, survivor_node, comp_docs = graph.run_rows, graph.nodes, graph.survivor_node, graph.comp_docs
    node_of_row = np.full(n, -1, dtype=np.int64)
    node_of_row[run_rows] = np.arange(nodes.n_run)
    describe = entries.describe_rows if entries is not None else (lambda rows: [])
    index_rows_needed = set(int(e) for e in index_exact[index_exact >= 0])
    run_survivor = survivor_node[: nodes.n_run]
    moved = np.flatnonzero(run_survivor != np.arange(nodes.n_run))
    survivors_of_heads = dict(zip(run_rows[moved].tolist(), run_survivor[moved].tolist(), strict=True))
    index_rows_needed.update(s - nodes.n_run for s in survivors_of_heads.values() if s >= nodes.n_run)
    index_rows = sorted(index_rows_needed)
    index_meta = dict(zip(index_rows, describe(index_rows), strict=True))

    decisions: dict[int, dict[str, Any]] = {}
    cluster_members: dict[tuple[str, int], list[int]] = defaultdict(list)  # survivor -> dropped rows
    cluster_size: dict[tuple[str, int], int] = {}

    def similarity(row: int, target_node: int) -> float:
        return float((sig[row] == nodes.sigs(np.array([target_node]))[0]).mean())

    for row in (
        np.flatnonzero(rep != np.arange(n)).tolist()
        + list(survivors_of_heads)
        + np.flatnonzero(index_exact >= 0).tolist()
    ):
        if row in decisions:
            continue
        head = int(rep[row])
        if index_exact[head] >= 0:
            entry = int(index_exact[head])
            meta = index_meta[entry]
            target = ("index", entry)
            size = int(group_size[head]) + 1
            decisions[row] = _drop("exact_duplicate", meta.get("id"), meta.get("source"), 1.0, size, meta.get("run"))
        elif head in survivors_of_heads:
            s = survivors_of_heads[head]
            size = int(comp_docs[node_of_row[head]])
            if s >= nodes.n_run:
                meta = index_meta[s - nodes.n_run]
                target = ("index", s - nodes.n_run)
                decisions[row] = _drop(
                    "near_duplicate", meta.get("id"), meta.get("source"), similarity(row, s), size, meta.get("run")
                )
            else:
                s_row = int(run_rows[s])
                target = ("run", s_row)
                same = bool(exact[row, 0] == exact[s_row, 0] and exact[row, 1] == exact[s_row, 1])
                decisions[row] = _drop(
                    "exact_duplicate" if same else "near_duplicate",
                    ids[s_row],
                    sources[data["source"][s_row]],
                    1.0 if same else similarity(row, s),
                    size,
                )
        else:
            node = node_of_row[head]
            size = int(comp_docs[node]) if node >= 0 else int(group_size[head])
            target = ("run", head)
            decisions[row] = _drop("exact_duplicate", ids[head], sources[data["source"][head]], 1.0, size)
        cluster_members[target].append(row)
        cluster_size[target] = size
    for target, members in cluster_members.items():
        if target[0] == "run":
            decisions[target[1]] = {
                "action": "keep",
                "cluster_size": cluster_size[target],
                "duplicates_dropped": len(members),
            }

    return decisions, cluster_members, cluster_size, node_of_row, index_meta


def _keep_mask(n: int, kind: np.ndarray, decisions: dict[int, dict[str, Any]]) -> np.ndarray:
    """Rows kept by the decisions that an index may learn from (normal and short documents)."""
    keep = np.ones(n, dtype=bool)
    for row, decision in decisions.items():
        if decision["action"] == "drop":
            keep[row] = False
    keep &= (kind == KIND_NORMAL) | (kind == KIND_SHORT)  # what an index may learn from this run

    return keep


def _write_decisions(out_dir: str, world_size: int, offsets, ids, decisions: dict[int, dict[str, Any]], keep) -> None:
    """``decisions/<rank>.jsonl.gz`` (rows by position within the rank) and ``keep.npy``."""
    os.makedirs(os.path.join(out_dir, "decisions"), exist_ok=True)
    rows_sorted = np.array(sorted(decisions), dtype=np.int64)
    bounds = np.searchsorted(rows_sorted, offsets)  # decisions of rank r: rows_sorted[bounds[r]:bounds[r + 1]]
    for rank in range(world_size):
        path = os.path.join(out_dir, "decisions", f"{rank:05d}.jsonl.gz")
        with atomic_open(path, "wt", opener=gzip.open, compresslevel=3) as handle:
            for row in rows_sorted[bounds[rank] : bounds[rank + 1]].tolist():
                record = {"position": row - int(offsets[rank]), "id": ids[row], **decisions[row]}
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    np.save(os.path.join(out_dir, "keep.npy"), keep)


def _expected_counts(data: dict[str, Any], decisions: dict[int, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per source, the counts the filter stage must reproduce (checked by ``dedup_finish``)."""
    sources, kind = data["sources"], data["kind"]
    per_source: dict[str, dict[str, Any]] = {}
    for code, name in enumerate(sources):
        rows_of = data["source"] == code
        per_source[name] = {
            "input": int(rows_of.sum()),
            "unreadable": int((kind[rows_of] == KIND_INVALID).sum()),
            "empty": int((kind[rows_of] == KIND_EMPTY).sum()),
            "short": int((kind[rows_of] == KIND_SHORT).sum()),
            "dropped": {},
        }
    for row, decision in decisions.items():
        if decision["action"] == "drop":
            counts = per_source[sources[data["source"][row]]]["dropped"]
            counts[decision["rule"]] = counts.get(decision["rule"], 0) + 1

    return per_source


def _top_clusters(signature_dir, world_size, data, config, decisions, cluster_members, cluster_size, index_meta):
    """The largest clusters with their survivor and up to three dropped examples (with snippets)."""
    ids, sources, offsets = data["ids"], data["sources"], data["offsets"]
    top = sorted(cluster_members, key=lambda t: (-cluster_size[t], t[0] != "index", t[1]))[: config.top_clusters]
    snippet_rows = {t[1] for t in top if t[0] == "run"} | {m for t in top for m in cluster_members[t][:3]}
    snippets = _read_snippets(signature_dir, world_size, offsets, snippet_rows)
    top_clusters = []
    for target in top:
        members = cluster_members[target]
        if target[0] == "run":
            row = target[1]
            survivor = {
                "id": redact_name(ids[row]),
                "source": sources[data["source"][row]],
                "snippet": snippets.get(row, ""),
            }
        else:
            survivor = {**index_meta[target[1]], "snippet": None}
        top_clusters.append(
            {
                "size": cluster_size[target],
                "survivor": survivor,
                "from_index": target[0] == "index",
                "dropped": len(members),
                "examples": [
                    {
                        "id": redact_name(ids[m]),
                        "source": sources[data["source"][m]],
                        "rule": decisions[m]["rule"],
                        "similarity": decisions[m]["similarity"],
                        "snippet": snippets.get(m, ""),
                    }
                    for m in members[:3]
                ],
            }
        )

    return top_clusters


def _drop(rule: str, duplicate_of, duplicate_source, similarity: float, size: int, matched_run=None) -> dict:
    decision = {
        "action": "drop",
        "rule": rule,
        "duplicate_of": duplicate_of,
        "duplicate_source": duplicate_source,
        "similarity": round(float(similarity), 4),
        "cluster_size": int(size),
    }
    if matched_run is not None:
        decision["matched_run"] = matched_run
    return decision


def _size_bucket(size: int) -> str:
    if size <= 2:
        return "2"
    low = 1 << (int(size - 1).bit_length() - 1)
    return f"{low + 1}-{low * 2}"


def _bucket_order(bucket: str) -> int:
    return int(bucket.split("-")[0])


def _read_snippets(signature_dir: str, world_size: int, offsets: np.ndarray, rows: set[int]) -> dict[int, str]:
    out: dict[int, str] = {}
    if not rows:
        return out
    for rank in range(world_size):
        lo, hi = int(offsets[rank]), int(offsets[rank + 1])
        wanted = {r - lo for r in rows if lo <= r < hi}
        if not wanted:
            continue
        with gzip.open(rank_paths(signature_dir, rank)[".docs.jsonl.gz"], "rt", encoding="utf-8") as handle:
            for position, line in enumerate(handle):
                if position in wanted:
                    out[lo + position] = json.loads(line)[3]
    # the report and the Prefect artifact quote these: redacted (also when the recipe has no PII stage); a
    # snippet of SNIPPET_CHARS was cut from a longer text, so a value at its end may be cut too

    return {row: redacted_snippet(text, complete=len(text) < SNIPPET_CHARS) for row, text in out.items()}


def _peak_rss() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)
