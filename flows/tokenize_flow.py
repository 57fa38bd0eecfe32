"""The ``tokenize`` Prefect flow: a curation run (or any JSONL/Parquet input) → mixed token shards.

Thin by design: one task calls ``pipeline.tokenize.run_tokenize``; the flow adds the recipe lookup (source
weights/epochs, ``stages.tokenize`` once the recipe has it), run logging and the ``token-mix`` artifact (the
manifest table of report.md's shards section, ``flows.artifacts``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task

import flows  # noqa: F401  (telemetry off before Prefect loads)
from flows.artifacts import publish_shards_artifact
from flows.results import NOT_PERSISTED
from pipeline.shards.format import ShardManifest, SourceEntry


@task(name="tokenize-shards", **NOT_PERSISTED)
def tokenize_task(
    input_path: str,
    output_dir: str,
    config: dict[str, Any] | None = None,
    sources: dict[str, dict[str, float | None]] | None = None,
    recipe_hash: str | None = None,
) -> dict[str, Any]:
    from pipeline.tokenize.config import TokenizeConfig
    from pipeline.tokenize.run import run_tokenize

    return run_tokenize(input_path, output_dir, TokenizeConfig.model_validate(config or {}), sources, None, recipe_hash)


@flow(name="tokenize", log_prints=True)
def tokenize(
    input: str,  # noqa: A002 - the deployment parameter name users type
    output: str | None = None,
    recipe: str | None = None,
    config: dict[str, Any] | None = None,
    sources: dict[str, dict[str, float | None]] | None = None,
) -> dict[str, Any]:
    """Tokenize ``input`` into ``output`` (default ``<input>/shards``); the mix comes from ``sources`` or
    the ``recipe``'s source weights/epochs. Returns a summary with the manifest path."""
    logger = get_run_logger()
    recipe_hash = None
    settings = dict(config or {})
    mix = dict(sources or {})
    if recipe:
        from training.recipe import load_recipe

        loaded = load_recipe(recipe)
        recipe_hash = loaded.config_hash()
        stage = getattr(loaded.stages, "tokenize", None)
        settings = {**(stage.model_dump() if stage is not None else {}), **settings}
        mix = {**{s.name: {"weight": s.weight, "epochs": s.epochs} for s in loaded.sources}, **mix}
    output = output or str(Path(input) / "shards")
    logger.info("tokenizing %s into %s", input, output)
    manifest = tokenize_task(input, output, settings, mix, recipe_hash)
    publish_shards_artifact(manifest, of=input)
    shards = ShardManifest.from_dict(manifest)
    for warning in shards.warnings:
        logger.warning(warning)
    return {
        "shards": output,
        "manifest": str(Path(output) / "manifest.json"),
        "fingerprint": shards.fingerprint,
        "dtype": shards.dtype,
        "totals": shards.totals.to_json(),
        "sources": {name: _source_summary(entry) for name, entry in shards.sources.items()},
        "warnings": shards.warnings,
    }


def _source_summary(entry: SourceEntry) -> dict[str, Any]:
    """What the flow returns of one source: the mix's shares and repeats, tokens and documents per split."""
    tokens, documents = entry.tokens, entry.documents
    return {
        "requested_share": entry.requested_share,
        "achieved_share": entry.achieved_share,
        "repeats": entry.repeats,
        "tokens": {"train": tokens.train, "heldout": tokens.heldout, "mixed": tokens.mixed},
        "documents": {"train": documents.train, "heldout": documents.heldout, "mixed": documents.mixed},
    }
