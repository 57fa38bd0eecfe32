"""One dedup as every entry point asks for it: ``tokenmill dedup`` (with or without Prefect) and the ``dedup`` flow
resolve their arguments here (``dedup_job``) and run the same ``pipeline.dedup.run.dedup_input``; the flow passes
its tasks as the steps. Imports no Prefect: a CLI run without a server never loads it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pipeline.config import ExecutorConfig
from pipeline.dedup.config import DedupConfig, recipe_dedup_settings
from pipeline.dedup.io import DedupInput
from pipeline.dedup.result import DedupResult
from pipeline.dedup.run import DedupSteps, dedup_input
from pipeline.executor import executor_factory
from pipeline.read.common import source_name_for

#: the executor of a dedup given none (and no recipe): one local rank at a time
LOCAL = {"kind": "local", "tasks": 1, "workers": 1}


@dataclasses.dataclass
class DedupJob:
    """One dedup, resolved: what it reads, where it writes, with which settings, priorities and executor."""

    source: DedupInput
    output_dir: str
    config: DedupConfig
    priorities: dict[str, int]
    executor: ExecutorConfig
    tasks: int | None = None
    restart: bool = False

    def run(self, steps: DedupSteps | None = None, log: Any = None) -> DedupResult:
        """``dedup_input`` with this job's arguments; ``steps``: the flow's tasks (default: plain calls)."""
        factory = executor_factory(self.executor, "dedup")
        return dedup_input(
            self.source,
            self.output_dir,
            self.config,
            self.priorities,
            factory,
            None,
            self.tasks,
            self.restart,
            steps,
            log,
        )


def dedup_job(
    run_dir: str | None = None,
    input: str | None = None,  # noqa: A002 - the flow's parameter name
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
) -> DedupJob:
    """The ``dedup`` flow's parameters (docstring of ``flows.dedup.dedup``) as a ``DedupJob``: the recipe's
    ``stages.dedup``, priorities and executor under ``config``/``priority``/``executor``."""
    from training.recipe import load_recipe

    loaded = None
    if recipe:
        loaded = load_recipe(recipe)
        executor = executor or loaded.executor.model_dump()
        tasks = tasks or loaded.executor.tasks
        run_dir = run_dir or (None if input else loaded.output_dir)
    settings, priorities = recipe_dedup_settings(loaded, config, priority)
    if (run_dir is None) == (input is None):
        raise ValueError("give exactly one of run_dir (a curation run) or input (a JSONL/Parquet dataset)")
    if run_dir is not None:
        spec, output_dir = DedupInput.curated(run_dir), run_dir
    elif input is not None and output is not None:
        spec, output_dir = DedupInput.dataset(input, source or source_name_for(input), text_key, id_key), output
    else:
        raise ValueError("input needs an output folder")
    config_model = DedupConfig.model_validate(settings)
    return DedupJob(
        spec, output_dir, config_model, priorities, ExecutorConfig.model_validate(executor or LOCAL), tasks, restart
    )
