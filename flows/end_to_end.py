"""The end-to-end ``pipeline`` flow: curate (per source) → dedup → tokenize and mix → plan (gate) → train → report.

Each stage is a Prefect task whose cache key covers its resolved config, its inputs' fingerprints and the
code version, with results persisted: rerunning a failed or changed pipeline skips completed stages and
starts at the first one whose inputs changed (changing only training settings re-trains without
re-curating). Where a cached stage's outputs are gone from the run directory, the cache is refreshed.
Transient failures (I/O, network, time-outs) are retried with back-off; deterministic ones (a bad recipe,
a refused plan, a broken ledger) are not. Everything a stage does is a call into ``pipeline``/``training``.

The module is not called ``pipeline.py``: Prefect loads entrypoints as scripts with ``flows/`` on ``sys.path``,
where that name would shadow the ``pipeline`` package (and ``tokenize.py`` would shadow the standard library).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_progress_artifact, update_progress_artifact

import flows  # noqa: F401  (telemetry off before Prefect loads)
from flows.artifacts import publish_markdown, publish_stage_artifacts
from flows.results import NOT_PERSISTED, PERSISTED, Persistence, must_refresh, synchronous
from flows.run_summary import funnel_numbers, run_summary
from flows.tasks import account_and_report_task, curate_source_task, dedup_task, tokenize_task
from pipeline.curate.build import curation_fingerprint, curation_outputs_present
from pipeline.curate.routing import routed_tokens
from pipeline.dedup.config import DedupConfig
from pipeline.errors import TokenmillError
from pipeline.fingerprint import code_version, digest
from pipeline.layout import RunLayout
from pipeline.ownership import check_claim, claim
from pipeline.report import add_section, demote_headings, rebase_images
from pipeline.report.routed import routed_section
from pipeline.run import prepare_run_dir, resolve_run, source_mix
from pipeline.shards.format import ShardManifest
from pipeline.tokenize.config import TokenizeConfig
from pipeline.tokenize.report import shards_markdown
from training.plan.gate import plan_gate
from training.plan.laws import FIT_FILE, FITS
from training.plan.options import PlanOptions, complete_from_train
from training.plan.report import write_report
from training.recipe import Recipe, load_recipe

DETERMINISTIC_OS_ERRORS = (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError)


def is_transient(error: BaseException) -> bool:
    """I/O hiccups, dropped connections and time-outs are worth a retry; everything else is not."""
    if isinstance(error, DETERMINISTIC_OS_ERRORS):
        return False
    return isinstance(error, (OSError, ConnectionError, TimeoutError))


def retry_transient(task, task_run, state) -> bool:  # Prefect's retry_condition_fn signature
    try:
        state.result()
    except Exception as error:  # noqa: BLE001 - classify whatever the stage raised
        return is_transient(error)
    return False


def _cache_key(context, parameters: dict[str, Any]) -> str:
    return parameters["cache_key"]


class StageTaskOptions(Persistence, total=False):
    """``prefect.task``'s keywords for a pipeline stage: persisted JSON, our cache key, transient retries."""

    cache_key_fn: Callable[[Any, dict[str, Any]], str]
    retries: int
    retry_delay_seconds: list[float]
    retry_condition_fn: Callable[[Any, Any, Any], bool]


STAGE_TASK: StageTaskOptions = {
    **PERSISTED,  # JSON written, only JSON read back (flows.results): no pickle from a shared PREFECT_HOME
    "cache_key_fn": _cache_key,
    "retries": 2,
    "retry_delay_seconds": [10, 60],
    "retry_condition_fn": retry_transient,
}


class PlanRefused(TokenmillError, RuntimeError):
    """The budget gate found blocking problems and the run was not forced."""


def plan_options(recipe: Recipe) -> PlanOptions:
    """The recipe's ``plan:`` options, completed from the run: the shard manifest and the training model."""
    layout = RunLayout.at(recipe.output_dir)
    options = recipe.plan.model_dump() if recipe.plan is not None else {}
    options.setdefault("manifest", None)
    options["manifest"] = options["manifest"] or str(layout.shards / "manifest.json")
    options = complete_from_train(options, recipe.train)
    if options.get("model") is None and options.get("params") is None:
        options["model"] = "tiny"
    return PlanOptions.model_validate(options)


def fit_file_text(fit: str) -> str | None:
    """The text of a ``plan: {fit: fit.json}`` file, so that a re-fitted law re-runs the plan stage."""
    if fit in FITS:
        return None
    path = Path(fit)
    path = path / FIT_FILE if path.is_dir() else path
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None  # the plan stage itself reports a missing or unreadable fit, naming the file


@task(name="plan", **STAGE_TASK)
def plan_stage(recipe: Recipe, force: bool, cache_key: str) -> dict[str, Any]:
    layout = RunLayout.at(recipe.output_dir)
    options = plan_options(recipe)
    gate = plan_gate(options)
    the_plan, problems = gate.plan, gate.problems
    if options.manifest and Path(options.manifest).is_file():  # the data section says what was mined (mode route)
        routed = routed_tokens(ShardManifest.read(options.manifest))
        if routed:
            the_plan.data["routed_tokens"] = routed
    write_report(the_plan, layout.root)
    if problems and not force:
        raise PlanRefused(
            "the budget check refuses this plan (pass force=True to train anyway):\n  - " + "\n  - ".join(problems)
        )
    return {"plan": json.loads(the_plan.to_json()), "problems": problems}


@task(name="train", **STAGE_TASK)
def train_stage(recipe: Recipe, force: bool, cache_key: str) -> dict[str, Any]:
    from flows.train import log_launch
    from training.launch import launch_training

    config = recipe.train_config({"force": force} if force else None)
    set_aside_other_training(Path(config.output), cache_key)
    # one process trains in-process (the demo); n_gpus > 1 launches accelerate with one process per GPU
    logger = get_run_logger()
    summary = launch_training(
        config, num_processes=config.n_gpus, logger=logger, on_event=lambda kind, value: log_launch(logger, kind, value)
    )
    return summary.to_dict()  # the task's result is JSON (flows/results.py)


def set_aside_other_training(output: Path, cache_key: str) -> Path | None:
    """Keep ``output`` for this training key: a rerun with the same key resumes its checkpoints; a folder
    trained under other settings or shards is moved to ``<output>.<old key>`` (kept, never deleted)."""
    check_claim(output, "train")  # a folder tokenmill did not create is neither moved nor written
    marker = output / ".pipeline-key"
    previous = marker.read_text(encoding="utf-8").strip() if marker.exists() else None
    moved = None
    if output.exists() and any(output.iterdir()) and previous != cache_key:
        moved, n = output.with_name(f"{output.name}.{(previous or 'unkeyed')[:12]}"), 1
        while moved.exists() or moved.is_symlink():  # an earlier one set aside under that key: keep it too
            n += 1
            moved = output.with_name(f"{output.name}.{(previous or 'unkeyed')[:12]}-{n}")
        output.rename(moved)
    claim(output, "train")
    marker.write_text(cache_key, encoding="utf-8")
    return moved


@task(name="report", **NOT_PERSISTED)
def report_stage(recipe: Recipe, results: dict[str, Any]) -> str:
    """Add the later stages to the report (the dedup section is the account task's) and the one funnel: raw
    records → documents → tokens → steps."""
    layout = RunLayout.at(recipe.output_dir)
    if results.get("tokenize"):
        manifest = ShardManifest.from_dict(results["tokenize"])  # the tokenize task returns the manifest's JSON
        add_section(layout, "shards", shards_markdown(manifest), results["tokenize"])
        routed = routed_section((results.get("curation") or {}).get("sources") or [], manifest)
        if routed is not None:  # classify mode route: the tokens each crawl contributed to each domain source
            add_section(layout, "routed_tokens", *routed)  # beside curation's "routed" (documents), not over it
    if results.get("plan"):
        plan_md = (layout.root / "plan.md").read_text(encoding="utf-8") if (layout.root / "plan.md").exists() else ""
        # plan.md's "# Training plan: …" becomes this section's "## …", its sections "### …"
        add_section(layout, "plan", demote_headings(plan_md) if plan_md else "## Plan\n", results["plan"])
    if results.get("train"):
        train_dir = Path(recipe.train_config().output)
        train_md = (
            (train_dir / "train_report.md").read_text(encoding="utf-8")
            if (train_dir / "train_report.md").exists()
            else ""
        )
        # train_report.md's images are relative to the training folder; report.md sits in the run directory
        train_dir, root = train_dir.resolve(), layout.root.resolve()  # a relative train output is the same folder
        train_md = rebase_images(
            train_md, train_dir.relative_to(root).as_posix() if train_dir.is_relative_to(root) else str(train_dir)
        )
        add_section(layout, "train", demote_headings(train_md) if train_md else "## Training\n", results["train"])
    summary = run_summary(results)
    add_section(layout, "summary", summary, {"funnel": funnel_numbers(results).to_dict()})
    publish_stage_artifacts(layout, results)
    return summary


class Progress:
    """A Prefect progress artifact advanced stage by stage (visible in the UI while the run goes on)."""

    def __init__(self, total: int):
        self.total, self.done = max(total, 1), 0
        self.artifact_id = synchronous(create_progress_artifact(progress=0.0, description="pipeline stages done (%)"))

    def advance(self) -> None:
        self.done += 1
        update_progress_artifact(artifact_id=self.artifact_id, progress=min(100.0, 100.0 * self.done / self.total))


@flow(name="pipeline", log_prints=True)
def pipeline(recipe: str, output: str | None = None, force: bool = False) -> dict[str, Any]:
    """Run a recipe end to end; stages whose config, inputs and code are unchanged come back ``Cached``."""
    resolved = resolve_run(load_recipe(recipe), None, output)
    with RunLayout.at(resolved.output_dir).lock("pipeline"):  # a second run into the same folder is refused at once
        return _pipeline_locked(resolved, force)


def _pipeline_locked(resolved: Recipe, force: bool) -> dict[str, Any]:
    logger = get_run_logger()
    layout = prepare_run_dir(resolved, command="pipeline")
    logger.info("run directory %s", layout.root)
    results: dict[str, Any] = {}
    stages_total = (
        len(resolved.sources)
        + 2
        + sum(x is not None for x in (resolved.stages.dedup, resolved.stages.tokenize, resolved.plan, resolved.train))
    )
    progress = Progress(stages_total)

    upstream = _curate_sources(resolved, layout, progress)
    if resolved.stages.dedup is not None:
        results["dedup"], upstream = _dedup(resolved, resolved.stages.dedup, layout, upstream)
        progress.advance()

    results["curation"] = account_and_report_task(resolved, str(layout.root), results.get("dedup"))
    for warning in results["curation"].get("warnings") or []:
        logger.warning(warning)
    progress.advance()

    if resolved.stages.tokenize is not None:
        results.update(_tokenize_plan_train(resolved, resolved.stages.tokenize, layout, force, upstream, progress))

    summary = report_stage(resolved, results)
    progress.advance()
    report = layout.report_md.resolve()  # the artifact links the report it summarises (a file on the run's machine)
    linked = f"{summary}\nFull report: [{report}]({report.as_uri()}) (report.json beside it)\n"
    publish_markdown("run-summary", linked, f"tokenmill pipeline {resolved.name}")
    logger.info("report: %s", layout.report_md)
    return {"run_dir": str(layout.root), "report": str(layout.report_md), **results}


def _curate_sources(resolved: Recipe, layout: RunLayout, progress: Progress) -> str:
    """Curate every source (each its own cached task); return the key the stages after it build on."""
    curate_keys = {}
    for source in resolved.sources:
        key = digest("curate", curation_fingerprint(resolved, source))
        outputs_present = curation_outputs_present(layout, source)
        curate_source_task.with_options(**STAGE_TASK, refresh_cache=must_refresh(key, outputs_present))(
            resolved, source.name, str(layout.root), cache_key=key
        )
        curate_keys[source.name] = key
        progress.advance()
    return digest(sorted(curate_keys.items()))


def _dedup(resolved: Recipe, config: DedupConfig, layout: RunLayout, upstream: str) -> tuple[Any, str]:
    """The dedup task's result and its cache key (the next stage's upstream)."""
    key = digest(
        "dedup",
        config.model_dump(mode="json"),
        {s.name: s.priority for s in resolved.sources},
        upstream,
        code_version("pipeline"),
    )
    present = all(layout.deduped(s.name).is_dir() for s in resolved.sources)
    result = dedup_task.with_options(**STAGE_TASK, refresh_cache=must_refresh(key, present))(
        resolved, str(layout.root), cache_key=key
    )
    return result, key


def _tokenize_plan_train(
    resolved: Recipe, config: TokenizeConfig, layout: RunLayout, force: bool, upstream: str, progress: Progress
) -> dict[str, Any]:
    """Tokenize, then plan and train when the recipe asks: each stage's cache key chains the one before it, so a
    changed tokenizer setting re-plans and re-trains, a changed training setting only re-trains."""
    results: dict[str, Any] = {}
    key = digest(
        "tokenize",
        config.model_dump(mode="json"),
        source_mix(resolved),
        upstream,
        code_version("pipeline"),
    )
    present = (layout.shards / "manifest.json").exists()
    results["tokenize"] = tokenize_task.with_options(**STAGE_TASK, refresh_cache=must_refresh(key, present))(
        resolved, str(layout.root), cache_key=key
    )
    upstream = key
    progress.advance()

    if resolved.plan is not None or resolved.train is not None:
        options = plan_options(resolved)
        plan_key = digest(
            "plan",
            options.model_dump(mode="json"),
            fit_file_text(options.fit),
            force,
            upstream,
            code_version("training"),
        )
        # not refreshed: the task as declared (Prefect's own setting decides)
        stage = plan_stage.with_options(refresh_cache=True) if must_refresh(plan_key) else plan_stage
        results["plan"] = stage(resolved, force, cache_key=plan_key)
        progress.advance()

    if resolved.train is not None:
        train_cfg = resolved.train_config()
        key = digest("train", train_cfg.model_dump(mode="json", exclude={"force"}), upstream, code_version("training"))
        present = (Path(train_cfg.output) / "final").is_dir()
        results["train"] = train_stage.with_options(refresh_cache=must_refresh(key, present))(
            resolved, force, cache_key=key
        )
        progress.advance()
    return results
