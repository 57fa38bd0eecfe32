"""What a dedup run reports: ``DedupResult`` (JSON via ``to_dict()``) and its markdown section."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from pipeline.accounting import missing_text_fields
from pipeline.markdown import md_code
from pipeline.wording import index_hint, missing_text_warning


class SourceCounts(BaseModel):
    input: int = 0
    kept: int = 0
    dropped: dict[str, int] = Field(default_factory=dict, description="rule -> documents (read errors: 'read:<rule>')")
    empty: int = Field(default=0, description="no word at all: kept, never compared")
    short: int = Field(default=0, description="fewer words than one shingle: exact dedup only")


class DedupResult(BaseModel):
    run_name: str
    output_dir: str
    params: dict[str, Any]
    documents: int = 0
    kept: int = 0
    dropped: int = 0
    rules: dict[str, int] = Field(default_factory=dict)
    per_source: dict[str, SourceCounts] = Field(default_factory=dict)
    pairs: dict[str, int] = Field(default_factory=dict, description="LSH candidate pairs and verified pairs")
    clusters: int = 0
    cluster_size_histogram: dict[str, int] = Field(default_factory=dict)
    top_clusters: list[dict[str, Any]] = Field(default_factory=list)
    index: dict[str, Any] | None = None
    memory: dict[str, Any] = Field(default_factory=dict)
    seconds: dict[str, float] = Field(default_factory=dict)
    accounting_ok: bool = True
    problems: list[str] = Field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-serialisable dict (what ``report.json`` embeds)."""
        return self.model_dump(mode="json")


def _mib(value: float | int | None) -> str:
    return "—" if value is None else f"{value / 2**20:,.1f} MiB"


def _cut(text: str | None, limit: int = 90) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cell(text: str | None, limit: int = 90) -> str:
    return _cut(text, limit).replace("|", "\\|")


#: the per-source table of a dedup result: report.md's dedup section, the ``dedup``/``dedup-summary`` artifacts,
#: ``dedup_report.md`` and ``tokenmill dedup``
DEDUP_COLUMNS = ("source", "in", "kept", "exact_duplicate", "near_duplicate", "other drops", "empty (kept)", "short")


def dedup_source_rows(result: DedupResult) -> list[list[str]]:
    """The ``DEDUP_COLUMNS`` cells of each source, sorted by name (other drops: every rule but the two dedup ones)."""
    rows = []
    for name, counts in sorted(result.per_source.items()):
        other = sum(v for k, v in counts.dropped.items() if k not in ("exact_duplicate", "near_duplicate"))
        rows.append(
            [
                name,
                f"{counts.input:,}",
                f"{counts.kept:,}",
                f"{counts.dropped.get('exact_duplicate', 0):,}",
                f"{counts.dropped.get('near_duplicate', 0):,}",
                f"{other:,}",
                f"{counts.empty:,}",
                f"{counts.short:,}",
            ]
        )
    return rows


def dedup_report_md(result: DedupResult | dict[str, Any]) -> str:
    """The dedup section of the run report (markdown): the one rendering of a dedup result, for report.md,
    ``dedup_report.md`` and the Prefect artifacts. ``result``: a ``DedupResult`` or its ``to_dict()`` (what
    crosses Prefect and ``report.json``)."""
    if not isinstance(result, DedupResult):
        result = DedupResult.model_validate(result)
    p = result.params
    lines = [
        "## Deduplication",
        "",
        f"{result.documents:,} documents in, **{result.kept:,} kept**, {result.dropped:,} dropped "
        f"(exact + MinHash {p.get('num_perm')} permutations, {p.get('bands')} bands × {p.get('rows')} rows, "
        f"{p.get('shingle_size')}-word shingles, candidates verified at estimated Jaccard ≥ {p.get('threshold')}).",
        "",
        "| " + " | ".join(DEDUP_COLUMNS) + " |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        *("| " + " | ".join(row) + " |" for row in dedup_source_rows(result)),
    ]
    lines += [
        "",
        f"LSH candidate pairs {result.pairs.get('candidates', 0):,}, verified {result.pairs.get('verified', 0):,}; "
        f"{result.clusters:,} clusters.",
    ]
    if result.index:
        lines += _index_lines(result.index)
    if result.cluster_size_histogram:
        lines += ["", "| cluster size | clusters |", "|---|---:|"]
        lines += [f"| {size} | {count:,} |" for size, count in result.cluster_size_histogram.items()]
    if result.top_clusters:
        lines += _top_cluster_lines(result.top_clusters, p.get("threshold"))
    if result.memory:
        lines += _memory_lines(result.memory)
    if result.seconds:
        lines.append("Time: " + ", ".join(f"{k} {v:.1f} s" for k, v in result.seconds.items()) + ".")
    if not result.accounting_ok:
        lines += ["", "**Accounting problems:**"] + [f"- {problem}" for problem in result.problems]
    return "\n".join(lines) + "\n"


def _index_lines(idx: dict[str, Any]) -> list[str]:
    """What the persistent index of earlier runs compared, matched and added (and a set-aside old index)."""
    where = idx.get("path") or f"redis {idx.get('redis')} ({idx.get('basename')})"
    lines = [
        "",
        f"Index of earlier runs ({idx.get('kind')}: {where}): {idx.get('entries_before', 0):,} entries compared "
        f"({idx.get('entries_compared', 0):,} fetched), {idx.get('matched_exact', 0):,} exact and "
        f"{idx.get('matched_near', 0):,} near matches dropped, "
        f"{idx.get('entries_added', 0):,} kept documents added.",
    ]
    if idx.get("set_aside"):
        lines.append(f"The previous index was set aside as {md_code(idx['set_aside'])} (rebuild).")
    return lines


def _top_cluster_lines(top_clusters: list[dict[str, Any]], threshold: Any) -> list[str]:
    """The largest clusters: one row per dropped example, the size and the survivor on the first row only."""
    lines = [
        "",
        "Largest clusters (survivor, then up to three dropped members). Similarity is the member's estimated "
        f"Jaccard to the survivor: a member joins its cluster through any verified pair ≥ {threshold}, "
        "so its similarity to the survivor itself can be lower.",
        "",
        "| size | survivor | dropped example | rule | similarity to survivor |",
        "|---:|---|---|---|---:|",
    ]
    for cluster in top_clusters:
        survivor = cluster["survivor"]
        label = f"{md_code(_cut(str(survivor.get('id')), 40), table=True)} ({survivor.get('source')}"
        label += f", run {survivor.get('run')})" if cluster.get("from_index") else ")"
        label += f": {_cell(survivor.get('snippet'), 60)}" if survivor.get("snippet") else ""
        for i, example in enumerate(cluster["examples"] or [{}]):
            member = md_code(_cut(str(example.get("id", "")), 40), table=True)
            lines.append(
                f"| {cluster['size'] if i == 0 else ''} | {label if i == 0 else ''} | "
                f"{member}: {_cell(example.get('snippet'), 60)} | "
                f"{example.get('rule', '')} | {example.get('similarity', '')} |"
            )
    return lines


def _memory_lines(mem: dict[str, Any]) -> list[str]:
    """Each step's peak RSS and the clustering's measured size against its bound."""
    peaks = mem.get("peak_rss_bytes", {})
    return [
        "",
        "Memory (largest peak RSS of one process, per step): "
        + ", ".join(f"{step} {_mib(value)}" for step, value in peaks.items())
        + f"; clustering read {mem.get('cluster_pairs', 0):,} candidate pairs over {mem.get('cluster_nodes', 0):,} "
        f"documents and entries, bound {_mib(mem.get('cluster_bound_bytes'))} ({mem.get('formula', '')}).",
    ]


def dedup_warnings(result: DedupResult, text_key: str = "text", index: str | None = None) -> list[str]:
    """What ``tokenmill dedup`` says loudly at its end, worded as curation says it (``pipeline.curate.report.warn``):
    a source most of whose rows had no field ``text_key`` (with the fields those rows had), and a run that kept nothing
    because a persistent ``index`` matched it."""
    warnings = []
    for source, counts in sorted(result.per_source.items()):
        missing = counts.dropped.get("read:missing_text", 0)
        if counts.input and missing / counts.input > 0.5:
            fields = missing_text_fields(Path(result.output_dir) / "dropped" / source)
            warnings.append(
                missing_text_warning(source, missing, counts.input, text_key, fields, "pass --text-key FIELD")
            )
    matched = (result.index or {}).get("matched_exact", 0) + (result.index or {}).get("matched_near", 0)
    if result.documents and result.kept == 0 and matched:
        warnings.append(
            f"nothing kept: all {result.documents:,} documents were dropped, {matched:,} as duplicates of earlier "
            f"runs{index_hint(index)}"
        )
    return warnings
