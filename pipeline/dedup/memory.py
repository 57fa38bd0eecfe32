"""Memory accounting: what each dedup process holds, and the peak RSS every rank records.

No process holds per-document state for the whole corpus; each step's memory is a fixed part (the
interpreter, numpy, datatrove: 60–100 MB RSS measured) plus what it works on:

    signatures (per rank)   one chunk: CHUNK × (4·num_perm + 60) B (18 MiB at 128) + the largest document
                            (~30 B per character, transient)
    exact, buckets (ranks)  one unit: ≤ UNIT_RECORDS records × ~80 B (≤ 40 MiB), whatever the corpus size,
                            + the exact units' output (copies and index-matched heads, 16 B each)
    clustering (one task)   pairs only: C × 40 (C candidate pairs) + D × 120 (D documents dropped or
                            surviving a cluster, and the graph's nodes) + a verification batch of
                            2 × 8192 signatures
    filter (per rank)       one decision row at a time (streamed in position order beside the documents)
    index update            one chunk, streamed into the segment files

so the largest process grows with the duplicates, not with the documents. Every rank writes its peak RSS
to ``<stage>/memory/<step>-<rank>.json`` (``record_peak``); the report prints the largest per step, and
``benchmarks/dedup_bench.py --scale N`` measures the whole process tree (``RUSAGE_CHILDREN``).
"""

from __future__ import annotations

import json
import os
import resource
import sys

PAIR_BYTES = 40
DECISION_BYTES = 120
VERIFY_PAIRS = 8192


def peak_rss() -> int:
    """This process's peak resident memory in bytes."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


def record_peak(stage_dir: str, step: str, rank: int) -> None:
    """Write this process's peak RSS for one rank of one step (the report and the benchmark read them)."""
    folder = os.path.join(stage_dir, "memory")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"{step}-{rank:05d}.json"), "w", encoding="utf-8") as handle:
        json.dump({"step": step, "rank": rank, "peak_rss_bytes": peak_rss()}, handle)


def peaks(stage_dir: str) -> dict[str, int]:
    """Largest recorded peak RSS per step."""
    out: dict[str, int] = {}
    folder = os.path.join(stage_dir, "memory")
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        with open(os.path.join(folder, name), encoding="utf-8") as handle:
            record = json.load(handle)
        out[record["step"]] = max(out.get(record["step"], 0), int(record["peak_rss_bytes"]))
    return out


def cluster_bound(n_pairs: int, n_decisions: int, num_perm: int) -> int:
    """What the clustering task allocates beyond the interpreter (see module docstring)."""
    return int(n_pairs * PAIR_BYTES + n_decisions * DECISION_BYTES + 2 * VERIFY_PAIRS * 4 * num_perm)


def formula(num_perm: int) -> str:
    """The clustering bound as the report prints it, for this signature length."""
    constant = 2 * VERIFY_PAIRS * 4 * num_perm / 2**20
    return (
        f"C × {PAIR_BYTES} + D × {DECISION_BYTES} + {constant:.0f} MiB beyond the interpreter (C candidate pairs, "
        f"D dropped or cluster survivors); nothing per document"
    )
