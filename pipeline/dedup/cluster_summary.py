"""The clustering step's summary: counts per source and rule, cluster-size histogram, largest clusters.

Read by ``run.dedup_finish`` (the counts the filter must reproduce) and shown in the report. Built from the
decisions only (``cluster.Decisions``) plus the signature manifests' per-source kinds: nothing per document.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np

from pipeline.dedup.config import DedupConfig
from pipeline.dedup.index_view import IndexView
from pipeline.dedup.signatures import SNIPPET_CHARS, SignatureSet
from pipeline.redact import redact_name, redacted_snippet

if TYPE_CHECKING:
    from pipeline.dedup.cluster import Decisions

RULES = ("exact_duplicate", "near_duplicate")


def cluster_summary(
    stage_dir: str, signatures: SignatureSet, view: IndexView, config: DedupConfig, d: Decisions, index_meta: dict
) -> dict[str, Any]:
    sources = signatures.sources
    row_source = _sources_of(signatures, d.rows)
    per_source: dict[str, dict[str, Any]] = {}
    for name, (normal, short, empty, invalid) in sorted(
        signatures.kind_counts().items(), key=lambda kv: sources.index(kv[0])
    ):
        per_source[name] = {
            "input": normal + short + empty + invalid,
            "unreadable": invalid,
            "empty": empty,
            "short": short,
            "dropped": {},
        }
    for (code, rule), count in sorted(Counter(zip(row_source.tolist(), d.rule.tolist(), strict=True)).items()):
        per_source[sources[code]]["dropped"][RULES[rule]] = count
    histogram = Counter(_size_bucket(int(size)) for size in d.target_size)
    from_index = d.target < 0
    return {
        "documents": signatures.total,
        "sources": sources,
        "per_source": per_source,
        "clusters": int(len(d.targets)),
        "cluster_size_histogram": dict(sorted(histogram.items(), key=lambda kv: _bucket_order(kv[0]))),
        "top_clusters": _top_clusters(signatures, config, d, index_meta, row_source),
        "index": {
            "entries_compared": view.total,
            "matched_exact": int(np.sum(from_index & (d.rule == 0))),
            "matched_near": int(np.sum(from_index & (d.rule == 1))),
        },
    }


def _sources_of(signatures: SignatureSet, rows: np.ndarray, chunk: int = 65_536) -> np.ndarray:
    out = np.empty(len(rows), dtype=np.int64)
    for start in range(0, len(rows), chunk):
        out[start : start + chunk] = signatures.cols(rows[start : start + chunk])["source"]
    return out


def _top_clusters(signatures, config, d, index_meta, row_source) -> list[dict[str, Any]]:
    """The largest clusters with their survivor and up to three dropped examples (with snippets)."""
    is_run = d.targets >= 0
    number = np.where(is_run, d.targets, -1 - d.targets)
    order = np.lexsort((number, is_run, -d.target_size))[: config.top_clusters]
    members = {int(d.targets[i]): np.flatnonzero(d.target == d.targets[i])[:3] for i in order}
    example_rows = [int(d.rows[m]) for ms in members.values() for m in ms]
    survivor_rows = [int(d.targets[i]) for i in order if d.targets[i] >= 0]
    wanted = sorted(set(example_rows + survivor_rows))
    ids = dict(zip(wanted, signatures.ids(np.array(wanted, dtype=np.int64)), strict=True))
    srcs = dict(zip(wanted, _sources_of(signatures, np.array(wanted, dtype=np.int64)).tolist(), strict=True))
    snippets = _read_snippets(signatures, set(wanted))
    sources = signatures.sources
    out = []
    for i in order.tolist():
        target = int(d.targets[i])
        if target >= 0:
            survivor = {
                "id": redact_name(ids[target]),
                "source": sources[srcs[target]],
                "snippet": snippets.get(target, ""),
            }
        else:
            survivor = {**index_meta[-1 - target], "snippet": None}
        out.append(
            {
                "size": int(d.target_size[i]),
                "survivor": survivor,
                "from_index": target < 0,
                "dropped": int(d.dropped[i]),
                "examples": [
                    {
                        "id": redact_name(ids[int(d.rows[m])]),
                        "source": sources[int(row_source[m])],
                        "rule": RULES[int(d.rule[m])],
                        "similarity": round(float(d.sim[m]), 4),
                        "snippet": snippets.get(int(d.rows[m]), ""),
                    }
                    for m in members[target].tolist()
                ],
            }
        )
    return out


def _size_bucket(size: int) -> str:
    if size <= 2:
        return "2"
    low = 1 << (int(size - 1).bit_length() - 1)
    return f"{low + 1}-{low * 2}"


def _bucket_order(bucket: str) -> int:
    return int(bucket.split("-")[0])


def _read_snippets(signatures: SignatureSet, rows: set[int]) -> dict[int, str]:
    out: dict[int, str] = {}
    for rank in range(signatures.world_size):
        lo, hi = int(signatures.offsets[rank]), int(signatures.offsets[rank + 1])
        wanted = {r - lo for r in rows if lo <= r < hi}
        if not wanted:
            continue
        last = max(wanted)
        with gzip.open(signatures.paths(rank)[".docs.jsonl.gz"], "rt", encoding="utf-8") as handle:
            for position, line in enumerate(handle):
                if position in wanted:
                    out[lo + position] = json.loads(line)[3]
                if position >= last:
                    break
    # the report and the Prefect artifact quote these: redacted (also when the recipe has no PII stage); a
    # snippet of SNIPPET_CHARS was cut from a longer text, so a value at its end may be cut too
    return {row: redacted_snippet(text, complete=len(text) < SNIPPET_CHARS) for row, text in out.items()}
