"""Every rank finished, or the command stops saying which did not: the check after a stage's executor returns.

datatrove's Ray executor logs ``Only 0/2 tasks completed`` and returns; its Slurm executor returns before any
rank ran. The stages after would then read a partial folder and the accounts still balance (nothing read,
nothing kept), so a run with documents missing looked fine (issue 20). datatrove's ``completions/<rank>``
markers are the authority on every engine.
"""

from __future__ import annotations

from typing import Any

from pipeline.errors import TokenmillError


class RankFailed(TokenmillError, RuntimeError):
    """A rank of a stage did not complete (failed, cancelled, timed out, node lost)."""


def incomplete_ranks(executor: Any) -> list[int]:
    """The ranks of a datatrove executor without a completion marker."""
    return [r for r in range(executor.world_size) if not executor.logging_dir.isfile(f"completions/{r:05d}")]


def check_ranks(executor: Any, engine: str, rank_log: Any = None) -> None:
    """Raise ``RankFailed`` (one line: the stage, the first unfinished rank, its log) unless every rank completed.

    ``rank_log(rank) -> str`` names the log to read (default: datatrove's ``logs/task_<rank>.log``)."""
    missing = incomplete_ranks(executor)
    if not missing:
        return
    rank = missing[0]
    log = rank_log(rank) if rank_log else executor.logging_dir.resolve_paths(f"logs/task_{rank:05d}.log")
    stage = getattr(executor, "job_name", None) or executor.logging_dir.path
    raise RankFailed(
        f"{engine} {stage}: rank {rank} did not finish "
        f"({len(missing)} of {executor.world_size} ranks unfinished); log: {log}; rerun the same command to resume"
    )
