"""The ``curate`` Prefect flow: each source's stages as a task, dedup over all sources, accounting, the report.

Thin by design: everything it does is a call into ``pipeline``; it adds logging through the run logger,
markdown artifacts (the funnel, the dedup summary) and Prefect's retries/state tracking. The same flow
backs three deployments: ``curate/one-off`` (recipe, input, output) and ``curate/nightly-crawl`` /
``curate/weekly-crawl`` (a glob of the crawl's WARC files of which only the files not yet ingested are read,
``pipeline.ingest``; the persistent dedup index; an output root that gets a dated folder per run; tokenize
and append to the corpus manifest).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger

import flows  # noqa: F401  (telemetry off before Prefect loads)
from flows.artifacts import publish_curation_artifacts
from flows.tasks import account_and_report_task, curate_source_task, dedup_task, tokenize_task
from pipeline.atomic import write_json_atomic
from pipeline.dedup.config import DedupConfig
from pipeline.ingest import IngestError, IngestLedger
from pipeline.layout import RunLayout
from pipeline.run import CurationSteps, curate_run, resolve_run
from pipeline.shards.format import ShardManifest
from training.recipe import Recipe, load_recipe


def log_warnings(logger, summary: dict) -> None:  # a Prefect run logger or a logging.Logger
    """Each end-of-run warning of the curation report (``pipeline.curate.report.warn``) as a log warning."""
    for warning in summary.get("warnings") or []:
        logger.warning(warning)


def dated_output(output_root: str, when: dt.datetime | None = None) -> str:
    """``<output_root>/<YYYY-MM-DD>``, with ``-2``, ``-3`` … when that day already has a finished run."""
    day = (when or dt.datetime.now(dt.timezone.utc)).strftime("%Y-%m-%d")
    candidate, n = Path(output_root) / day, 1
    while (candidate / "report.md").exists():
        n += 1
        candidate = Path(output_root) / f"{day}-{n}"
    return str(candidate)


def append_to_corpus(corpus_manifest: Path, entry: dict[str, Any]) -> None:
    """Append one run to the corpus manifest (a JSON list), replacing an earlier entry for the same run dir."""
    runs = json.loads(corpus_manifest.read_text(encoding="utf-8")) if corpus_manifest.exists() else []
    runs = [r for r in runs if r.get("run_dir") != entry["run_dir"]] + [entry]
    corpus_manifest.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(corpus_manifest, runs, indent=2)


def with_index(recipe: Recipe, index: str | None) -> Recipe:
    """Turn dedup on (recipe defaults when the recipe has none) and point it at a persistent index."""
    if index is None:
        return recipe

    dedup = recipe.stages.dedup or DedupConfig()
    index_cfg = dedup.index.model_dump() if dedup.index is not None else {}
    index_cfg.update({"path": index, "redis": None})
    data = recipe.model_dump()
    data["stages"]["dedup"] = {**dedup.model_dump(), "index": index_cfg}
    return Recipe.model_validate(data)


@flow(name="curate", log_prints=True)
def curate(
    recipe: str,
    input: str | None = None,  # noqa: A002 - the deployment parameter name users type
    output: str | None = None,
    overwrite: bool = False,
    index: str | None = None,
    output_root: str | None = None,
    tokenize: bool = False,
    corpus_manifest: str | None = None,
    text_key: str | None = None,
    id_key: str | None = None,
    incremental: bool | None = None,
) -> dict:
    """Curate every source of ``recipe`` (or only ``input``, with the recipe's stages) into ``output``.

    ``text_key``/``id_key``: the row fields of ``input`` (JSONL, Parquet, datasets) holding the text and the id.

    ``index``: a persistent dedup index folder (dedup against every earlier run, add what is kept).
    ``output_root``: write to ``<output_root>/<date>`` instead of ``output``. ``tokenize``: also write
    token shards; ``corpus_manifest`` (default ``<output_root>/corpus.json``) then records the run.
    ``incremental`` (default: on with ``input`` and ``output_root``, as the scheduled deployments run): read only
    the files of ``input`` not yet ingested (``pipeline.ingest``); a run with nothing new ends Completed.
    """
    if incremental is None:
        incremental = input is not None and output is None and output_root is not None
    if incremental:
        if input is None or output_root is None:
            raise IngestError("incremental ingest needs input (a glob or folder) and output_root")
        keys = {"text_key": text_key, "id_key": id_key}
        return curate_incremental(recipe, input, output_root, index, keys, overwrite, tokenize, corpus_manifest)
    if output is None and output_root is not None:
        output = dated_output(output_root)
    resolved = with_index(resolve_run(load_recipe(recipe), input, output, text_key, id_key), index)
    with RunLayout.at(resolved.output_dir).lock():  # a second run into the same folder is refused at once
        return _curate_locked(resolved, overwrite, input, output_root, tokenize, corpus_manifest)


def curate_incremental(
    recipe: str,
    input: str,  # noqa: A002 - the flow parameter
    output_root: str,
    index: str | None,
    keys: dict[str, str | None],
    overwrite: bool,
    tokenize: bool,
    corpus_manifest: str | None,
) -> dict:
    """One scheduled run: take the files of ``input`` the ledger has not seen, curate them into a dated run
    (or finish the run a killed night left), mark them done. Nothing new: a Completed run that says so."""
    logger = get_run_logger()
    ledger = IngestLedger(output_root, input)
    with ledger.locked():
        plan = ledger.plan()
        for rel in plan.changed:
            logger.warning(
                "%s changed after it was ingested (other size/mtime and content); not read again: its first "
                "version is in the corpus. Give changed content a new file name to ingest it.",
                Path(plan.root) / rel,
            )
        ingest = {
            "root": plan.root,
            "ledger": str(ledger.path),
            "read": len(plan.files),
            "files": plan.files,
            "already_ingested": plan.already,
            "changed": plan.changed,
            "pending": plan.pending,
            "resumed": plan.resume_run is not None,
        }
        if not plan.files:
            logger.info("nothing new in %s (%d files already ingested)", plan.root, plan.already)
            return {"nothing_new": True, "run_dir": None, "ingest": ingest}
        if plan.resume_run:
            logger.info("resuming %s (a run stopped before it finished): %d files", plan.resume_run, len(plan.files))
        output = plan.resume_run or dated_output(output_root)
        staged = ledger.stage(plan, output)
        ledger.mark(plan.files, output, "started")
        resolved = with_index(resolve_run(load_recipe(recipe), staged, output, keys["text_key"], keys["id_key"]), index)
        with RunLayout.at(resolved.output_dir).lock():
            result = _curate_locked(resolved, overwrite, input, output_root, tokenize, corpus_manifest)
        ledger.mark(plan.files, output, "done")
        logger.info("ingested %d new files of %s (%s)", len(plan.files), plan.root, ledger.path)
        return {**result, "nothing_new": False, "ingest": ingest}


def _curate_locked(
    resolved: Recipe,
    overwrite: bool,
    input: str | None,  # noqa: A002 - the flow parameter, recorded in the corpus manifest
    output_root: str | None,
    tokenize: bool,
    corpus_manifest: str | None,
) -> dict:
    logger = get_run_logger()
    steps = CurationSteps(curate_source_task, dedup_task, account_and_report_task)
    layout, summary, dedup = curate_run(resolved, overwrite, steps, logger)
    log_warnings(logger, summary)
    publish_curation_artifacts(summary, dedup, resolved.name)
    result: dict[str, Any] = {"run_dir": str(layout.root), "report": str(layout.report_md), **summary}
    if dedup is not None:
        result["dedup"] = dedup
    if tokenize and not any(s["kept_final"] for s in summary["sources"]):
        logger.warning("nothing new was kept (everything was a duplicate or dropped): no shards this run")
        tokenize = False
        result["shards"] = None
    if tokenize:
        manifest = tokenize_task(resolved, str(layout.root))
        result["shards"] = str(layout.shards)
        corpus = Path(corpus_manifest or Path(output_root or layout.root.parent) / "corpus.json")
        append_to_corpus(
            corpus,
            {
                "run_dir": str(layout.root),
                "shards": str(layout.shards / "manifest.json"),
                "finished": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                "input": input,
                "documents": sum(s["kept_final"] for s in summary["sources"]),
                "tokens": ShardManifest.from_dict(manifest).totals.to_json(),
            },
        )
        result["corpus_manifest"] = str(corpus)
    logger.info("report: %s", layout.report_md)
    return result
