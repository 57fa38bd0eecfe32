"""The ``tokenize`` Prefect flow: a curation run (or any JSONL/Parquet input) → mixed token shards.

Thin by design: one task calls ``pipeline.tokenize.run_tokenize``; the flow adds the recipe lookup (source
weights/epochs, ``stages.tokenize`` once the recipe has it), run logging and a markdown artifact of the mix.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact

import flows  # noqa: F401  (telemetry off before Prefect loads)


@task(name="tokenize-shards")
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


def mix_markdown(manifest: dict[str, Any]) -> str:
    lines = [
        "| source | docs train | docs held-out | tokens mixed | requested | achieved | repeats | bytes/token |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, s in manifest["sources"].items():
        lines.append(
            f"| {name} | {s['documents']['train']} | {s['documents']['heldout']} | {s['tokens']['mixed']} |"
            f" {s['requested_share']:.2%} | {s['achieved_share']:.2%} | {s['repeats']:.2f} | {s['bytes_per_token']} |"
        )
    lines += ["", *[f"- warning: {w}" for w in manifest.get("warnings", [])]]
    return "\n".join(lines)


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
    create_markdown_artifact(key="token-mix", markdown=mix_markdown(manifest), description=f"token mix of {input}")
    for warning in manifest["warnings"]:
        logger.warning(warning)
    return {
        "shards": output,
        "manifest": str(Path(output) / "manifest.json"),
        "fingerprint": manifest["fingerprint"],
        "dtype": manifest["dtype"],
        "totals": manifest["totals"],
        "sources": {
            name: {k: s[k] for k in ("requested_share", "achieved_share", "repeats", "tokens", "documents")}
            for name, s in manifest["sources"].items()
        },
        "warnings": manifest["warnings"],
    }
