"""The ``plan`` Prefect flow: the budget check as a flow run, with the report published as an artifact.

Thin by design: options in, ``training.plan.options.plan_from_options`` and ``training.plan.report`` do the work;
the flow adds the run logger, the markdown artifact and (given ``output``) the report files.
"""

from __future__ import annotations

from typing import Any

from prefect import flow, get_run_logger

import flows  # noqa: F401  (telemetry off before Prefect loads)
from flows.artifacts import publish_plan_artifact
from training.plan.options import PlanOptions, load_plan_options, plan_from_options
from training.plan.planner import check
from training.plan.report import render_markdown, write_report


@flow(name="plan", log_prints=True)
def plan(options: dict[str, Any] | None = None, recipe: str | None = None, output: str | None = None) -> dict:
    """Plan from ``options`` (the ``tokenmill plan`` option names) and/or a YAML file with a ``plan:`` section.

    Returns the plan JSON with ``blocking`` problems; publishes the report as the ``training-plan`` artifact.
    """
    logger = get_run_logger()
    overrides = dict(options or {})
    parsed = load_plan_options(recipe, overrides) if recipe else PlanOptions.model_validate(overrides)
    result = plan_from_options(parsed, origin=recipe)
    blocking = check(result)
    for verdict in result.verdicts:
        logger.info("verdict: %s", verdict)
    for warning in result.warnings:
        logger.warning(warning)
    if output:
        paths = write_report(result, output)
        markdown = paths.text
        logger.info("report: %s", paths.markdown)
    else:
        markdown = render_markdown(result, png=None, blocking=blocking)
    publish_plan_artifact(markdown)  # image lines dropped: a relative link does not render in the Prefect UI
    return result.to_dict() | {"blocking": blocking}
