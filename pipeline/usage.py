"""What each rank cost where it ran: CPU seconds and peak memory, recorded by the rank itself, summed per run.

On Slurm and Ray the ranks run in other processes on other machines, so the CLI's own CPU clock (what
``benchmarks/`` measure locally) misses them. Each rank writes ``<logging_dir>/usage/<rank>.json`` next to
datatrove's ``completions/`` (the logging folder is on the shared filesystem every engine needs anyway);
``workers_summary`` sums them for report.json's ``workers`` section.
"""

from __future__ import annotations

import json
import os
import resource
import socket
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

if TYPE_CHECKING:
    from datatrove.io import DataFolder

USAGE_DIR = "usage"


class RankUsage(BaseModel):
    """One rank's cost: CPU of the rank (its process and the subprocesses it waited for) and the peak RSS of the
    process that ran it (a reused local pool worker reports its own high-water mark, which may predate the rank)."""

    rank: int
    host: str
    cpu_s: float
    peak_rss_mb: float


class StepUsage(BaseModel):
    ranks: int
    cpu_s: float
    peak_rss_mb: float


class WorkersSummary(BaseModel):
    """report.json ``workers``: every recorded rank of the run, summed (CPU) and maxed (peak memory)."""

    ranks: int
    hosts: list[str]
    cpu_s: float
    peak_rss_mb: float
    steps: dict[str, StepUsage]


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class RecordsUsage:
    """Mixin for a datatrove executor: each rank it runs writes its ``RankUsage``.

    Placed before the executor class (``class X(RecordsUsage, LocalPipelineExecutor)``), so it wraps datatrove's
    ``_run_for_rank`` on every engine: local pool workers, Slurm array tasks and Ray workers all call it."""

    # datatrove's, from the executor class after this mixin (annotations only: no attribute here)
    is_rank_completed: Callable[[int], bool]
    logging_dir: DataFolder

    def _run_for_rank(self, rank: int, local_rank: int = 0, node_rank: int = -1):
        # super(): the executor's _run_for_rank, a later base than mypy's view of this mixin (object) shows
        if self.is_rank_completed(rank):
            return super()._run_for_rank(rank, local_rank, node_rank)  # type: ignore[misc]
        started = _cpu()
        stats = super()._run_for_rank(rank, local_rank, node_rank)  # type: ignore[misc]
        peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # Linux: kilobytes
        usage = RankUsage(
            rank=rank,
            host=os.environ.get("SLURMD_NODENAME") or socket.gethostname(),  # Slurm's node name, else the host
            cpu_s=round(_cpu() - started, 3),
            peak_rss_mb=round(peak_kb / 1024, 1),
        )
        with self.logging_dir.open(f"{USAGE_DIR}/{rank:05d}.json", "w") as handle:
            handle.write(usage.model_dump_json())
        return stats


def workers_summary(root: str | Path) -> WorkersSummary | None:
    """Sum the ranks' usage files under a run (``stages/**/usage/*.json``, ``shards/logs/**``); None if none."""
    root = Path(root)
    steps: dict[str, list[RankUsage]] = {}
    for path in sorted(root.glob(f"**/{USAGE_DIR}/*.json")):
        step = str(path.parent.parent.relative_to(root))
        try:
            steps.setdefault(step, []).append(RankUsage.model_validate(json.loads(path.read_text(encoding="utf-8"))))
        except (OSError, ValueError):
            continue  # a rank killed while writing it: its cost is unknown, the rank reruns and rewrites it
    if not steps:
        return None
    ranks = [u for usages in steps.values() for u in usages]
    return WorkersSummary(
        ranks=len(ranks),
        hosts=sorted({u.host for u in ranks}),
        cpu_s=round(sum(u.cpu_s for u in ranks), 3),
        peak_rss_mb=max(u.peak_rss_mb for u in ranks),
        steps={
            step: StepUsage(
                ranks=len(us), cpu_s=round(sum(u.cpu_s for u in us), 3), peak_rss_mb=max(u.peak_rss_mb for u in us)
            )
            for step, us in steps.items()
        },
    )


def workers_markdown(summary: WorkersSummary) -> str:
    lines = [
        "## Workers",
        "",
        f"{summary.ranks} ranks on {len(summary.hosts)} host(s) ({', '.join(summary.hosts)}): "
        f"{summary.cpu_s:.1f} CPU-s in all, peak RSS {summary.peak_rss_mb:.0f} MB (largest rank).",
        "",
        "| step | ranks | CPU-s | peak RSS MB |",
        "|---|---:|---:|---:|",
    ]
    lines += [f"| {name} | {s.ranks} | {s.cpu_s:.1f} | {s.peak_rss_mb:.0f} |" for name, s in summary.steps.items()]
    return "\n".join(lines) + "\n"
