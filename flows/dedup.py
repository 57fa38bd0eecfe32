"""The ``dedup`` Prefect flow: signatures in parallel ranks, clustering in one task, filtering in the ranks.

Thin by design: each task is one call into ``pipeline.dedup.run`` (the same functions ``run_dedup`` chains);
the flow adds the recipe lookup (``stages.dedup``, source priorities, executor section), logging, and a
markdown artifact with the dedup section of the report. Every step resumes from the run directory, so a
retried or re-run flow continues where the last one stopped.
"""

from __future__ import annotations

from typing import Any

from prefect import flow, get_run_logger, task

import flows  # noqa: F401  (telemetry off before Prefect loads)
from flows.artifacts import publish_dedup_artifact
from flows.results import NOT_PERSISTED
from pipeline.lock import hold


def _executor_factory(executor: dict[str, Any] | None):
    """datatrove executors as the recipe's ``executor`` section describes (local with 1 worker by default)."""
    from pipeline.config import ExecutorConfig
    from pipeline.executor import executor_factory

    return executor_factory(
        ExecutorConfig.model_validate(executor or {"kind": "local", "tasks": 1, "workers": 1}), "dedup"
    )


def _plan(plan: dict[str, Any]):
    from pipeline.dedup.run import DedupPlan

    return DedupPlan(**plan)


def _config(config: dict[str, Any]):
    from pipeline.dedup.config import DedupConfig

    return DedupConfig.model_validate(config)


@task(name="dedup-plan", **NOT_PERSISTED)
def plan_task(
    source: dict[str, Any],
    output_dir: str,
    config: dict[str, Any],
    run_name: str | None,
    tasks: int | None,
    restart: bool,
) -> dict[str, Any]:
    import dataclasses

    from pipeline.dedup.io import DedupInput
    from pipeline.dedup.run import plan_dedup

    plan = plan_dedup(DedupInput(**source), output_dir, _config(config), run_name, tasks, restart)
    return dataclasses.asdict(plan)


@task(name="dedup-signatures", **NOT_PERSISTED)
def signatures_task(plan: dict[str, Any], config: dict[str, Any], executor: dict[str, Any] | None) -> None:
    from pipeline.dedup.run import dedup_signatures

    dedup_signatures(_plan(plan), _config(config), _executor_factory(executor))


@task(name="dedup-cluster", **NOT_PERSISTED)
def cluster_task(
    plan: dict[str, Any], config: dict[str, Any], priority: dict[str, int], executor: dict[str, Any] | None
) -> None:
    from pipeline.dedup.run import dedup_cluster

    dedup_cluster(_plan(plan), _config(config), priority, _executor_factory(executor))


@task(name="dedup-filter", **NOT_PERSISTED)
def filter_task(plan: dict[str, Any], executor: dict[str, Any] | None) -> None:
    from pipeline.dedup.run import dedup_filter

    dedup_filter(_plan(plan), _executor_factory(executor))


@task(name="dedup-finish", **NOT_PERSISTED)
def finish_task(plan: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    from pipeline.dedup.run import dedup_finish

    return dedup_finish(_plan(plan), _config(config)).to_dict()


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
    import os

    from pipeline.dedup.config import recipe_dedup_settings
    from pipeline.dedup.io import DedupInput
    from pipeline.read.common import source_name_for

    loaded = None
    if recipe:
        from training.recipe import load_recipe

        loaded = load_recipe(recipe)
        executor = executor or loaded.executor.model_dump()
        tasks = tasks or loaded.executor.tasks
        run_dir = run_dir or (None if input else loaded.output_dir)
    settings, priorities = recipe_dedup_settings(loaded, config, priority)
    if (run_dir is None) == (input is None):
        raise ValueError("give exactly one of run_dir (a curation run) or input (a JSONL/Parquet dataset)")
    if run_dir is not None:
        source_spec, output_dir = DedupInput.curated(run_dir), run_dir
    else:
        if output is None:
            raise ValueError("input needs an output folder")
        source_spec = DedupInput.dataset(input, source or source_name_for(input), text_key, id_key)
        output_dir = output
    import dataclasses

    with hold(output_dir, "dedup"):  # a second dedup (or a curation) on this folder is refused at once
        return _dedup_locked(
            dataclasses.asdict(source_spec), os.path.abspath(output_dir), settings, priorities, executor, tasks, restart
        )


def _dedup_locked(
    source_spec: dict[str, Any],
    output_dir: str,
    settings: dict[str, Any],
    priorities: dict[str, int],
    executor: dict[str, Any] | None,
    tasks: int | None,
    restart: bool,
) -> dict[str, Any]:
    logger = get_run_logger()
    plan = plan_task(source_spec, output_dir, settings, None, tasks, restart)
    logger.info(
        "dedup %s → %s (%d ranks, %d input files)",
        source_spec["folder"],
        plan["output_dir"],
        plan["tasks"],
        plan["files"],
    )
    signatures_task(plan, settings, executor)
    cluster_task(plan, settings, priorities, executor)
    filter_task(plan, executor)
    result = finish_task(plan, settings)
    publish_dedup_artifact(result, key="dedup", description=f"tokenmill dedup of {source_spec['folder']}")
    for problem in result["problems"]:
        logger.warning(problem)
    logger.info("dedup: %d in, %d kept, %d dropped", result["documents"], result["kept"], result["dropped"])
    return result
