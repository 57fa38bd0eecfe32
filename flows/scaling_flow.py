"""The ``scaling-ladder`` Prefect flow: the CLI's ``run_ladder``, with each cool-down branch (and the trunk segment
before it) a task run.

Thin by design: the flow runs ``training.ladder.run_ladder`` as ``tokenmill scaling ladder`` does (the folder's
lock, the plan, the progress lines, the fit and the report), passing it a ``train`` that calls the branch task,
so a rerun of the flow skips every branch whose ``result.json`` exists and resumes an interrupted trunk or branch
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


@flow(name="scaling-ladder", log_prints=True)
def ladder(config: dict[str, Any], plan_options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Train the ladder ``config`` describes (``LadderConfig`` fields: shards, output, widths, …), fit the law
    and write the report; ``plan_options`` (``PlanOptions`` fields) is the team's plan to redo with the fit."""

    from training.ladder import BranchResult, load_ladder_config, run_ladder
    from training.plan.options import PlanOptions

    logger = get_run_logger()
    settings = load_ladder_config(config)
    options = PlanOptions.model_validate(plan_options) if plan_options is not None else None

    def train(plan: Any, rung: Any, branch: Any, on_step: Any) -> BranchResult:
        # the task takes JSON parameters (the config, not the plan); its progress is its task run's state
        return BranchResult(branch_task(config, rung.width, branch.tokens_per_param))

    report = run_ladder(settings, options, say=logger.info, train=train)
    assert report.report_md is not None, "run_ladder writes the Markdown"
    markdown = Path(report.report_md).read_text(encoding="utf-8")
    create_markdown_artifact(key="scaling-ladder", markdown=markdown, description=f"ladder {settings.output}")
    return {"output": settings.output, "fit": report.fit, "files": report.to_dict()["files"]}
