"""Every markdown artifact the flows publish, in one place, each through the renderer report.md uses.

The renderers live with their stage: the curation funnel and the classify, toxicity and decontamination sections
in ``pipeline.curate.report``; the dedup result in ``pipeline.dedup.result``; the shard manifest in
``pipeline.tokenize.report``; the plan in ``training.plan.report`` (read back from the ``plan.md`` it wrote).
Artifacts drop image lines (``pipeline.report.without_images``): a link relative to the run directory does not
render in the Prefect UI.
Keys are what the UI and the tests look for: ``curation-funnel``, ``classify-scores``, ``decontamination``,
``dedup-summary`` (``dedup`` for the ``dedup`` flow), ``token-mix``, ``training-plan``, ``training-summary``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prefect.artifacts import create_markdown_artifact

import flows  # noqa: F401  (telemetry off before Prefect loads)
from pipeline.curate.report.classify import classify_markdown
from pipeline.curate.report.decontaminate import decontamination_markdown
from pipeline.curate.report.section import funnel_markdown
from pipeline.curate.report.toxicity import toxicity_markdown
from pipeline.dedup.result import DedupResult, dedup_report_md
from pipeline.layout import RunLayout
from pipeline.report import without_images
from pipeline.shards.format import ShardManifest
from pipeline.tokenize.report import shards_markdown

#: publish(key, markdown, description)
Publish = Callable[[str, str, str], None]

DEDUP_DESCRIPTION = "tokenmill dedup: documents kept and dropped as duplicates, per source and rule"
PLAN_DESCRIPTION = "tokenmill training plan: Chinchilla budget check, verdicts (blocking first), memory per GPU"


def publish_markdown(key: str, markdown: str, description: str) -> None:
    """One markdown artifact, image lines dropped."""
    create_markdown_artifact(key=key, markdown=without_images(markdown), description=description)


def publish_curation_artifacts(
    summary: dict[str, Any] | None, dedup: DedupResult | dict[str, Any] | None = None, name: str | None = None
) -> None:
    """The curation funnel, the classify/decontamination sections (when those stages ran) and the dedup result
    (when given) of a curation run; ``summary`` is the curation section's JSON, ``name`` the recipe's."""
    if summary:
        of = f" of {name}" if name else ""
        publish_markdown(
            "curation-funnel",
            funnel_markdown(summary),
            f"tokenmill curation{of}: documents read, kept and dropped per source and rule",
        )
        publish_model_stage_artifacts(summary)
    if dedup:
        publish_dedup_artifact(dedup)


def publish_model_stage_artifacts(summary: dict[str, Any], publish: Publish = publish_markdown) -> None:
    """The classify score summary and the contamination per eval set, rendered as report.md renders them
    (``pipeline.curate.report.classify`` / ``decontaminate``); nothing when the stages are off."""
    if summary.get("classify"):
        description = "tokenmill classify: scores of the kept documents, drops and top_percent cutoffs per classifier"
        publish("classify-scores", classify_markdown(summary["classify"]), description)
    if summary.get("toxicity"):
        description = "tokenmill toxicity: documents dropped by rule, kept scores and unscored documents per source"
        publish("toxicity", toxicity_markdown(summary["toxicity"]), description)
    if summary.get("decontamination"):
        description = "tokenmill decontaminate: documents dropped or cut, matches and top items per eval set"
        publish("decontamination", decontamination_markdown(summary["decontamination"]), description)


def publish_dedup_artifact(
    result: DedupResult | dict[str, Any], key: str = "dedup-summary", description: str = DEDUP_DESCRIPTION
) -> None:
    """The dedup result as report.md's dedup section renders it."""
    publish_markdown(key, dedup_report_md(result), description)


def publish_shards_artifact(manifest: ShardManifest | dict[str, Any], of: str | None = None) -> None:
    """The shard manifest (``token-mix``) as report.md's shards section renders it; ``of``: what was tokenized.

    Takes the JSON too: both callers (``tokenize`` flow, ``publish_stage_artifacts``) hold the tokenize task's
    result, which Prefect passes as the manifest's JSON."""
    description = "tokenmill token shards: tokens per source and split" + (f" of {of}" if of else "")
    publish_markdown("token-mix", shards_markdown(ShardManifest.from_dict(manifest)), description)


def publish_plan_artifact(plan_markdown: str) -> None:
    """The plan as ``training.plan.report.render_markdown`` wrote it (``plan.md``)."""
    publish_markdown("training-plan", plan_markdown, PLAN_DESCRIPTION)


def publish_stage_artifacts(layout: RunLayout, results: dict[str, Any]) -> None:
    """The ``pipeline`` flow's artifacts, one per stage that ran (kept/dropped by rule, dedup, mix, plan,
    training), each with a description and without image links."""
    publish_curation_artifacts(results.get("curation"), results.get("dedup"))
    if results.get("tokenize"):
        publish_shards_artifact(results["tokenize"])
    if (layout.root / "plan.md").exists():
        publish_plan_artifact((layout.root / "plan.md").read_text(encoding="utf-8"))
    train_report = layout.root / "train" / "train_report.md"
    if results.get("train") and train_report.exists():
        publish_markdown(
            "training-summary", train_report.read_text(encoding="utf-8"), "tokenmill training: steps, loss, time"
        )
