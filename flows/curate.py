"""The ``curate`` Prefect flow: each source's stages as a task, then accounting and the report.

Thin by design: everything it does is a call into ``pipeline``; it adds logging through the run
logger, the markdown artifact with the funnel, and Prefect's retries/state tracking.
"""

from __future__ import annotations

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact

import flows  # noqa: F401  (telemetry off before Prefect loads)
from pipeline.config import Recipe, load_recipe
from pipeline.curate import curate_source
from pipeline.layout import RunLayout
from pipeline.report import curation_section, write_report
from pipeline.run import account_all, prepare_run_dir, recipe_for_input


@task(name="curate-source", task_run_name="curate-{source_name}")
def curate_source_task(recipe: Recipe, source_name: str, run_dir: str) -> str:
    source = next(s for s in recipe.sources if s.name == source_name)
    curate_source(recipe, source, RunLayout.at(run_dir))
    return source_name


@task(name="account-and-report")
def account_and_report_task(recipe: Recipe, run_dir: str) -> dict:
    layout = RunLayout.at(run_dir)
    accounts = account_all(recipe, layout)
    section_md, section_json = curation_section(layout, accounts)
    write_report(layout, recipe.name, {"curation": (section_md, section_json)})
    return section_json


def funnel_markdown(summary: dict) -> str:
    lines = ["| source | read | kept | dropped | balanced |", "|---|---:|---:|---:|:-:|"]
    for src in summary["sources"]:
        lines.append(
            f"| {src['source']} | {src['read']} | {src['kept_final']} | {src['dropped_total']} |"
            f" {'yes' if src['balanced'] else 'NO'} |"
        )
    lines += ["", "| source | stage | rule | dropped |", "|---|---|---|---:|"]
    for src in summary["sources"]:
        for stage, rules in src["dropped"].items():
            for rule, count in sorted(rules.items(), key=lambda kv: -kv[1]):
                lines.append(f"| {src['source']} | {stage} | {rule} | {count} |")
    return "\n".join(lines)


@flow(name="curate", log_prints=True)
def curate(recipe: str, input: str | None = None, output: str | None = None, overwrite: bool = False) -> dict:  # noqa: A002 - `input` is the deployment parameter name users type
    """Curate every source of ``recipe`` (or only ``input``, with the recipe's stages) into ``output``."""
    logger = get_run_logger()
    resolved = recipe_for_input(load_recipe(recipe), input, output)
    layout = prepare_run_dir(resolved, overwrite=overwrite)
    logger.info("run directory %s (config_hash %s)", layout.root, resolved.config_hash())
    for source in resolved.sources:
        logger.info("curating source %s (%s: %s)", source.name, source.kind, source.path)
        curate_source_task(resolved, source.name, str(layout.root))
    summary = account_and_report_task(resolved, str(layout.root))
    create_markdown_artifact(
        key="curation-funnel", markdown=funnel_markdown(summary), description=f"tokenmill curation of {resolved.name}"
    )
    logger.info("report: %s", layout.report_md)
    return {"run_dir": str(layout.root), "report": str(layout.report_md), **summary}
