"""The training report: the run's summary, ``train_report.json`` / ``.md`` and ``plots/loss.png``, with the
plan's predictions beside the measurements."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from pipeline.figures import save_figure
from training.config import TrainConfig
from training.metrics import EVAL, METRICS, read_rows
from training.units import per_param


@dataclass(frozen=True)
class ReportFiles:
    """Where ``write_report`` wrote the training report."""

    report_md: str  # train_report.md
    report_json: str  # train_report.json
    plot: str | None  # plots/loss.png, None when matplotlib drew nothing


@dataclass(frozen=True)
class TrainSummary:
    """What one training run returns (``run_training``, ``launch_training``): status, measurements, output paths.

    ``to_dict`` is its JSON (``train_report.json``'s ``summary``, the Prefect ``train`` task's result), in the
    key order it always had; ``from_dict`` reads it back (the launched path reads ``train_report.json``).
    """

    status: str  # "completed", "incomplete" or "stopped by <signal|reason>"
    step: int  # optimizer steps done
    max_steps: int  # the resolved run length
    params: int  # model parameters
    precision: str  # the precision trained in (bf16, fp32, fp8…)
    final_loss: float | None  # the last logged training loss; None before the first log
    eval: dict[str, Any]  # held-out source → {"loss", "ppl", …} of the last evaluation
    tokens: int | None  # training tokens seen at the last log
    tokens_per_s: float | None  # mean throughput over the logs after the first (warm-up)
    mfu: float | None  # model FLOPs utilisation at the last log (GPU only)
    peak_memory_gib: float | None  # the highest peak memory of any log
    elapsed_s: float | None  # wall seconds at the last log
    resumed_from: str | None  # the checkpoint this run resumed from
    warnings: list[str]  # the gate's warnings and what was forced
    output: str  # the run's output folder
    final: str | None  # the exported Hugging Face model folder; None when the run did not complete
    metrics: str  # metrics.jsonl
    checkpoints: str  # the checkpoints folder
    tasks: dict[str, Any] | None = None  # the task evaluation's JSON (``eval_tasks``), when asked for
    report: ReportFiles | None = None  # the report's files, once the main process wrote them

    def to_dict(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("tasks", "report")}
        if self.tasks is not None:
            data["tasks"] = self.tasks
        if self.report is not None:
            data.update(asdict(self.report))
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainSummary:
        names = {f.name for f in fields(cls)} - {"report"}
        report = None
        if "report_json" in data:
            report = ReportFiles(data["report_md"], data["report_json"], data.get("plot"))
        return cls(**{k: v for k, v in data.items() if k in names}, report=report)


def summary_of(
    cfg: TrainConfig,
    output: Path,
    step: int,
    stopped: str | None,
    resumed_from: str | None,
    final: str | None,
    eval_results: dict[str, Any],
    n_params: int,
    precision: str,
    warnings: list[str],
) -> TrainSummary:
    rows = read_rows(output / METRICS)
    last = rows[-1] if rows else {}
    measured = [r["tokens_per_s"] for r in rows[1:]] or [r["tokens_per_s"] for r in rows]  # first log: warm-up
    assert cfg.max_steps is not None, "a resolved config"
    if stopped:
        status = f"stopped by {stopped}"
    elif step >= cfg.max_steps:
        status = "completed"
    else:
        status = "incomplete"
    return TrainSummary(
        status=status,
        step=step,
        max_steps=cfg.max_steps,
        params=n_params,
        precision=precision,
        final_loss=last.get("loss"),
        eval=eval_results,
        tokens=last.get("tokens"),
        tokens_per_s=sum(measured) / len(measured) if measured else None,
        mfu=last.get("mfu"),
        peak_memory_gib=max((r["peak_memory_gib"] for r in rows), default=None),
        elapsed_s=last.get("elapsed_s"),
        resumed_from=resumed_from,
        warnings=warnings,
        output=str(output),
        final=final,
        metrics=str(output / METRICS),
        checkpoints=str(output / "checkpoints"),
    )


# ----------------------------------------------------------------------------------------------- report


def write_report(
    output: Path, cfg: TrainConfig, plan, gpu: str | None, summary: TrainSummary, problems: list[str]
) -> ReportFiles:
    """``train_report.md`` / ``.json`` and ``plots/loss.png``: the measurements beside the plan's predictions."""
    rows, evals = read_rows(output / METRICS), read_rows(output / EVAL)
    world = plan.gpus
    predicted_rate = plan.hardware.cluster_flops / plan.flops_per_token
    tokens = summary.tokens or 0
    rate = summary.tokens_per_s
    comparison = {
        "hardware": f"{world} × {gpu}" if gpu else "CPU (the plan's GPU figures do not apply)",
        "tokens_per_s": {"planned": predicted_rate if gpu else None, "measured": rate},
        "mfu": {"planned": plan.mfu if gpu else None, "measured": summary.mfu},
        "peak_memory_gib": {
            "planned": plan.memory.per_gpu_gib if gpu else None,
            "measured": summary.peak_memory_gib,
        },
        "time_s": {
            "planned": tokens / predicted_rate if gpu and tokens else None,
            "measured": summary.elapsed_s,
        },
    }
    png = plot_loss(output, rows, evals, plan.predicted_loss)
    report = {
        "summary": summary.to_dict(),
        "comparison": comparison,
        "plan": plan.to_dict(),
        "blocking_forced": problems,
        "config": cfg.model_dump(mode="json"),
        "eval_history": evals,
    }
    (output / "train_report.json").write_text(json.dumps(report, indent=2, default=str) + "\n", encoding="utf-8")
    markdown = render_markdown(report, png)
    (output / "train_report.md").write_text(markdown, encoding="utf-8")
    return ReportFiles(str(output / "train_report.md"), str(output / "train_report.json"), png)


def render_markdown(report: dict[str, Any], png: str | None) -> str:
    """The training summary as markdown (also the Prefect artifact)."""
    s, c, plan = report["summary"], report["comparison"], report["plan"]

    def fmt(value: Any, spec: str = ",.0f") -> str:
        return "—" if value is None else format(value, spec)

    lines = [
        f"# Training report: {Path(s['output']).name}",
        "",
        f"**{s['status']}** at step {s['step']}/{s['max_steps']}, {s['params']:,} parameters, {s['precision']}, "
        f"{c['hardware']}. Final training loss {fmt(s['final_loss'], '.4f')}.",
        "",
        "| | planned | measured |",
        "|---|---:|---:|",
        f"| tokens/s | {fmt(c['tokens_per_s']['planned'])} | {fmt(c['tokens_per_s']['measured'])} |",
        f"| MFU | {fmt(c['mfu']['planned'], '.1%')} | {fmt(c['mfu']['measured'], '.1%')} |",
        f"| peak memory per GPU (GiB) | {fmt(c['peak_memory_gib']['planned'], '.2f')} | "
        f"{fmt(c['peak_memory_gib']['measured'], '.2f')} |",
        f"| time for {fmt(s['tokens'])} tokens (s) | {fmt(c['time_s']['planned'], ',.1f')} | "
        f"{fmt(c['time_s']['measured'], ',.1f')} |",
        "",
        f"Plan: {plan['tokens']:,.0f} tokens, {plan['flops']:.3g} FLOPs ({plan['flops_per_token']:.3g}/token), "
        f"{per_param(plan['tokens_per_param'])} tokens/parameter; predicted loss {plan['predicted_loss']:.3f} "
        "(scaling fit, for comparison only).",
    ]
    for verdict in plan.get("verdicts", []):
        lines.append(f"- {verdict}")
    if s.get("eval"):
        lines += ["", "| held-out source | loss | perplexity | tokens |", "|---|---:|---:|---:|"]
        for source, values in s["eval"].items():
            lines.append(f"| {source} | {values['loss']:.4f} | {values['ppl']:.2f} | {values['tokens']:,} |")
    for problem in report.get("blocking_forced", []):
        lines.append(f"- forced past: {problem}")
    for warning in s.get("warnings", []):
        lines.append(f"- note: {warning}")
    if png:
        lines += ["", f"![loss]({Path(png).relative_to(Path(s['output'])).as_posix()})"]
    if s.get("final"):
        lines += ["", f"Model: `{s['final']}` (AutoModelForCausalLM / AutoTokenizer)."]
    return "\n".join(lines) + "\n"


def plot_loss(output: Path, rows: list[dict], evals: list[dict], predicted_loss: float) -> str | None:
    if not rows:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(7, 4))
    axis.plot([r["step"] for r in rows], [r["loss"] for r in rows], label="train loss")
    sources = sorted({k for e in evals for k in e if k != "step"})
    for source in sources:
        points = [(e["step"], e[source]["loss"]) for e in evals if source in e]
        axis.plot(*zip(*points, strict=True), marker="o", label=f"held-out {source}")
    highest = max(r["loss"] for r in rows)
    if 0 < predicted_loss < 1.5 * highest:  # a tiny CPU run's fit prediction (~80) would flatten the curves
        axis.axhline(predicted_loss, color="grey", linestyle="--", label="plan: predicted final loss (fit)")
    axis.set_xlabel("step")
    axis.set_ylabel("loss (nats/token)")
    axis.legend()
    return str(save_figure(figure, output / "plots" / "loss.png", dpi=100))
