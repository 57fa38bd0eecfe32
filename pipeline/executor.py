"""The datatrove executor every stage's ranks run under, as the recipe's ``executor`` section describes (local,
Slurm, Ray), and the forkserver preload that local ranks share.

Curation, dedup and tokenize all place their ranks through ``build_executor`` / ``executor_factory``, so the
same recipe scales out without edits; it sits at ``pipeline``'s root (not in ``curate/``) so that dedup and
tokenize do not import curation to get it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import multiprocess
from datatrove.pipeline.base import PipelineStep

from pipeline import progress
from pipeline.local_executor import GuardedLocalExecutor
from pipeline.ray_engine import UsageRayExecutor
from pipeline.redact import save_executor_json
from pipeline.slurm import WaitingSlurmExecutor
from pipeline.usage import RecordsUsage

if TYPE_CHECKING:  # read, never built, here: the recipe (pipeline.config) sits above the stages that run ranks
    from datatrove.executor.base import PipelineExecutor

    from pipeline.config import ExecutorConfig

    #: ``(pipeline, logging_dir, tasks=None) -> executor``: what ``executor_factory`` returns
    ExecutorFactory = Callable[[list[PipelineStep], str, int | None], PipelineExecutor]

#: Modules every local rank of a curation, dedup or tokenize pipeline imports when its pipeline is unpickled.
FORKSERVER_PRELOAD = (
    "datatrove.executor.local",
    "datatrove.pipeline.writers.jsonl",
    "pipeline.accounting",
    "pipeline.progress",
    "pipeline.curate.routing",
    "pipeline.read.folder",
    "pipeline.read.tabular",
    "pipeline.read.warc",
    "pipeline.curate.extract",
    "pipeline.curate.language",
    "pipeline.curate.pii",
    "pipeline.curate.quality",
    "pipeline.dedup.filter",
    "pipeline.dedup.io",
    "pipeline.dedup.signatures",
)


class RedactingLocalExecutor(GuardedLocalExecutor):
    """datatrove's local executor whose ``executor.json`` names no file holding a value (``redact_name``) and
    whose pool workers die with the run (``pipeline.local_executor``)."""

    def save_executor_as_json(self, indent: int = 4) -> None:
        save_executor_json(self, indent)


def preload_forkserver(pipeline: list) -> list[str]:
    """Have datatrove's forkserver import the ranks' modules once, so that each pool worker forked from it
    starts with them instead of importing them itself; returns the list set.

    ``LocalPipelineExecutor`` runs ranks in a ``multiprocess`` forkserver pool, and every worker unpickles the
    pipeline, importing the stages, readers and their libraries anew: ~0.5 CPU-s per worker, 12 workers for a
    4-file crawl through curate + dedup's signature and filter steps (``benchmarks/fixed_cost.py``). The
    forkserver is started once per process, by the first pool, and serves every later pool, so the list is
    what this process's pipelines need (``FORKSERVER_PRELOAD`` plus the modules of this pipeline's steps). A
    forkserver already running keeps its list (the setting is a hint, as ``multiprocess`` says).
    """
    modules = ["__main__", *FORKSERVER_PRELOAD]
    modules += sorted({type(step).__module__ for step in pipeline} - {"builtins", "__main__"})
    modules += [m for step in pipeline for m in getattr(step, "forkserver_preload", ())]  # e.g. a loaded model
    modules = list(dict.fromkeys(modules))
    multiprocess.get_context("forkserver").set_forkserver_preload(modules)
    return modules


#: Below this many input bytes, ``workers: -1`` runs a local pipeline's ranks one after another in this process
#: instead of in a pool. A pool costs a forkserver (a Python start plus the ranks' imports and the toxicity model,
#: ~1.5-3 CPU-s) and a manager and worker processes per step: the 2,000-page crawl (6 MB in 4 WARC files) cost
#: 17-19 CPU-s with pools for curation and dedup's four steps, of which the ranks' own work was ~8
#: (``benchmarks/fixed_cost.py`` on the 2-core VM). 16 MiB of WARC is ~6,500 generated pages, ~8 CPU-s of work
#: in one rank: past that, parallel ranks save more wall time than the pool costs in CPU. The ranks, and
#: so every output file, are the same either way.
IN_PROCESS_BELOW_BYTES = 16 * 1024 * 1024


def local_workers(config: ExecutorConfig, tasks: int, input_bytes: int | None = None) -> int:
    """Concurrent local ranks: ``executor.workers`` (``-1``: every rank), but one -- the ranks in this process,
    no pool -- when ``workers`` is ``-1`` and the input is smaller than ``IN_PROCESS_BELOW_BYTES``."""
    if config.workers != -1:
        return max(1, min(config.workers, tasks))
    if input_bytes is not None and input_bytes < IN_PROCESS_BELOW_BYTES:
        return 1
    return tasks


def build_executor(
    config: ExecutorConfig,
    pipeline: list[PipelineStep],
    logging_dir: str | Path,
    tasks: int | None = None,
    job_name: str = "tokenmill",
    depends: Any = None,
    input_bytes: int | None = None,
) -> PipelineExecutor:
    """A datatrove executor for ``pipeline`` as the recipe's executor section describes. ``input_bytes``: the size
    of what the ranks read, when known; a small input runs its local ranks in this process (``local_workers``)."""
    tasks = tasks or config.tasks
    workers = config.workers if config.workers != -1 else tasks
    logging_dir = str(logging_dir)
    if config.kind == "local":
        workers = local_workers(config, tasks, input_bytes)
        return _local_executor(pipeline, tasks, min(workers, tasks), logging_dir, job_name, depends)
    if config.kind == "slurm":
        return _slurm_executor(config, pipeline, tasks, workers, logging_dir, job_name, depends)
    ray_cfg = config.ray
    ensure_ray(ray_cfg.address if ray_cfg else None)

    return UsageRayExecutor(
        pipeline=pipeline,
        tasks=tasks,
        workers=workers,
        logging_dir=logging_dir,
        cpus_per_task=ray_cfg.cpus_per_task if ray_cfg else 1,
        mem_per_cpu_gb=ray_cfg.mem_per_cpu_gb if ray_cfg else 2,
        depends=depends,
    )


def _local_executor(
    pipeline: list[PipelineStep], tasks: int, workers: int, logging_dir: str, job_name: str, depends: Any
) -> UsageLocalExecutor | UsageProgressExecutor:
    """Ranks in processes of this machine (forked from a preloaded forkserver when more than one runs at once),
    with a progress line when the CLI asked for one."""
    if workers > 1:
        preload_forkserver(pipeline)

    if progress.mode() != "off":  # the CLI asked for a progress line (pipeline.progress)
        label = job_name if job_name.startswith("curate") else f"{job_name} {Path(logging_dir).name}"
        return UsageProgressExecutor(
            pipeline=pipeline, tasks=tasks, workers=workers, logging_dir=logging_dir, depends=depends, label=label
        )
    return UsageLocalExecutor(pipeline=pipeline, tasks=tasks, workers=workers, logging_dir=logging_dir, depends=depends)


def _slurm_executor(
    config: ExecutorConfig,
    pipeline: list[PipelineStep],
    tasks: int,
    workers: int,
    logging_dir: str,
    job_name: str,
    depends: Any,
) -> Any:
    """A Slurm job array as the recipe's ``executor.slurm`` describes (the caller waits for it to finish)."""
    slurm = config.slurm
    assert slurm is not None  # validated by ExecutorConfig
    return WaitingSlurmExecutor(
        pipeline=pipeline,
        tasks=tasks,
        workers=workers,
        time=slurm.time,
        partition=slurm.partition,
        cpus_per_task=slurm.cpus_per_task,
        mem_per_cpu_gb=slurm.mem_per_cpu_gb,
        qos=slurm.qos or "normal",
        sbatch_args=slurm.sbatch_args or None,
        venv_path=slurm.venv_path or (None if slurm.env_command else running_venv()),
        env_command=slurm.env_command,
        job_name=job_name,
        logging_dir=logging_dir,
        depends=depends,
    )


def running_venv() -> str | None:
    """The activate script of the virtualenv this process runs from (``None`` outside one): a Slurm array task
    starts a login shell of its own, which finds ``launch_pickled_pipeline`` only with the venv activated."""
    activate = Path(sys.prefix) / "bin" / "activate"
    return str(activate) if sys.prefix != sys.base_prefix and activate.is_file() else None


class UsageLocalExecutor(RecordsUsage, RedactingLocalExecutor):
    """datatrove's local executor; each rank records its CPU and peak memory (``pipeline.usage``)."""


class UsageProgressExecutor(RecordsUsage, progress.ProgressExecutor):
    """The progress-line local executor, recording each rank's usage as well."""


def executor_factory(
    config: ExecutorConfig, job_name: str = "tokenmill", input_bytes: int | None = None
) -> ExecutorFactory:
    """``(pipeline, logging_dir, tasks=None) -> executor`` as ``config`` describes: how the stages that run over a
    whole run (dedup, tokenize) get their ranks from the same executor section as curation. ``input_bytes``: the
    size of the data the stage reads (``build_executor``)."""

    def factory(pipeline: list[PipelineStep], logging_dir: str, tasks: int | None = None) -> PipelineExecutor:
        return build_executor(config, pipeline, logging_dir, tasks=tasks, job_name=job_name, input_bytes=input_bytes)

    return factory


def ensure_ray(address: str | None) -> None:
    """Connect to a Ray cluster (``address``) or start a local instance; datatrove expects one running."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray

    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
