"""Running dedup: signatures → exact groups → LSH buckets (parallel ranks) → clustering over the pairs (one
task) → filter (parallel ranks) → index update (streamed).

Everything goes through files under ``<out>/stages/dedup/`` and datatrove completions under
``<out>/stages/dedup/logs/<step>/``, so a rerun resumes: finished ranks and steps are skipped, a killed rank
rewrites its own files. ``plan.json`` pins the settings, the input file list and each file's size and mtime;
a rerun with other settings or changed input files stops with an error instead of mixing old and new state
(``restart=True`` clears the dedup outputs first).

Entry points: ``run_dedup`` (a curation run's ``curated/``), ``dedup_dataset`` (any JSONL/Parquet),
``dedup_input`` (the one sequence ``tokenmill dedup`` and the ``dedup`` flow run), and the steps the flow runs as
tasks (``DedupSteps``): ``plan_dedup``, ``dedup_signatures``, ``dedup_cluster``, ``dedup_filter``, ``dedup_finish``.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import logging
import os
import secrets
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from datatrove.pipeline.base import PipelineStep

from pipeline.accounting import balance_problem
from pipeline.atomic import write_json_atomic
from pipeline.dedup import memory, store
from pipeline.dedup.buckets import DedupBucketStep, DedupExactStep
from pipeline.dedup.cluster import DedupStateError, run_clustering
from pipeline.dedup.config import DedupConfig, IndexConfig
from pipeline.dedup.filter import OUTPUT_COMPRESSION, DedupFilterStep, iter_decisions
from pipeline.dedup.index import DiskIndex, RedisIndex, open_index
from pipeline.dedup.index_view import IndexView
from pipeline.dedup.io import DedupInput
from pipeline.dedup.minhash import KIND_NORMAL, KIND_SHORT
from pipeline.dedup.result import DedupResult, SourceCounts
from pipeline.dedup.signatures import DedupSignatureStep, SignatureSet
from pipeline.jsonl_writer import DocumentWriter
from pipeline.lock import hold
from pipeline.ownership import claim, record_of, remove_owned
from pipeline.read.common import source_name_for

ExecutorFactory = Callable[[list, str, int], Any]
log = logging.getLogger(__name__)


def local_executor_factory(workers: int = 1, start_method: str | None = None) -> ExecutorFactory:
    """Factory for datatrove's ``LocalPipelineExecutor`` (what tests and the CLI use); ``start_method``
    (``fork``) lets a benchmark see every rank as a child of this process (``RUSAGE_CHILDREN``)."""

    def factory(pipeline: list, logging_dir: str, tasks: int):
        from pipeline.local_executor import GuardedLocalExecutor

        extra = {"start_method": start_method} if start_method else {}
        return GuardedLocalExecutor(
            pipeline=pipeline, logging_dir=logging_dir, tasks=tasks, workers=max(1, min(workers, tasks)), **extra
        )

    return factory


@dataclasses.dataclass
class DedupPlan:
    """Where one dedup run reads and writes; JSON-able (Prefect passes it between tasks)."""

    output_dir: str
    stage_dir: str
    tasks: int
    run_name: str
    input: dict[str, Any]
    files: int
    run_id: str = ""

    @property
    def source(self) -> DedupInput:
        return DedupInput(**self.input)

    def path(self, *parts: str) -> str:
        return os.path.join(self.stage_dir, *parts)


def _settings_fingerprint(config: DedupConfig) -> dict[str, Any]:
    data = config.model_dump(mode="json", exclude={"tasks", "top_clusters"})
    if data.get("index"):
        data["index"].pop("rebuild", None)
    return data


def _file_stats(folder: str, files: dict[str, list[str]]) -> dict[str, list[int]]:
    out = {}
    for names in files.values():
        for name in names:
            st = os.stat(os.path.join(folder, name))
            out[name] = [st.st_size, st.st_mtime_ns]
    return out


def clear_outputs(output_dir: str) -> None:
    """Remove everything a dedup run wrote under ``output_dir`` (stage folder, deduped/, dropped/*/dedup/)."""
    targets = [os.path.join(output_dir, "stages", "dedup"), os.path.join(output_dir, "deduped")]
    dropped = os.path.join(output_dir, "dropped")
    if os.path.isdir(dropped):
        targets += [os.path.join(dropped, source, "dedup") for source in os.listdir(dropped)]
    targets = [t for t in targets if os.path.lexists(t)]
    if targets:  # only in a folder tokenmill created (its record), and only what dedup writes
        record = record_of(output_dir)
        for target in targets:
            remove_owned(target, record)


def plan_dedup(
    source: DedupInput,
    output_dir: str,
    config: DedupConfig,
    run_name: str | None = None,
    tasks: int | None = None,
    restart: bool = False,
) -> DedupPlan:
    """Check the index is usable (before any work), pin settings and input files, choose the rank count."""
    output_dir = os.path.abspath(output_dir)
    claim(output_dir, "dedup")  # a folder tokenmill did not create is refused before anything is written
    if restart:
        clear_outputs(output_dir)
    stage_dir = os.path.join(output_dir, "stages", "dedup")
    run_name = run_name or (config.index.run_name if config.index and config.index.run_name else None)
    run_name = run_name or os.path.basename(output_dir.rstrip(os.sep))
    if config.index is not None:
        _prepare_index(config, config.index, stage_dir, run_name)
    plan_path = os.path.join(stage_dir, "plan.json")
    settings = _settings_fingerprint(config)
    if os.path.exists(plan_path):
        with open(plan_path, encoding="utf-8") as handle:
            stored = json.load(handle)
        if stored["settings"] != settings:
            raise DedupStateError(
                f"{plan_path}: the dedup stage here was started with other settings; rerun with the same "
                f"settings to resume, or restart (CLI --restart / delete {stage_dir}) to start over"
            )
        files = source.plan(stage_dir)
        changed = []
        for names in files.values():
            for name in names:
                path = os.path.join(source.folder, name)
                if not os.path.exists(path):
                    changed.append(f"{name} (missing)")
                else:
                    st = os.stat(path)
                    if stored["file_stats"].get(name) != [st.st_size, st.st_mtime_ns]:
                        changed.append(name)
        if changed:
            raise DedupStateError(
                f"{plan_path}: input files changed since the dedup stage started ({', '.join(changed[:3])}…); "
                f"restart (CLI --restart / delete {stage_dir}) to dedup the new input"
            )
        return DedupPlan(
            output_dir,
            stage_dir,
            stored["tasks"],
            stored["run_name"],
            stored["input"],
            stored["files"],
            stored["run_id"],
        )
    files = source.plan(stage_dir)
    n_files = sum(len(v) for v in files.values())
    # an explicit ``config.tasks`` is honoured; a default (the recipe's executor.tasks) never exceeds the files:
    # ranks without a file only pay a process and the set-up (benchmarks/fixed_cost.py)
    chosen = config.tasks or min(tasks or n_files, max(1, n_files))
    # the run's identity in an index: a rerun of this plan is the same run, a later run into the same folder
    # (after --restart) is a new one even though it has the same name
    run_id = f"{run_name}@{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{secrets.token_hex(3)}"
    input_spec = dataclasses.asdict(source)
    record = {
        "settings": settings,
        "tasks": chosen,
        "run_name": run_name,
        "run_id": run_id,
        "input": input_spec,
        "files": n_files,
        "file_stats": _file_stats(source.folder, files),
    }
    os.makedirs(stage_dir, exist_ok=True)
    write_json_atomic(plan_path, record, indent=1)
    return DedupPlan(output_dir, stage_dir, chosen, run_name, input_spec, n_files, run_id)


def _prepare_index(config: DedupConfig, index_config: IndexConfig, stage_dir: str, run_name: str) -> None:
    """Open the index once up front: an unreachable Redis or a corrupt file fails here, before any work."""

    marker = os.path.join(stage_dir, "index_rebuilt.json")
    rebuild = index_config.rebuild and not os.path.exists(marker)  # set aside once per run, not on every resume
    index, moved = open_index(
        index_config, config.signature_fingerprint(), run_name, config.bands, config.rows, allow_rebuild=rebuild
    )
    if rebuild:
        os.makedirs(stage_dir, exist_ok=True)
        with open(marker, "w", encoding="utf-8") as handle:
            json.dump({"set_aside": moved}, handle)
    before = os.path.join(stage_dir, "index_before.json")
    if not os.path.exists(before):
        os.makedirs(stage_dir, exist_ok=True)
        with open(before, "w", encoding="utf-8") as handle:
            json.dump(index.describe(), handle)


def _check_complete(logging_dir: str, tasks: int, step: str) -> None:
    done = {f"{rank:05d}" for rank in range(tasks)}
    completions = os.path.join(logging_dir, "completions")
    present = set(os.listdir(completions)) if os.path.isdir(completions) else set()
    missing = sorted(done - present)
    if missing:
        raise DedupStateError(
            f"dedup {step}: {tasks - len(missing)}/{tasks} ranks finished ({logging_dir}); if the executor runs "
            "asynchronously (slurm, ray) wait for it, then rerun to resume"
        )


def _run(executor_factory: ExecutorFactory, pipeline: list, logging_dir: str, tasks: int, step: str) -> float:
    started = time.perf_counter()
    executor = executor_factory(pipeline, logging_dir, tasks)
    executor.run()
    _check_complete(logging_dir, tasks, step)
    return time.perf_counter() - started


def _record_time(plan: DedupPlan, step: str, seconds: float) -> None:
    path = plan.path("timings.json")
    timings = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            timings = json.load(handle)
    timings[step] = round(timings.get(step, 0.0) + seconds, 3)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(timings, handle)


def dedup_signatures(plan: DedupPlan, config: DedupConfig, executor_factory: ExecutorFactory) -> None:

    readers = plan.source.readers(plan.stage_dir)
    if not readers:
        return
    pipeline: list[PipelineStep] = [*readers, DedupSignatureStep(config, plan.path("signatures"))]
    seconds = _run(executor_factory, pipeline, plan.path("logs", "signatures"), plan.tasks, "signatures")
    _record_time(plan, "signatures", seconds)


class DedupClusterStep(PipelineStep):
    """The clustering step as a one-task datatrove pipeline (so its completion is recorded like the others)."""

    name = "🫆 Dedup clusters"
    type = "🧮 - TOKENMILL"

    def __init__(self, plan: DedupPlan, config: DedupConfig, source_priority: dict[str, int]):
        super().__init__()
        self.plan, self.config, self.source_priority = plan, config, dict(source_priority)

    def run(self, data=None, rank: int = 0, world_size: int = 1):
        with self.track_time():
            summary = run_clustering(
                self.plan.stage_dir, self.plan.path("clusters"), self.plan.tasks, self.config, self.source_priority
            )
        memory.record_peak(self.plan.stage_dir, "cluster", rank)
        self.stat_update("documents", value=summary["documents"])
        return
        yield  # a generator, like every datatrove step (never reached)


def _open_planned_index(config: DedupConfig, index_config: IndexConfig, plan: DedupPlan) -> DiskIndex | RedisIndex:
    """The persistent index of a planned run, opened for its steps (verified when the run was planned)."""
    index, _ = open_index(
        index_config,
        config.signature_fingerprint(),
        plan.run_name,
        config.bands,
        config.rows,
        allow_rebuild=False,
        run_id=plan.run_id,
        verify=False,
    )
    return index


def prepare_index_view(plan: DedupPlan, config: DedupConfig) -> IndexView:
    """What this run compares with, fixed once (``index_view.json``): a resumed run sees the same entries."""
    path = plan.path("index_view.json")
    if os.path.exists(path):
        return IndexView.load(path)
    view = IndexView(config.num_perm, config.bands)
    if config.index is not None:
        index = _open_planned_index(config, config.index, plan)
        if isinstance(index, RedisIndex):
            view = index.view(
                plan.stage_dir, config.bands, config.rows, SignatureSet(plan.path("signatures"), plan.tasks, config)
            )
        else:
            view = index.view(plan.stage_dir, config.bands, config.rows)
    view.save(path)
    return view


def dedup_cluster(
    plan: DedupPlan, config: DedupConfig, source_priority: dict[str, int], executor_factory: ExecutorFactory
) -> None:
    """Exact groups and LSH buckets in ``plan.tasks`` ranks (``buckets.py``), then the pairs-only clustering."""
    if not plan.source.readers(plan.stage_dir):
        return
    started = time.perf_counter()
    prepare_index_view(plan, config)
    _record_time(plan, "index_view", time.perf_counter() - started)
    for step_cls, step in ((DedupExactStep, "exact"), (DedupBucketStep, "buckets")):
        pipeline = [step_cls(plan.stage_dir, plan.tasks, config, source_priority)]
        seconds = _run(executor_factory, pipeline, plan.path("logs", step), plan.tasks, step)
        _record_time(plan, step, seconds)
    step = DedupClusterStep(plan, config, source_priority)
    seconds = _run(executor_factory, [step], plan.path("logs", "cluster"), 1, "clustering")
    _record_time(plan, "cluster", seconds)


def dedup_filter(plan: DedupPlan, executor_factory: ExecutorFactory) -> None:
    readers = plan.source.readers(plan.stage_dir)
    if not readers:
        return
    pipeline: list[PipelineStep] = [
        *readers,
        DedupFilterStep(
            plan.path("clusters", "decisions"), os.path.join(plan.output_dir, "dropped"), plan.path("filter_counts")
        ),
        DocumentWriter(
            os.path.join(plan.output_dir, "deduped"),
            output_filename="${source}/${rank}.jsonl.gz",
            compression=OUTPUT_COMPRESSION,
        ),
    ]
    seconds = _run(executor_factory, pipeline, plan.path("logs", "filter"), plan.tasks, "filter")
    _record_time(plan, "filter", seconds)


def _kept_count(plan: DedupPlan, signatures: SignatureSet) -> int:
    """Documents this run keeps that an index learns from (normal and short), counted without reading rows."""
    total = sum(counts[0] + counts[1] for counts in signatures.kind_counts().values())
    for rank in range(plan.tasks):
        for _, decision in iter_decisions(plan.path("clusters", "decisions"), rank):
            total -= decision["action"] == "drop"
    return total


def _kept_chunks(plan: DedupPlan, signatures: SignatureSet):
    """This run's kept documents for the index as (signatures, exact, names) chunks, rank by rank: one chunk
    of rows in memory (the index update streams; before, it held ~1.3 KB per kept document)."""
    for rank in range(plan.tasks):
        paths = signatures.paths(rank)
        decisions = iter_decisions(plan.path("clusters", "decisions"), rank)
        dropped = np.array([p for p, d in decisions if d["action"] == "drop"], dtype=np.int64)  # sorted
        count = signatures.counts[rank]
        with gzip.open(paths[".docs.jsonl.gz"], "rt", encoding="utf-8") as docs:
            for start in range(0, count, store.CHUNK):
                pos = np.arange(start, min(count, start + store.CHUNK))
                cols = store.read_rows(paths[".cols"], store.COLS, pos)
                keep = (cols["kind"] == KIND_NORMAL) | (cols["kind"] == KIND_SHORT)
                keep &= ~np.isin(pos, dropped)
                names = [json.loads(next(docs)) for _ in range(len(pos))]
                rows = pos[keep]
                sigs = store.read_rows(paths[".sig"], np.dtype("<u4"), rows, width=signatures.num_perm)
                exact = np.stack([cols["hi"][keep], cols["lo"][keep]], axis=1).astype(np.uint64)
                metas = [(plan.run_name, names[p][1], names[p][0], names[p][2]) for p in (rows - start).tolist()]
                yield sigs, exact, metas


def dedup_finish(plan: DedupPlan, config: DedupConfig) -> DedupResult:
    """Add kept documents to the index (once), check the accounting, assemble and save the result."""
    has_input = bool(plan.source.readers(plan.stage_dir))
    index_info = _update_index(plan, config, has_input) if config.index is not None else None
    params = config.model_dump(mode="json", exclude={"index"})
    params["tasks"] = plan.tasks
    result = DedupResult(run_name=plan.run_name, output_dir=plan.output_dir, params=params, index=index_info)
    if not has_input:  # nothing to dedup (e.g. curation kept nothing): an empty, balanced result
        _save(plan, result)
        return result
    with open(plan.path("clusters", "summary.json"), encoding="utf-8") as handle:
        summary = json.load(handle)
    _account_sources(plan, result, summary["per_source"], _filter_counts(plan))
    result.accounting_ok = not result.problems
    result.documents = sum(c.input for c in result.per_source.values())
    result.kept = sum(c.kept for c in result.per_source.values())
    result.dropped = result.documents - result.kept
    for counts in result.per_source.values():
        for rule, value in counts.dropped.items():
            result.rules[rule] = result.rules.get(rule, 0) + value
    result.pairs = summary["pairs"]
    result.clusters = summary["clusters"]
    result.cluster_size_histogram = summary["cluster_size_histogram"]
    result.top_clusters = summary["top_clusters"]
    if index_info is not None:
        index_info.update({k: summary["index"][k] for k in ("entries_compared", "matched_exact", "matched_near")})
        result.index = index_info  # pydantic copied the dict at construction
    result.memory = _memory_record(plan, summary["memory"], result, config)
    timings_path = plan.path("timings.json")
    if os.path.exists(timings_path):
        with open(timings_path, encoding="utf-8") as handle:
            result.seconds = json.load(handle)
    result.seconds["cluster_cpu"] = summary["seconds"]["cpu"]
    if result.problems:
        log.warning("dedup accounting problems: %s", "; ".join(result.problems))
    _save(plan, result)
    return result


def _update_index(plan: DedupPlan, config: DedupConfig, has_input: bool) -> dict[str, Any]:
    """Add this run's kept documents to the persistent index once (a marker file makes a rerun skip it);
    returns the index part of the result (entries before/added, a set-aside broken index)."""
    with open(plan.path("index_before.json"), encoding="utf-8") as handle:
        before = json.load(handle)
    index_info = {**before, "entries_before": before.get("entries", 0), "entries_added": 0}
    index_info.pop("entries", None)
    marker = plan.path("index_added.json")
    if os.path.exists(marker):
        with open(marker, encoding="utf-8") as handle:
            index_info["entries_added"] = json.load(handle)["added"]
    elif config.index is not None and config.index.update and has_input:
        started = time.perf_counter()
        index = _open_planned_index(config, config.index, plan)
        signatures = SignatureSet(plan.path("signatures"), plan.tasks, config)
        count = _kept_count(plan, signatures)
        chunks = _kept_chunks(plan, signatures)
        if count == 0:
            chunks = iter([(np.empty((0, config.num_perm), np.uint32), np.empty((0, 2), np.uint64), [])])
        added = index.add(count, chunks, config.bands, config.rows)
        with open(marker, "w", encoding="utf-8") as handle:
            json.dump({"added": added}, handle)
        index_info["entries_added"] = added
        _record_time(plan, "index", time.perf_counter() - started)
    rebuilt = plan.path("index_rebuilt.json")
    if os.path.exists(rebuilt):
        with open(rebuilt, encoding="utf-8") as handle:
            index_info["set_aside"] = json.load(handle)["set_aside"]
    return index_info


def _filter_counts(plan: DedupPlan) -> dict[str, dict]:
    """The filter ranks' per-source tallies (``filter_counts/<rank>.json``), summed."""
    filtered: dict[str, dict] = {}
    for rank in range(plan.tasks):
        with open(plan.path("filter_counts", f"{rank:05d}.json"), encoding="utf-8") as handle:
            for source, counts in json.load(handle).items():
                total = filtered.setdefault(source, {"input": 0, "kept": 0, "dropped": {}})
                total["input"] += counts["input"]
                total["kept"] += counts["kept"]
                for rule, value in counts["dropped"].items():
                    total["dropped"][rule] = total["dropped"].get(rule, 0) + value
    return filtered


def _account_sources(plan: DedupPlan, result: DedupResult, signed: dict[str, dict], filtered: dict[str, dict]) -> None:
    """Per source: the counts of the result, and every way the filter disagrees with what was signed and
    decided (as ``result.problems``; the balance itself is ``accounting.balance_problem``, as in curation)."""
    for source, expected in signed.items():
        # a source whose documents were all dropped still gets its (empty) folder: "dedup ran, nothing kept"
        os.makedirs(os.path.join(plan.output_dir, "deduped", source), exist_ok=True)
        got = filtered.get(source, {"input": 0, "kept": 0, "dropped": {}})
        result.per_source[source] = SourceCounts(
            input=got["input"],
            kept=got["kept"],
            dropped=got["dropped"],
            empty=expected["empty"],
            short=expected["short"],
        )
        if got["input"] != expected["input"]:
            result.problems.append(f"{source}: signed {expected['input']} documents, filtered {got['input']}")
        unbalanced = balance_problem(source, got["input"], got["kept"], sum(got["dropped"].values()))
        if unbalanced is not None:
            result.problems.append(unbalanced)
        dup_rules = {k: v for k, v in got["dropped"].items() if not k.startswith("read:")}
        if dup_rules != expected["dropped"]:
            result.problems.append(f"{source}: dropped {dup_rules}, decided {expected['dropped']}")
        if sum(v for k, v in got["dropped"].items() if k.startswith("read:")) != expected["unreadable"]:
            result.problems.append(f"{source}: unreadable documents not all dropped")


def _memory_record(plan: DedupPlan, mem: dict[str, Any], result: DedupResult, config: DedupConfig) -> dict[str, Any]:
    """The memory part of the result: each step's largest recorded peak RSS, and the clustering bound."""
    return {
        "peak_rss_bytes": memory.peaks(plan.stage_dir),
        "cluster_bound_bytes": mem["bound_bytes"],
        "cluster_pairs": mem["pairs_read"],
        "cluster_nodes": mem["nodes"],
        "cluster_peak_rss_bytes": mem["peak_rss_bytes"],
        "formula": memory.formula(config.num_perm),
    }


def _save(plan: DedupPlan, result: DedupResult) -> None:
    path = plan.path("result.json")
    write_json_atomic(path, result.to_dict(), ensure_ascii=False, indent=1)


@dataclasses.dataclass
class DedupSteps:
    """The steps of one dedup as callables: plain calls by default; the ``dedup`` flow passes its tasks (these
    same functions as Prefect tasks), so ``tokenmill dedup`` with or without Prefect and the flow run one
    sequence (``dedup_input``), as ``pipeline.run.CurationSteps`` does for a curation run."""

    plan: Callable[..., DedupPlan] = plan_dedup
    signatures: Callable[[DedupPlan, DedupConfig, ExecutorFactory], None] = dedup_signatures
    cluster: Callable[[DedupPlan, DedupConfig, dict[str, int], ExecutorFactory], None] = dedup_cluster
    filter: Callable[[DedupPlan, ExecutorFactory], None] = dedup_filter
    finish: Callable[[DedupPlan, DedupConfig], DedupResult] = dedup_finish


def _execute(
    plan: DedupPlan,
    config: DedupConfig,
    source_priority: dict[str, int],
    executor_factory: ExecutorFactory,
    steps: DedupSteps | None = None,
) -> DedupResult:
    steps = steps or DedupSteps()
    steps.signatures(plan, config, executor_factory)
    steps.cluster(plan, config, source_priority, executor_factory)
    steps.filter(plan, executor_factory)
    return steps.finish(plan, config)


def dedup_input(
    source: DedupInput,
    output_dir: str,
    config: DedupConfig,
    source_priority: dict[str, int],
    executor_factory: ExecutorFactory,
    run_name: str | None = None,
    tasks: int | None = None,
    restart: bool = False,
    steps: DedupSteps | None = None,
    log: Any = None,
) -> DedupResult:
    """Dedup ``source`` into ``output_dir``, which is held for the run (a second dedup or a curation on it is
    refused at once): plan, then the four steps, each through ``steps``. ``log``: a ``logging.Logger``-like
    object (the flow passes its run logger)."""
    steps = steps or DedupSteps()
    with hold(output_dir, "dedup"):
        plan = steps.plan(source, os.path.abspath(output_dir), config, run_name, tasks, restart)
        (log or logging.getLogger("tokenmill")).info(
            "dedup %s → %s (%d ranks, %d input files)", source.folder, plan.output_dir, plan.tasks, plan.files
        )
        return _execute(plan, config, source_priority, executor_factory, steps)


def run_dedup(
    run_dir: str,
    config: DedupConfig,
    source_priority: dict[str, int],
    executor_factory: ExecutorFactory,
    run_name: str | None = None,
    tasks: int | None = None,
    restart: bool = False,
) -> DedupResult:
    """Dedup a curation run: ``<run>/curated/<source>/*.jsonl.gz`` → ``<run>/deduped/<source>/<rank>.jsonl.gz``.

    ``source_priority`` maps source names to ``SourceConfig.priority`` (higher wins a cluster);
    ``executor_factory(pipeline, logging_dir, tasks)`` returns a datatrove executor; ``tasks`` (optional)
    is the rank count when ``config.tasks`` is unset (default: one rank per curated file).
    """
    plan = plan_dedup(DedupInput.curated(run_dir), run_dir, config, run_name, tasks, restart)
    return _execute(plan, config, source_priority, executor_factory)


def dedup_dataset(
    input_path: str,
    output_dir: str,
    config: DedupConfig,
    source_name: str | None = None,
    source_priority: dict[str, int] | None = None,
    executor_factory: ExecutorFactory | None = None,
    text_key: str = "text",
    id_key: str = "id",
    run_name: str | None = None,
    restart: bool = False,
) -> DedupResult:
    """Dedup an existing JSONL/Parquet dataset (file or folder) into ``output_dir`` laid out like a run."""
    source_name = source_name or source_name_for(input_path)
    source = DedupInput.dataset(input_path, source_name, text_key, id_key)
    factory = executor_factory or local_executor_factory()
    return dedup_input(source, output_dir, config, source_priority or {}, factory, run_name, restart=restart)
