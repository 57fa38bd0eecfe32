"""The ``tokenize`` Prefect flow: a curation run (or any JSONL/Parquet input) → mixed token shards.

Thin by design: the recipe lookup and the one task are ``flows.tokenize_job`` (what ``tokenmill tokenize`` runs);
the flow adds run logging and the ``token-mix`` artifact (the manifest table of report.md's shards section,
``flows.artifacts``).
"""

from __future__ import annotations

from typing import Any

from prefect import flow, get_run_logger, task

import flows  # noqa: F401  (telemetry off before Prefect loads)
from flows.artifacts import publish_shards_artifact
from flows.results import NOT_PERSISTED
from flows.tokenize_job import tokenize_job, tokenize_shards
from pipeline.shards.format import SourceEntry

#: the flow's one task: the shards written as ``tokenmill tokenize`` writes them
shards_task = task(name="tokenize-shards", **NOT_PERSISTED)(tokenize_shards)


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
    job = tokenize_job(input, output, recipe, config, sources)
    logger.info("tokenizing %s into %s", job.input, job.output)
    shards = shards_task(job)  # in memory (not persisted): the ShardManifest itself
    publish_shards_artifact(shards, of=input)
    for warning in shards.warnings:
        logger.warning(warning)
    return {
        "shards": str(job.output),
        "manifest": str(job.output / "manifest.json"),
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
