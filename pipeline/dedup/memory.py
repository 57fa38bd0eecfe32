"""Memory accounting: bytes per document of each dedup step, and the bound of the clustering step.

The figures are what the code allocates (array dtypes), not guesses; ``benchmarks/dedup_bench.py`` compares
the bound with the measured allocation peak of the clustering step (tracemalloc, which sees numpy's buffers).
A user can compute the bound before a run:

    signatures (per rank)   27 B per document (exact hash 16, length 8, kind 1, source 2)
                            + ~30 B per character of the largest document (transient)
    clustering (one task)   N × (4·num_perm + 120 + id_bytes)   the run's N documents
                            + D × 700                            D documents dropped or surviving a cluster
                            + M × 80                             M index entries (signatures memory-mapped)
                            + C × 40                             C candidate pairs
                            + 2 × 8192 × 5·num_perm + 8 MiB      verification batch and working space
    filter (per rank)       ~700 B per decision of the rank (dropped or cluster survivors), nothing per kept doc

``id_bytes`` is the size of a Python ``str`` holding the id: 49 + its length for ASCII ids (plus 8 for the
list slot, counted in the 120).
"""

from __future__ import annotations

import sys

SIGNATURE_BYTES_PER_DOC = 27
SIGNATURE_BYTES_PER_CHAR = 30
CLUSTER_FIXED_BYTES_PER_DOC = 120
DECISION_BYTES = 700
INDEX_ENTRY_BYTES = 80
PAIR_BYTES = 40
VERIFY_PAIRS = 8192
WORKING_BYTES = 8 << 20


def ids_bytes(ids: list[str]) -> int:
    """Bytes held by the id strings themselves."""
    return int(sum(sys.getsizeof(i) for i in ids))


def cluster_bound(
    n_docs: int,
    num_perm: int,
    id_bytes_per_doc: float,
    n_index: int = 0,
    n_pairs: int = 0,
    n_decisions: int | None = None,
) -> int:
    """Upper estimate of the clustering step's memory in bytes (see module docstring)."""
    decisions = n_docs if n_decisions is None else n_decisions
    return int(
        n_docs * (4 * num_perm + CLUSTER_FIXED_BYTES_PER_DOC + id_bytes_per_doc)
        + decisions * DECISION_BYTES
        + n_index * INDEX_ENTRY_BYTES
        + n_pairs * PAIR_BYTES
        + 2 * VERIFY_PAIRS * 5 * num_perm
        + WORKING_BYTES
    )


def formula(num_perm: int) -> str:
    """The clustering bound as the report prints it, for this signature length."""
    constant = (2 * VERIFY_PAIRS * 5 * num_perm + WORKING_BYTES) / 2**20
    return (
        f"N × ({4 * num_perm} + {CLUSTER_FIXED_BYTES_PER_DOC} + id_bytes) + D × {DECISION_BYTES} "
        f"+ M × {INDEX_ENTRY_BYTES} + C × {PAIR_BYTES} + {constant:.0f} MiB (N documents, D dropped or cluster "
        f"survivors, M index entries, C candidate pairs)"
    )
