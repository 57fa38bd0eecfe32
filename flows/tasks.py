"""The Prefect tasks of a curation run, defined once: the ``curate`` flow and the ``pipeline`` flow both use them.

Each task is one call into ``pipeline.run`` (the same functions a CLI run without Prefect calls). The names are
what the Prefect UI shows (``curate-<source>``, ``dedup``, ``account-and-report``, ``tokenize``). Tasks take
the run directory explicitly, plus an optional ``cache_key``: the ``pipeline`` flow applies its stage options
(``flows.end_to_end.STAGE_TASK``: cache key, persisted result, retries) with ``Task.with_options``; the
``curate`` flow runs them as they are (no cache, no retries). Results persist as JSON only (``flows.results``).
"""

from __future__ import annotations

from typing import Any

from prefect import task

import flows  # noqa: F401  (telemetry off before Prefect loads)
from flows.results import PERSISTED
from pipeline.config import CurationRecipe
from pipeline.executor import executor_factory
from pipeline.layout import RunLayout
from pipeline.run import account_and_report_json, curate_one_source, dedup_run_dir_json, run_tokenize_stage
from training.recipe import Recipe


@task(name="curate-source", **PERSISTED, task_run_name="curate-{source_name}")
def curate_source_task(recipe: CurationRecipe, source_name: str, run_dir: str, cache_key: str | None = None) -> str:
    """Curate one source into ``run_dir``; its curation fingerprint."""
    return curate_one_source(recipe, source_name, run_dir)


@task(name="dedup", **PERSISTED)
def dedup_task(recipe: CurationRecipe, run_dir: str, cache_key: str | None = None) -> dict[str, Any]:
    """Dedup every curated source of the run (the recipe's executor); the ``DedupResult`` as JSON."""
    return dedup_run_dir_json(recipe, run_dir)


@task(name="account-and-report", **PERSISTED)
def account_and_report_task(
    recipe: CurationRecipe, run_dir: str, dedup: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Check read == kept + dropped per source, write report.md/report.json (with the dedup section when given);
    the ``CurationSummary`` as JSON."""
    return account_and_report_json(recipe, run_dir, dedup)


@task(name="tokenize", **PERSISTED)
def tokenize_task(recipe: Recipe, run_dir: str, cache_key: str | None = None) -> dict[str, Any]:
    """Tokenize the run's kept documents into ``shards/`` on the recipe's executor; the shard manifest."""
    layout = RunLayout.at(run_dir)
    return run_tokenize_stage(recipe, layout, executor_factory(recipe.executor, "tokenize")).raw
