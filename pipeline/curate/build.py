"""Assemble a source's curation pipeline (its ranks run under pipeline.executor).

read → [ledger] → extract → language → quality → [classify] → [toxicity] → [decontaminate] → pii
→ write curated/<source>/ → [ledger]

With classify ``mode: route`` a route writer sits before the curated writer: the documents a classifier marked go
to ``curated/<target>/routed-from-<source>/`` (pipeline.curate.routing).

Stages come from the recipe (a stage set to null is skipped); the executor kind (local, Slurm, Ray)
comes from the recipe too, so the same recipe scales out without edits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from datatrove.pipeline.base import PipelineStep

from pipeline.accounting import Ledger
from pipeline.curate.classify import ClassifyStage
from pipeline.curate.decontaminate import DecontaminateStage, index_fingerprint
from pipeline.curate.extract import ExtractStage
from pipeline.curate.language import LanguageStage
from pipeline.curate.pii import PIIStage
from pipeline.curate.quality import QualityStage
from pipeline.curate.routing import ROUTED_PREFIX, RouteWriter, clear_routed_from
from pipeline.curate.toxicity import ToxicityStage
from pipeline.executor import build_executor
from pipeline.fingerprint import code_version, digest, input_listing, read_fingerprint, write_fingerprint
from pipeline.jsonl_writer import GZIP3, DocumentWriter
from pipeline.layout import RunLayout
from pipeline.ownership import record_of, remove_owned
from pipeline.read import build_reader
from pipeline.read.tabular import HFDatasetReader

if TYPE_CHECKING:  # the recipe is read, never built, here: pipeline.config imports curate's models (unit order)
    from pipeline.config import CurationRecipe, SourceConfig, StagesConfig


def build_stages(stages_cfg: StagesConfig, drops_dir: str) -> list[PipelineStep]:
    """The text stages after the reader, in order, each writing drop rows under ``drops_dir``."""

    steps: list[PipelineStep] = [ExtractStage(stages_cfg.extract, drops_dir=drops_dir)]
    if stages_cfg.language is not None:
        steps.append(LanguageStage(stages_cfg.language, drops_dir=drops_dir))
    if stages_cfg.quality is not None:
        steps.append(QualityStage(stages_cfg.quality, drops_dir=drops_dir))
    if stages_cfg.classify:
        steps.append(ClassifyStage(stages_cfg.classify, drops_dir=drops_dir))
    if stages_cfg.toxicity is not None:
        steps.append(ToxicityStage(stages_cfg.toxicity, drops_dir=drops_dir))
    if stages_cfg.decontaminate is not None:
        # before PII: redaction placeholders would break the eval passages' n-grams
        steps.append(DecontaminateStage(stages_cfg.decontaminate, drops_dir=drops_dir))
    if stages_cfg.pii is not None:
        steps.append(PIIStage(stages_cfg.pii, drops_dir=drops_dir))
    return steps


def build_source_pipeline(
    recipe: CurationRecipe, source: SourceConfig, layout: RunLayout, input_path: str | None = None
) -> list[PipelineStep]:
    reader = build_reader(source, input_path)
    writer = DocumentWriter(str(layout.curated(source.name)), output_filename="${rank}.jsonl.gz", compression=GZIP3)
    stages = build_stages(recipe.stages_for(source), str(layout.dropped(source.name)))
    prepare_run_indexes(stages, layout)
    # classify mode route: marked documents leave for their target's folder after every text stage (curate.routing)
    route = [RouteWriter(layout, source.name)] if recipe.route_targets(source) else []
    return [reader, Ledger("read"), *stages, *route, writer, Ledger("kept")]


def prepare_run_indexes(stages: list[PipelineStep], layout: RunLayout) -> None:
    """Build once, in this (parent) process, what every rank of every source would otherwise build itself:
    the decontaminate stage's eval n-gram index (``DecontaminateStage.prepare_index``), into the run directory."""
    for step in stages:
        if isinstance(step, DecontaminateStage):
            step.prepare_index(layout.stage_dir("decontaminate"))


CURATION_STAGES = ("read", "extract", "language", "quality", "classify", "toxicity", "decontaminate", "pii")


def input_files(reader: PipelineStep) -> int | None:
    """How many files a file-sharded reader will read (``None``: the reader shards rows, not files).

    datatrove gives rank ``r`` of ``n`` the files ``listing[r::n]``; ranks beyond the file count read nothing
    but still pay a worker process, the pipeline's set-up and their share of the executor's bookkeeping.
    A ``save_to_disk`` dataset (``HFDatasetReader``) is split by rows, so every rank gets work.
    """

    if isinstance(reader, HFDatasetReader) or not hasattr(reader, "data_folder"):
        return None
    listing = reader.data_folder.list_files(recursive=reader.recursive, glob_pattern=reader.glob_pattern)
    accepts = getattr(reader, "accepts", None)
    return sum(1 for name in listing if accepts is None or accepts(name))


def input_bytes(reader: PipelineStep) -> int | None:
    """Bytes of the files a file-sharded reader will read (``None``: not a file reader, or not measurable), which
    decides whether its ranks need a pool (``pipeline.executor.local_workers``)."""
    if isinstance(reader, HFDatasetReader) or not hasattr(reader, "data_folder"):
        return None
    folder = reader.data_folder
    accepts = getattr(reader, "accepts", None)
    try:
        listing = folder.list_files(recursive=reader.recursive, glob_pattern=reader.glob_pattern)
        return sum(folder.size(name) for name in listing if accepts is None or accepts(name))
    except (OSError, AttributeError, TypeError, ValueError):
        return None


def source_tasks(recipe: CurationRecipe, reader: PipelineStep) -> int:
    """Ranks for one source: ``executor.tasks``, but never more than the source has input files.

    Measured with ``benchmarks/fixed_cost.py``: a 20-document JSONL through ``configs/web.yaml``
    (``tasks: 8``) started 8 worker processes, each importing the stages (~0.5 CPU-s apiece), for one file.
    """
    files = input_files(reader)
    return recipe.executor.tasks if files is None else max(1, min(recipe.executor.tasks, files))


def curation_fingerprint(
    recipe: CurationRecipe, source: SourceConfig, input_path: str | None = None, tasks: int | None = None
) -> str:
    """What a source's curated output depends on: source, its stages, ranks, inputs, code.

    ``tasks`` is the rank count the run uses (``source_tasks``; default ``executor.tasks``): the ranks decide
    which file lands in which ``curated/<source>/<rank>.jsonl.gz``, so a resume must use the same count. It
    follows from the recipe and the input listing (both in the fingerprint), so a rerun of an unchanged
    input resumes.
    """
    if source.routed:  # reads nothing: its documents are in the fingerprints of the sources routing into it
        return digest("curate", source.model_dump(mode="json", exclude={"weight", "epochs", "priority"}))
    path = input_path or source.path
    assert path is not None, "only a routed source has no path"
    parts = [
        source.model_dump(mode="json", exclude={"weight", "epochs", "priority"}),
        recipe.stages_for(source).model_dump(mode="json"),
        tasks or recipe.executor.tasks,
        input_listing(path),
        code_version("pipeline"),
        # a retrained classifier at the same path decides differently (what is kept, dropped or routed)
        *[input_listing(c.model) for c in recipe.stages_for(source).classify or []],
    ]
    decontaminate = recipe.stages_for(source).decontaminate
    if decontaminate is not None:  # an eval set edited in place (same path) must re-curate, not resume
        parts.append(index_fingerprint(decontaminate))
    return digest("curate", *parts)


def clear_source_outputs(layout: RunLayout, source: str) -> None:
    """Remove a source's curation outputs (and everything computed from them downstream).

    That includes what it routed into other sources' folders (``curated/*/routed-from-<source>/``) and
    excludes what other sources routed into its own (``curated/<source>/routed-from-*/``): each is cleared
    by the source that wrote it."""
    own = layout.curated(source)
    entries = sorted(own.iterdir()) if own.is_dir() else []
    targets = [e for e in entries if not (e.is_dir() and e.name.startswith(ROUTED_PREFIX))]
    targets += [layout.stage_dir("curate", source), layout.deduped(source)]
    targets += [layout.dropped(source) / stage for stage in CURATION_STAGES]
    targets = [t for t in targets if t.exists() or t.is_symlink()]
    if targets:
        record = record_of(layout.root)
        for target in targets:
            remove_owned(target, record)
    clear_routed_from(layout, source)


def curation_outputs_present(layout: RunLayout, source: SourceConfig) -> bool:
    """Whether this run folder holds a finished curation of ``source``, so a cached stage may be skipped.

    The curated folder alone is no proof: a source that routes into ``source`` creates
    ``curated/<source>/routed-from-<origin>/`` before ``source`` is curated (a rerun after ``rm -rf`` of the run then
    skipped the source and reported it read 0, balanced). The stage's fingerprint and, for a source that reads
    input, every rank's completion mark are written only by the stage itself.
    """
    if not (layout.stage_dir("curate", source.name) / "fingerprint.json").is_file():
        return False
    if source.routed:
        return True
    completions = layout.logs("curate", source.name) / "completions"
    return layout.curated(source.name).is_dir() and completions.is_dir() and any(completions.iterdir())


def curate_source(
    recipe: CurationRecipe, source: SourceConfig, layout: RunLayout, input_path: str | None = None
) -> str:
    """Run one source's curation pipeline and return its fingerprint.

    Finished ranks are skipped on a rerun with the same fingerprint; a changed recipe, input or code
    version clears the source's outputs first.
    """
    if source.routed:  # kind routed: nothing to read; the sources routing into it write its documents
        fingerprint = curation_fingerprint(recipe, source)
        write_fingerprint(layout.stage_dir("curate", source.name) / "fingerprint.json", fingerprint)
        return fingerprint
    pipeline = build_source_pipeline(recipe, source, layout, input_path)
    tasks = source_tasks(recipe, pipeline[0])
    fingerprint = curation_fingerprint(recipe, source, input_path, tasks)
    marker = layout.stage_dir("curate", source.name) / "fingerprint.json"
    if read_fingerprint(marker) != fingerprint:
        clear_source_outputs(layout, source.name)
        write_fingerprint(marker, fingerprint, {"source": source.name, "tasks": tasks})
    executor = build_executor(
        recipe.executor,
        pipeline,
        layout.logs("curate", source.name),
        tasks=tasks,
        job_name=f"curate-{source.name}",
        input_bytes=input_bytes(pipeline[0]),
    )
    executor.run()
    return fingerprint
