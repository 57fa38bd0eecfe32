"""The ``scaling-ladder`` Prefect flow: one task per trunk segment and cool-down branch, then the fit.

Thin by design: the tasks call ``training.ladder``'s functions (the CLI runs the same ones in-process), so a
rerun of the flow skips every branch whose ``result.json`` exists and resumes an interrupted trunk or branch
from its checkpoint. Named ``scaling_flow`` (not ``scaling``), like ``tokenize_flow``: Prefect loads an
entrypoint as a script with ``flows/`` on ``sys.path``, where ``flows/scaling.py`` would be importable as a
top-level ``scaling`` and shadow any package of that name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact

import flows  # noqa: F401  (telemetry off before Prefect loads)
from flows.results import NOT_PERSISTED


@task(name="ladder-branch", **NOT_PERSISTED, task_run_name="ladder-{width}-tpp-{tokens_per_param}")
def branch_task(config: dict[str, Any], width: int, tokens_per_param: float) -> dict[str, Any]:
    from training.ladder import load_ladder_config, plan_ladder, train_branch

    plan = plan_ladder(load_ladder_config(config))
    rung = next(r for r in plan.rungs if r.width == width)
    branch = next(b for b in rung.branches if b.tokens_per_param == tokens_per_param)
    return train_branch(plan, rung, branch).to_dict()


@task(name="ladder-fit", **NOT_PERSISTED)
def fit_task(config: dict[str, Any], plan_options: dict[str, Any] | None) -> dict[str, Any]:
    from training.ladder import finish_ladder, load_ladder_config, plan_ladder
    from training.plan.options import PlanOptions

    options = PlanOptions.model_validate(plan_options) if plan_options is not None else None
    return finish_ladder(plan_ladder(load_ladder_config(config)), options).to_dict()


@flow(name="scaling-ladder", log_prints=True)
def ladder(config: dict[str, Any], plan_options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Train the ladder ``config`` describes (``LadderConfig`` fields: shards, output, widths, …), fit the law
    and write the report; ``plan_options`` (``PlanOptions`` fields) is the team's plan to redo with the fit."""

    from training.ladder import REPORT_MD, load_ladder_config, plan_ladder, prepare_output

    logger = get_run_logger()
    settings = load_ladder_config(config)
    plan = plan_ladder(settings)
    prepare_output(plan)
    logger.info(
        "ladder of %d sizes × %d token counts into %s", len(plan.rungs), len(settings.tokens_per_param), settings.output
    )
    # sequential on purpose: a trunk segment must exist before the branches that start from it
    for rung in plan.rungs:
        for branch in rung.branches:
            result = branch_task(config, rung.width, branch.tokens_per_param)
            logger.info("%s %s: loss %.4f", rung.name, branch.name, result["loss"])
    report = fit_task(config, plan_options)
    markdown = (Path(settings.output) / REPORT_MD).read_text(encoding="utf-8")
    create_markdown_artifact(key="scaling-ladder", markdown=markdown, description=f"ladder {settings.output}")
    return {"output": settings.output, "fit": report["fit"], "files": report["files"]}
