"""The ``dedup`` Prefect flow: signatures in parallel ranks, clustering in one task, filtering in the ranks.

Thin by design: the flow is ``flows.dedup_job`` (the recipe lookup, the same call ``tokenmill dedup`` makes) with
the steps of ``pipeline.dedup.run.DedupSteps`` as tasks, plus logging and a markdown artifact with the dedup
section of the report. Every step resumes from the run directory, so a retried or re-run flow continues where
the last one stopped.
"""

from __future__ import annotations

from typing import Any

from prefect import flow, get_run_logger, task

import flows  # noqa: F401  (telemetry off before Prefect loads)
from flows.artifacts import publish_dedup_artifact
from flows.dedup_job import dedup_job
from flows.results import NOT_PERSISTED
from pipeline.dedup.run import DedupSteps, dedup_cluster, dedup_filter, dedup_finish, dedup_signatures, plan_dedup

plan_task = task(name="dedup-plan", **NOT_PERSISTED)(plan_dedup)
signatures_task = task(name="dedup-signatures", **NOT_PERSISTED)(dedup_signatures)
cluster_task = task(name="dedup-cluster", **NOT_PERSISTED)(dedup_cluster)
filter_task = task(name="dedup-filter", **NOT_PERSISTED)(dedup_filter)
finish_task = task(name="dedup-finish", **NOT_PERSISTED)(dedup_finish)

#: the dedup steps as the flow runs them: each a task of the Prefect run
TASK_STEPS = DedupSteps(plan_task, signatures_task, cluster_task, filter_task, finish_task)


@flow(name="dedup", log_prints=True)
def dedup(
    run_dir: str | None = None,
    input: str | None = None,  # noqa: A002 - the deployment parameter name users type
    output: str | None = None,
    recipe: str | None = None,
    config: dict[str, Any] | None = None,
    priority: dict[str, int] | None = None,
    executor: dict[str, Any] | None = None,
    source: str | None = None,
    text_key: str = "text",
    id_key: str = "id",
    tasks: int | None = None,
    restart: bool = False,
) -> dict[str, Any]:
    """Dedup a curation run (``run_dir``) or a JSONL/Parquet dataset (``input`` → ``output``).

    ``config`` overrides the recipe's ``stages.dedup``; ``priority`` maps source names to survivor priority
    (default: the recipe's ``sources[].priority``); ``executor`` is a recipe ``executor`` section (its
    ``tasks`` is ignored: ranks are ``config.tasks``, else ``tasks``, else the recipe's ``executor.tasks``,
    else one per input file).
    Returns the ``DedupResult`` as a dict.
    """
    logger = get_run_logger()
    job = dedup_job(
        run_dir, input, output, recipe, config, priority, executor, source, text_key, id_key, tasks, restart
    )
    result = job.run(TASK_STEPS, logger).to_dict()
    publish_dedup_artifact(result, key="dedup", description=f"tokenmill dedup of {job.source.folder}")
    for problem in result["problems"]:
        logger.warning(problem)
    logger.info("dedup: %d in, %d kept, %d dropped", result["documents"], result["kept"], result["dropped"])
    return result
