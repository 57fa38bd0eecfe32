"""The ablation's report: per reference the arms' bits per byte over the seeds, the paired 95 % interval of raw −
curated, what the run could detect and the call (training/ablate_stats.py); Markdown and JSON."""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from training.ablate_stats import CONFIDENCE, METHOD, PairedDifference, in_words, paired_difference

ARMS = ("raw", "curated")


def spread(values: list[float]) -> float:
    """The seed spread: the sample standard deviation (0 for a single value)."""
    return statistics.stdev(values) if len(values) > 1 else 0.0


@dataclass(frozen=True)
class ArmBpb:
    """One arm's bits per byte on a reference over the seeds."""

    mean: float
    spread: float  # the sample standard deviation over the seeds (``spread``)
    values: list[float]  # each seed's, in seed order

    @classmethod
    def of(cls, values: list[float]) -> ArmBpb:
        return cls(statistics.fmean(values), spread(values), values)


@dataclass(frozen=True)
class Verdict:
    """One reference's result (``verdict``); ``to_dict`` is its entry in the report's ``per_reference``."""

    raw: ArmBpb
    curated: ArmBpb
    paired: PairedDifference  # the paired 95 % interval of raw − curated and the call (training/ablate_stats.py)
    threshold: float  # twice the larger seed spread: the rule before intervals, kept for readers of older reports

    @property
    def call(self) -> str:
        return self.paired.call

    def to_dict(self) -> dict[str, Any]:
        return {
            "raw": asdict(self.raw),
            "curated": asdict(self.curated),
            "difference": self.paired.difference,  # > 0: the curated arm has fewer bits per byte (better)
            "threshold": self.threshold,
            "difference_ci95": list(self.paired.difference_ci95),
            "min_detectable": self.paired.min_detectable,
            "call": self.paired.call,
            "paired": self.paired.to_dict(),
        }


def verdict(
    raw: list[float], curated: list[float], diff_bits: list[float] | None = None, doc_bytes: list[float] | None = None
) -> Verdict:
    """Means, seed spreads, the paired 95 % interval of raw − curated and the call (training/ablate_stats.py)."""
    paired = paired_difference(raw, curated, diff_bits, doc_bytes)
    return Verdict(ArmBpb.of(raw), ArmBpb.of(curated), paired, 2 * max(spread(raw), spread(curated)))


@dataclass(frozen=True)
class TaskAccuracy:
    """One multiple-choice task's mean accuracy over the seeds, per arm (``summarise_tasks``)."""

    raw: float
    curated: float
    items: int  # the task's items


def _document_differences(results, name: str, seeds: list[int]) -> tuple[list[float], list[float]] | None:
    """Per reference document: raw − curated bits averaged over the seeds, and its bytes (None: not recorded)."""
    runs = [results[arm][s] for arm in ARMS for s in seeds]
    if any(name not in (r.get("doc_bits") or {}) for r in runs):
        return None
    raw = [results["raw"][s]["doc_bits"][name] for s in seeds]
    curated = [results["curated"][s]["doc_bits"][name] for s in seeds]
    diffs = [statistics.fmean(r[j] - c[j] for r, c in zip(raw, curated, strict=True)) for j in range(len(raw[0]))]
    return diffs, results["curated"][seeds[0]]["doc_bytes"][name]


@dataclass(frozen=True)
class AblationReport:
    """What ``run_ablation`` returns. ``to_dict`` is ``ablation_report.json`` (and, with ``report_md`` once the
    Markdown is written, what ``tokenmill ablate --json`` prints), in the key order it always had."""

    seeds: list[int]
    tokens_per_run: int  # training tokens of every run (both arms train on the same count)
    params: int  # the model's parameters
    per_reference: dict[str, Verdict]  # reference name -> its means, interval and call
    documents: dict[str, Any]  # arm -> source -> training documents and the reference documents removed
    unique_train_tokens: dict[str, int]  # arm -> unique training tokens of its shards
    runs: dict[str, list[dict[str, Any]]]  # arm -> each seed's result (without its per-document bits)
    rule: str  # when a difference is called
    confidence: float  # of the intervals
    user_references: list[str] = field(default_factory=list)  # the references the user gave (the neutral test)
    tasks: dict[str, TaskAccuracy] = field(default_factory=dict)  # task -> mean accuracy per arm
    report_md: str | None = None  # ablation_report.md, once written

    def to_dict(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "report_md"}
        data["per_reference"] = {name: v.to_dict() for name, v in self.per_reference.items()}
        data["tasks"] = {name: asdict(accuracy) for name, accuracy in self.tasks.items()}
        if self.report_md is not None:
            data["report_md"] = self.report_md
        return data


def summarise(results, references, documents, manifests, settings: Any) -> AblationReport:
    per_reference: dict[str, Verdict] = {}
    for name in references:
        raw = [results["raw"][s]["bpb"][name] for s in settings.seeds]
        curated = [results["curated"][s]["bpb"][name] for s in settings.seeds]
        per_doc = _document_differences(results, name, settings.seeds)
        per_reference[name] = verdict(raw, curated, *(per_doc or (None, None)))
    first = results["curated"][settings.seeds[0]]
    return AblationReport(
        seeds=settings.seeds,
        tokens_per_run=first["tokens"],
        params=first["params"],
        per_reference=per_reference,
        documents=documents,
        unique_train_tokens={arm: manifests[arm].train_tokens for arm in ARMS},
        runs={arm: [_public(r) for r in results[arm].values()] for arm in ARMS},
        rule="a difference is called when its 95 % interval excludes 0: " + METHOD,
        confidence=CONFIDENCE,
    )


def _public(run: dict[str, Any]) -> dict[str, Any]:
    """A run's result without its per-document bits (kept in ``result.json``, too long for the report)."""
    return {k: v for k, v in run.items() if k not in ("doc_bits", "doc_bytes")}


def render_report(report: dict[str, Any]) -> str:
    users = set(report.get("user_references", []))
    lines = [
        "# Ablation: does curation help?",
        "",
        f"Two arms, the same tokenizer, model ({report['params']:,} parameters) and hyper-parameters, "
        f"{report['tokens_per_run']:,} training tokens per run, seeds {report['seeds']}. Unique training tokens: "
        f"raw {report['unique_train_tokens']['raw']:,}, curated {report['unique_train_tokens']['curated']:,}.",
        "",
        "| reference | raw bpb (± spread) | curated bpb (± spread) | raw − curated | 95 % interval "
        "| could detect ≥ | call |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for name, v in report["per_reference"].items():
        kind = " (yours)" if name in users else " (clean held-out)"
        low, high = v["difference_ci95"]
        lines.append(
            f"| {name}{kind} | {v['raw']['mean']:.4f} ± {v['raw']['spread']:.4f} | "
            f"{v['curated']['mean']:.4f} ± {v['curated']['spread']:.4f} | {v['difference']:+.4f} | "
            f"[{low:+.4f}, {high:+.4f}] | {v['min_detectable']:.4f} | {v['call']} |"
        )
    lines.append("")
    lines += [in_words(name, v) for name, v in report["per_reference"].items()]
    lines += [
        f"- How to read it: {len(report['seeds'])} seeds, each fixing the initialisation and the data order in "
        "both arms; " + report["rule"] + '. "Could detect ≥" is the smallest difference this budget sees; '
        "a smaller real effect needs more seeds, more reference text or more training tokens "
        "(benchmarks/ablate_power.py, docs/scaling.md).",
        "- Clean held-out references are text curation keeps, so they lean toward the curated arm; your own "
        "reference files are the neutral test.",
        *_task_lines(report),
        "",
        "| arm | source | training documents | reference documents removed |",
        "|---|---|---:|---:|",
    ]
    for arm, sources in report["documents"].items():
        for source, counts in sources.items():
            lines.append(f"| {arm} | {source} | {counts['documents']:,} | {counts['excluded_reference']:,} |")
    return "\n".join(lines) + "\n"


def summarise_tasks(results: dict[str, dict[int, dict]], seeds: list[int]) -> dict[str, TaskAccuracy]:
    """Per task and arm: mean accuracy over the seeds (runs measured with ``ablate.tasks``); {} without tasks."""
    runs = [results[arm][s] for arm in ARMS for s in seeds]
    if not runs or any("tasks" not in r for r in runs):
        return {}

    def accuracy(arm: str, name: str) -> float:
        return statistics.fmean(results[arm][s]["tasks"]["tasks"][name]["accuracy"] for s in seeds)

    return {
        name: TaskAccuracy(accuracy("raw", name), accuracy("curated", name), runs[0]["tasks"]["tasks"][name]["items"])
        for name in runs[0]["tasks"]["tasks"]
    }


def _task_lines(report: dict[str, Any]) -> list[str]:
    tasks = report.get("tasks") or {}
    if not tasks:
        return []
    lines = ["", "| task (multiple choice) | items | raw accuracy | curated accuracy |", "|---|---:|---:|---:|"]
    for name, v in tasks.items():
        lines.append(f"| {name} | {v['items']:,} | {v['raw']:.3f} | {v['curated']:.3f} |")
    return lines
