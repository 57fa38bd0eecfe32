"""Run-level orchestration of curation without Prefect: prepare the run directory, curate each
source, check the accounts, write the report. The Prefect flow calls these same functions."""

from __future__ import annotations

import dataclasses
import glob
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pipeline.tokenize.run as tokenize_run  # called through the module: tests replace run_tokenize there
from pipeline.accounting import SourceAccount, account_source, check_accounts
from pipeline.atomic import write_json_atomic
from pipeline.classify.top_percent import clear_outputs as clear_top_percent_outputs
from pipeline.classify.top_percent import run_top_percent, top_percent_rules
from pipeline.config import CurationRecipe, RecipeError, dump_recipe
from pipeline.config_base import expand_home
from pipeline.curate.build import curate_source
from pipeline.curate.report.classify import classify_markdown, classify_summary
from pipeline.curate.report.decontaminate import decontamination_markdown, decontamination_summary
from pipeline.curate.report.section import curation_section
from pipeline.curate.report.toxicity import toxicity_markdown, toxicity_summary
from pipeline.dedup.result import DedupResult, dedup_report_md
from pipeline.dedup.run import clear_outputs as clear_dedup_outputs
from pipeline.dedup.run import run_dedup
from pipeline.executor import executor_factory
from pipeline.fingerprint import digest, read_fingerprint, write_fingerprint
from pipeline.layout import RunLayout
from pipeline.read import build_reader, is_pattern, split_path
from pipeline.read.common import source_name_for
from pipeline.report import add_section, write_report
from pipeline.report.routed import routed_section
from pipeline.shards.format import ShardManifest
from pipeline.tokenize.config import TokenizeConfig
from pipeline.usage import workers_markdown, workers_summary

if TYPE_CHECKING:  # imported where the pass runs (run_whole_run_passes), as before
    from pipeline.classify.top_percent import TopPercentResult

R = TypeVar("R", bound=CurationRecipe)


def recipe_for_input(
    recipe: R,
    input_path: str | None,
    output_dir: str | None,
    text_key: str | None = None,
    id_key: str | None = None,
) -> R:
    """The recipe's stages applied to one other input (kind detected from the path) and/or output.

    ``text_key``/``id_key`` (``curate --input X --text-key body``) become the input source's
    ``options.text_key``/``options.id_key``: the JSONL, Parquet, datasets and folder (``.jsonl``) readers take
    the row fields from there. They need ``input_path``: a recipe's own sources set them in the recipe.
    A missing input, or a glob that matches nothing, fails here, naming the path, before anything is written.
    """
    if input_path is None and (text_key is not None or id_key is not None):
        raise RecipeError("--text-key/--id-key apply to --input; set options.text_key/id_key on the recipe's sources")
    data = recipe.model_dump()
    if input_path is not None:
        input_path = expand_home(input_path)  # a quoted '~/x' or a deployment parameter: the shell expanded nothing
        if is_pattern(input_path):
            if not glob.glob(input_path, recursive=True):
                raise FileNotFoundError(f"input glob matches no files: {input_path}")
            path = Path(split_path(input_path)[0])  # the glob's fixed folder names the source
        else:
            path = Path(input_path)
            if not path.exists():
                raise FileNotFoundError(f"input path does not exist: {input_path}")
        name = source_name_for(str(path))
        keys = {k: v for k, v in (("text_key", text_key), ("id_key", id_key)) if v is not None}
        data["sources"] = [{"name": name, "kind": "auto", "path": str(input_path), "options": keys}]
    if output_dir is not None:
        data["output_dir"] = str(output_dir)
    return type(recipe).model_validate(data)  # a training.recipe.Recipe stays one (its typed plan:/train:)


def resolve_run(
    recipe: R,
    input_path: str | None = None,
    output_dir: str | None = None,
    text_key: str | None = None,
    id_key: str | None = None,
) -> R:
    """Apply ``--input``/``--output`` to a loaded recipe and check every input: all that can fail on a typo.

    The CLI calls this before Prefect starts (a missing recipe is reported in well under a second, not after
    a server start and a traceback); the flows call it again, since a deployment run has no CLI in front.
    The caller loads the recipe (``training.recipe.load_recipe`` in every command), so the result keeps its
    class: curation alone never decides what ``plan:``/``train:`` mean.
    """
    resolved = recipe_for_input(recipe, input_path, output_dir, text_key, id_key)
    if resolved.executor.kind != "local":
        resolved = absolute_paths(resolved)
    preflight_sources(resolved)
    return resolved


def _absolute(path: str | None) -> str | None:
    if path is None or "://" in path or Path(path).is_absolute():
        return path
    return str(Path.cwd() / path)


def absolute_paths(recipe: R) -> R:
    """The recipe with its local paths made absolute against this (the driver's) working directory.

    Slurm runs array tasks in the submitting directory, but a Ray worker runs in the directory its
    ``ray start`` ran in, and datatrove resolves a folder when the rank unpickles its pipeline: a relative
    source read "No files found" on every Ray rank (measured). Made absolute here, once, every engine reads
    the same files — provided they are on the filesystem every node shares (docs/cluster.md). Covers the
    output, the sources, the classifier models and the dedup index; other paths in a recipe (eval sets, a
    tokenizer) are read by the driver."""
    data = recipe.model_dump()
    data["output_dir"] = _absolute(data["output_dir"])
    stage_sets = [data["stages"]] + [s["stages"] for s in data["sources"] if s.get("stages")]
    for source in data["sources"]:
        source["path"] = _absolute(source["path"])
    for stages in stage_sets:
        for classifier in stages.get("classify") or []:
            if "model" in classifier:
                classifier["model"] = _absolute(classifier["model"])
        index = (stages.get("dedup") or {}).get("index") or {}
        if index.get("path"):
            index["path"] = _absolute(index["path"])
    return type(recipe).model_validate(data)


def preflight_sources(recipe: CurationRecipe) -> None:
    """Fail before anything is written when a source's input is missing or holds nothing readable.

    Raises ``pipeline.read.InputError`` naming the path, so no half-made run directory is left behind.
    """

    for source in recipe.sources:
        if not source.routed:  # a routed source reads nothing
            build_reader(source)


def prepare_run_dir(recipe: CurationRecipe, overwrite: bool = False, command: str = "curate") -> RunLayout:
    """Create the run directory and record the resolved recipe.

    A directory that already holds a run is resumed: each stage compares its own fingerprint and clears
    only what changed; what a stage that this recipe switches off left behind is cleared here. ``overwrite``
    first removes what earlier runs wrote there. A folder that exists, is not empty and was not created by
    tokenmill (``pipeline.ownership``) is refused before anything is deleted or written, with or without
    ``overwrite``.
    """
    cuts = top_percent_rules(recipe)  # a contradictory recipe fails here, before anything is written
    layout = RunLayout.at(recipe.output_dir)
    layout.claim(command)  # a folder tokenmill did not create is refused here, before anything is deleted
    if overwrite:
        layout.clear()
    elif recipe.stages.dedup is None:
        # an earlier recipe in this folder may have deduped: its deduped/ and dropped/*/dedup/ rows describe
        # documents this recipe keeps, and the accounts would no longer balance
        clear_dedup_outputs(str(layout.root))
    if not overwrite and not cuts:  # the same for an earlier recipe's top_percent pass
        clear_top_percent_outputs(layout)
    layout.root.mkdir(parents=True, exist_ok=True)
    dump_recipe(recipe, layout.config)
    return layout


def account_all(recipe: CurationRecipe, layout: RunLayout) -> list[SourceAccount]:
    accounts = [account_source(layout, source.name) for source in recipe.sources]
    check_accounts(accounts)
    return accounts


def run_whole_run_passes(recipe: CurationRecipe, layout: RunLayout) -> TopPercentResult | None:
    """The text passes that need the whole run curated (and deduped): classify's ``top_percent`` cut today.

    Called first thing by ``write_curation_report``, the one step every entry point that curates shares
    (``tokenmill curate``, the curate flow, the ``pipeline`` flow, the demo), so none can skip it; it resumes
    (``pipeline.classify.top_percent``), so running it again on a finished run only re-reads the scores.
    """
    return run_top_percent(recipe, layout)


def index_name(recipe: CurationRecipe) -> str | None:
    """The persistent dedup index the recipe compares with (a folder, or redis host:port/basename), if any."""
    dedup = recipe.stages.dedup
    index = dedup.index if dedup is not None else None
    if index is None:
        return None
    if index.path or index.redis is None:  # IndexConfig holds exactly one of the two
        return index.path
    return f"redis {index.redis.host}:{index.redis.port}/{index.redis.basename}"


@dataclasses.dataclass(frozen=True)
class CurationSummary:
    """What ``write_curation_report`` returns: the curation section's JSON (report.json's ``curation``: sources,
    funnel, stages, pii, warnings, languages, …) and each model stage's section by name (``classify``,
    ``toxicity``, ``decontamination``, when a source runs it). ``to_dict`` is the curation step's result (the
    ``account-and-report`` task's, which the flows read), in the key order it always had."""

    curation: dict[str, Any]
    stages: dict[str, dict[str, Any]]

    @property
    def sources(self) -> list[dict[str, Any]]:
        """Each source's account (``SourceAccount.to_json``): read, kept, dropped …"""
        return self.curation["sources"]

    @property
    def warnings(self) -> list[str]:
        """The end-of-run warnings (``pipeline.curate.report.warn``)."""
        return self.curation["warnings"]

    def to_dict(self) -> dict[str, Any]:
        return {**self.curation, **self.stages}


def write_curation_report(recipe: CurationRecipe, layout: RunLayout) -> CurationSummary:
    """Check ``read == kept + dropped`` per source and write the curation part of the report; return its JSON."""

    top_percent = run_whole_run_passes(recipe, layout)
    accounts = account_all(recipe, layout)
    section_md, section_json = curation_section(
        layout,
        accounts,
        recipe.report.warn_drop_share,
        {s.name: s.options.text_key for s in recipe.sources},
        index_name(recipe),
    )
    sections = {"curation": (section_md, section_json)}
    routed = routed_section(section_json["sources"])  # None unless a classifier routes (mode: route)
    if routed is not None:
        sections["routed"] = routed
    stage_sections = model_stage_sections(recipe, layout, accounts, top_percent)
    write_report(layout, recipe.name, {**sections, **stage_sections})
    # the flows publish these sections as artifacts (each stage's renderer) from the summary they get back
    return CurationSummary(section_json, {name: payload for name, (_, payload) in stage_sections.items()})


def model_stage_sections(
    recipe: CurationRecipe, layout: RunLayout, accounts: list[SourceAccount], top_percent: TopPercentResult | None
) -> dict[str, tuple[str, dict]]:
    """The report sections of the classify, toxicity and decontaminate stages (when some source runs them)."""
    sections: dict[str, tuple[str, dict]] = {}
    per_source = [recipe.stages_for(s) for s in recipe.sources]
    modes: dict[str, str] = {c.name: c.mode for stages in per_source for c in stages.classify or []}
    if modes:
        classify = classify_summary(layout, accounts, modes, top_percent).to_dict()
        sections["classify"] = (classify_markdown(classify), classify)
    if any(stages.toxicity is not None for stages in per_source):
        toxicity = toxicity_summary(layout, accounts).to_dict()
        sections["toxicity"] = (toxicity_markdown(toxicity), toxicity)
    decontaminate = [stages.decontaminate for stages in per_source if stages.decontaminate is not None]
    if decontaminate:
        cut = any(d.mode == "cut" for d in decontaminate)
        decontamination = decontamination_summary(layout, accounts, cut_mode=cut).to_dict()
        sections["decontamination"] = (decontamination_markdown(decontamination), decontamination)
    return sections


def source_mix(recipe: CurationRecipe) -> dict[str, dict[str, float]]:
    """Each source's mixing weight and/or epochs, as the tokenize stage takes them."""
    return {
        s.name: {k: v for k, v in (("weight", s.weight), ("epochs", s.epochs)) if v is not None} for s in recipe.sources
    }


def run_tokenize_stage(recipe: CurationRecipe, layout: RunLayout, executor_factory=None) -> ShardManifest:
    """Tokenize the run's kept documents into ``shards/`` with the recipe's mix; return the manifest.

    ``executor_factory(pipeline, logging_dir, tasks)`` places the encode ranks (default: tokenize's local executor);
    ``tasks`` is ``stages.tokenize.tasks``, at most one rank per input file.
    """

    config = recipe.stages.tokenize or TokenizeConfig()
    manifest = tokenize_run.run_tokenize(
        str(layout.root),
        str(layout.shards),
        config,
        source_mix(recipe),
        executor_factory=executor_factory,
        recipe_hash=recipe.config_hash(),
    )
    add_workers_section(layout)  # now with the encode ranks
    return manifest


def run_dedup_stage(recipe: CurationRecipe, layout: RunLayout, executor_factory) -> DedupResult:
    """Dedup the run's curated sources; restart the dedup stage when its inputs or settings changed.

    The dedup stage itself refuses to resume over changed inputs (safe when run alone); inside a run,
    curation is the authority, so a changed curation fingerprint or dedup setting starts dedup afresh.
    """

    dedup = recipe.stages.dedup
    assert dedup is not None, "run_dedup_stage is called for a recipe with stages.dedup"
    priorities = {s.name: s.priority for s in recipe.sources}
    upstream = digest(
        "dedup",
        sorted(
            (s.name, read_fingerprint(layout.stage_dir("curate", s.name) / "fingerprint.json")) for s in recipe.sources
        ),
        dedup.model_dump(mode="json"),
        priorities,
    )
    marker = layout.stage_dir("dedup") / "upstream.json"
    restart = read_fingerprint(marker) != upstream and layout.stage_dir("dedup").exists()
    write_fingerprint(marker, upstream)
    return run_dedup(str(layout.root), dedup, priorities, executor_factory, restart=restart)


def curate_one_source(recipe: CurationRecipe, source_name: str, run_dir: str) -> str:
    """Curate one source of ``recipe`` into ``run_dir``; its fingerprint (the ``curate-source`` task's body)."""

    source = next(s for s in recipe.sources if s.name == source_name)
    return curate_source(recipe, source, RunLayout.at(run_dir))


def curated_bytes(recipe: CurationRecipe, layout: RunLayout) -> int:
    """Bytes of the run's curated (gzipped JSONL) files: what dedup's ranks read, which sizes its executor."""
    return sum(path.stat().st_size for s in recipe.sources for path in layout.curated(s.name).glob("**/*.jsonl.gz"))


def dedup_run_dir(recipe: CurationRecipe, run_dir: str) -> DedupResult:
    """Dedup every curated source of the run with the recipe's executor section (the ``dedup`` task's body)."""

    layout = RunLayout.at(run_dir)
    curated = curated_bytes(recipe, layout)
    return run_dedup_stage(recipe, layout, executor_factory(recipe.executor, "dedup", input_bytes=curated))


def dedup_run_dir_json(recipe: CurationRecipe, run_dir: str) -> dict[str, Any]:
    """``dedup_run_dir``'s result as JSON: the dedup step's result in both shapes of a curation run (a cached
    Prefect task result comes back as JSON, so the plain calls pass the same)."""
    return dedup_run_dir(recipe, run_dir).model_dump(mode="json")


def account_and_report(recipe: CurationRecipe, run_dir: str, dedup: dict[str, Any] | None) -> CurationSummary:
    """Check the accounts, write the report (with the dedup section: ``DedupResult``'s JSON); the curation
    summary."""

    layout = RunLayout.at(run_dir)
    summary = write_curation_report(recipe, layout)
    if dedup is not None:
        add_section(layout, "dedup", dedup_report_md(dedup), dedup)
    add_workers_section(layout)
    return summary


def account_and_report_json(recipe: CurationRecipe, run_dir: str, dedup: dict[str, Any] | None) -> dict[str, Any]:
    """``account_and_report``'s summary as JSON: the report step's result in both shapes of a curation run (the
    ``account-and-report`` task's body; its persisted result is JSON, so the plain calls pass the same)."""
    return account_and_report(recipe, run_dir, dedup).to_dict()


def add_workers_section(layout: RunLayout) -> None:
    """report.json ``workers``: the CPU and peak memory every rank recorded where it ran (``pipeline.usage``),
    which on Slurm and Ray is the cost the driver's own clock never sees."""
    summary = workers_summary(layout.root)
    if summary is None or not layout.report_json.exists():
        return
    payload = json.loads(layout.report_json.read_text(encoding="utf-8"))
    if "workers" in payload:  # a later stage (tokenize): the totals grow, report.md keeps its one section
        payload["workers"] = summary.model_dump(mode="json")
        write_json_atomic(layout.report_json, payload, indent=2, ensure_ascii=False, default=str)
    else:
        add_section(layout, "workers", workers_markdown(summary), summary.model_dump(mode="json"))


@dataclasses.dataclass
class CurationSteps:
    """The steps of a curation run as callables: plain calls by default; the Prefect flow passes its tasks
    (which call these same functions), so a CLI run without Prefect and a flow run do the same work."""

    curate_source: Callable[[CurationRecipe, str, str], str] = curate_one_source
    dedup: Callable[[CurationRecipe, str], dict[str, Any]] = dedup_run_dir_json
    report: Callable[[CurationRecipe, str, dict[str, Any] | None], dict[str, Any]] = account_and_report_json


def curate_run(
    recipe: CurationRecipe, overwrite: bool = False, steps: CurationSteps | None = None, log: Any = None
) -> tuple[RunLayout, dict, dict[str, Any] | None]:
    """Prepare the run directory, curate every source, dedup (when the recipe does), account and report.

    Returns ``(layout, curation summary, dedup result or None)``. The caller holds the run's lock
    (``RunLayout.lock``). ``log``: a ``logging.Logger``-like object (the flow passes its run logger).
    """
    steps = steps or CurationSteps()
    log = log or logging.getLogger("tokenmill")
    layout = prepare_run_dir(recipe, overwrite=overwrite)
    log.info("run directory %s (config_hash %s)", layout.root, recipe.config_hash())
    for source in recipe.sources:
        log.info("curating source %s (%s: %s)", source.name, source.kind, source.path)
        steps.curate_source(recipe, source.name, str(layout.root))
    dedup = steps.dedup(recipe, str(layout.root)) if recipe.stages.dedup is not None else None
    summary = steps.report(recipe, str(layout.root), dedup)
    return layout, summary, dedup
