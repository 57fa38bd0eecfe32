"""The budget report: ``plan.md`` (tables + verdicts) and a PNG of the plan in the (N, D) plane.

The plot shows the parametric fit's loss contours over model size N and tokens D, iso-FLOP lines
(C = 6·N·D), the compute-optimal frontier (the fit's, and the 20 tokens/param rule), the plan and the
compute-optimal point for its budget; a second panel shows loss along the plan's iso-FLOP line, which is
how Chinchilla's Approach 2 reads off N*. matplotlib runs with the Agg backend (no display).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.figures import save_figure
from training.gpus import GIB
from training.plan.laws import FITTED_LOSS_CAVEAT, LOSS_CAVEAT, ScalingFit
from training.plan.memory import HEADROOM_SHARE
from training.plan.planner import Plan, check
from training.units import human, per_param

PNG_NAME = "plots/plan.png"


def _gib(value: float) -> str:
    return f"{value / GIB:,.1f} GiB"


CONVENTIONS = {
    "palm": "PaLM convention: 6N + 12·L·H·Q·T per token",
    "causal": "causal convention: 6N + 6·L·H·Q·T per token",
    "6n": "6N per token",
}


def flops_convention(plan: Plan) -> str:
    """The FLOPs convention of the plan's training FLOPs, spelled out (without a shape every convention is 6N)."""
    if plan.shape is None:
        return f"{plan.convention}: 6N per token, attention term unknown without a model shape"
    return CONVENTIONS.get(plan.convention, plan.convention)


def memory_verdict(memory) -> str:  # training.plan.memory.Memory
    """ "fits"/"does not fit" with what the estimate counts: every place that says "fits" says this."""
    verdict = "fits" if memory.fits else "does not fit"
    if memory.activations_estimated:
        return f"{verdict}; activations estimated after Korthikanti et al. 2022, not measured"
    return f"{verdict} counting optimizer, weight and gradient states only: activations not counted (no model shape)"


def suggestion_label(memory) -> str:  # training.plan.memory.Memory
    """What ``memory.suggestion`` is for: making the plan fit, or headroom for one that fits too tightly."""
    if memory.tight:
        return (
            f"Fits with less than {1 - HEADROOM_SHARE:.0%} headroom ({memory.per_gpu_bytes / memory.usable_bytes:.0%} "
            f"of usable memory); cheapest change with headroom"
        )
    return "Cheapest change that fits"


def render_markdown(plan: Plan, png: str | None = PNG_NAME, blocking: list[str] | None = None) -> str:
    """The plan as markdown; ``png`` is the image path relative to the markdown file (None: no image)."""
    blocking = check(plan) if blocking is None else blocking
    title = plan.model.get("name") or human(plan.params)
    lines = [f"# Training plan: {title} on {human(plan.tokens)} tokens", ""]
    lines += _verdict_section(plan, blocking)
    lines += _size_section(plan)
    if not plan.domain:  # continued pre-training: the from-scratch optimum is no yardstick (JSON keeps it)
        lines += _optimum_section(plan)
    lines += _memory_section(plan.memory)
    lines += _data_section(plan)
    lines += _domain_section(plan)
    if png:
        lines += ["## Where the plan sits", "", f"![plan]({png})", ""]
    notes = [n for n in plan.notes if n not in (LOSS_CAVEAT, FITTED_LOSS_CAVEAT)]
    if notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    return "\n".join(lines)


def _verdict_section(plan: Plan, blocking: list[str]) -> list[str]:
    lines = ["## Verdict", ""]
    if blocking:  # first: what stops training matters more than how compute-optimal the plan would be
        lines += ["**Blocking** (training refuses to start unless forced):", ""] + [f"- {p}" for p in blocking] + [""]
    lines += [f"- {v}" for v in plan.verdicts] + [""]
    for warning in plan.warnings:
        lines += [f"> **Warning:** {warning}", ""]
    return lines


def _size_section(plan: Plan) -> list[str]:
    lines = [
        "## Size and compute",
        "",
        "| | |",
        "|---|---|",
        f"| parameters | {plan.params:,.0f} ({human(plan.params)}) |",
        f"| non-embedding parameters | {plan.non_embedding_params:,.0f} |",
        f"| tokens | {plan.tokens:,.0f} ({human(plan.tokens)}) |",
        f"| tokens per parameter | {per_param(plan.tokens_per_param)} |",
        f"| FLOPs per token ({flops_convention(plan)}) | {plan.flops_per_token:.4g} |",
        f"| training FLOPs ({plan.convention} convention) | {human(plan.flops, 'flops')} "
        f"({plan.pf_days:,.1f} PF-days) |",
        f"| GPU | {plan.gpus} × {plan.gpu['name']} ({plan.gpu['bf16_tflops']:g} TFLOP/s bf16 dense) at MFU "
        f"{plan.mfu:.0%} |",
        f"| GPU-hours | {plan.gpu_hours:,.1f} |",
        f"| wall time | {plan.wall_hours:,.1f} h ({plan.wall_hours / 24:,.2f} days) |",
    ]
    if plan.cost is not None:
        lines.append(f"| cost | {plan.cost:,.0f} |")
    if plan.budget_flops is not None:
        lines.append(f"| budget | {human(plan.budget_flops, 'flops')} FLOPs |")
    return lines


def _optimum_section(plan: Plan) -> list[str]:
    opt, fit = plan.optimal, plan.optimal_fit
    caveat = FITTED_LOSS_CAVEAT if fit.get("path") else LOSS_CAVEAT
    lines = [
        "",
        f"## Compute-optimal for {human(opt['flops'], 'flops')} FLOPs (C = 6ND)",
        "",
        f"Optimum and verdicts from: **{plan.law_used}**.",
        "This budget follows Chinchilla's convention C = 6·N·D (no attention term), so it differs from the "
        "training FLOPs above, which follow the plan's convention.",
        "",
        "| method | N* | D* | tokens/param |",
        "|---|---|---|---|",
        f"| {opt['method']} rule | {human(opt['params'])} | {human(opt['tokens'])} | {opt['tokens_per_param']:.1f} |",
        f"| {fit['fit']} fit ({fit['source']}) | {human(fit['params'])} | {human(fit['tokens'])} | "
        f"{fit['tokens'] / fit['params']:.1f} |",
        "",
    ]
    if fit.get("path"):
        law, vs = fit["law"], fit["vs_chinchilla"]
        lines += [
            f"Fitted law: L = {law['E']:.4g} + {law['A']:.4g}/N^{law['alpha']:.4f} + "
            f"{law['B']:.4g}/D^{law['beta']:.4f}. "
            f"Its optimum is {vs['params_ratio']:.2f}× Chinchilla's N* and {vs['tokens_ratio']:.2f}× its D* "
            f"({fit['tokens_per_param']:.1f} vs {opt['tokens_per_param']:.0f} tokens/param).",
            "",
        ]
    lines += [
        f"Predicted loss, all from the {fit['fit']} fit L(N, D): plan {plan.predicted_loss:.3f}; at the "
        f"{opt['method']} rule's optimum {opt['loss']:.3f}; at the fit's own optimum {fit['loss']:.3f}. "
        f"{caveat}",
        "",
    ]
    return lines


def _memory_section(memory) -> list[str]:  # training.plan.memory.Memory
    lines = [
        "## Memory per GPU",
        "",
        f"{memory.strategy} over {memory.gpus} GPU(s), precision {memory.precision}, micro-batch "
        f"{memory.micro_batch} × {memory.seq_len}, activation checkpointing "
        f"{'on' if memory.activation_checkpointing else 'off'}, attention {memory.attention}.",
        "",
        "| part | per GPU |",
        "|---|---|",
    ]
    lines += [f"| {part.replace('_', ' ')} | {_gib(value)} |" for part, value in memory.breakdown.items()]
    lines += [
        f"| **total** | **{_gib(memory.per_gpu_bytes)}** of {_gib(memory.usable_bytes)} usable "
        f"({memory_verdict(memory)}) |",
        "",
    ]
    if memory.suggestion:
        where = "same estimate, activations included where shown"
        lines += [f"{suggestion_label(memory)} ({where}): {memory.suggestion}.", ""]
    return lines


def _data_section(plan: Plan) -> list[str]:
    """The data section (unique tokens, epochs): one place for what the plan says about the data."""
    if plan.data.get("unique_tokens") is None:
        return []
    epochs = plan.data["epochs"]
    return [
        "## Data",
        "",
        f"{human(plan.data['unique_tokens'])} unique tokens available; the plan reads them {epochs:.2f} times"
        f"{' — data-limited' if plan.data_limited else ''}.",
        "",
    ] + _routed_lines(plan)


def _routed_lines(plan: Plan) -> list[str]:
    """What a classifier mined from crawls into the domain sources (classify mode route), if anything."""
    routed = plan.data.get("routed_tokens") or {}  # origin -> target -> tokens
    if not routed:
        return []
    mined = [f"{human(n)} from {o} into {t}" for o, targets in sorted(routed.items()) for t, n in targets.items()]
    return [f"Of these, mined from crawls by a classifier (routed): {'; '.join(mined)}.", ""]


def _domain_section(plan: Plan) -> list[str]:
    if not plan.domain:
        return []
    d = plan.domain
    return [
        "## Domain-adaptive training",
        "",
        f"- continued tokens: {human(d['continued_tokens'])} = {d['share_of_base']:.1%} of the base model's "
        f"{human(d['base_tokens'])} ({d['base_tokens_per_param']:.0f} tokens/param)",
        f"- general-data replay: {d['replay_share'][0]:.0%}–{d['replay_share'][1]:.0%} of the mix "
        f"({human(d['replay_tokens'][0])}–{human(d['replay_tokens'][1])} tokens)",
        f"- learning rate: {d['learning_rate']}",
        f"- {d['ladder']}",
        "",
    ]


def plot_plan(plan: Plan, path: str | Path) -> Path:
    """Loss contours / iso-FLOP lines over (N, D) with the plan and the frontier; returns the PNG path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fit = ScalingFit(plan.optimal_fit["fit"], **plan.optimal_fit["law"], source=plan.optimal_fit["source"])
    n_points = [plan.params, plan.optimal["params"], plan.optimal_fit["params"]]
    d_points = [plan.tokens, plan.optimal["tokens"], plan.optimal_fit["tokens"]]
    # both axes span the plan and the two optima, a factor 30 beyond each side
    n_range = (min(n_points) / 30, max(n_points) * 30)
    d_range = (min(d_points) / 30, max(d_points) * 30)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(13, 5.5))
    _loss_map(fig, ax, plan, fit, n_range, d_range)
    _iso_flop_profile(ax2, plan, fit, n_range)
    return save_figure(fig, path)


def _loss_map(fig: Any, ax: Any, plan: Plan, fit: ScalingFit, n_range: tuple, d_range: tuple) -> None:
    """The left panel: the fit's loss over (N, D), iso-FLOP lines, the fit's frontier, the rule's tokens/param
    line, the plan and both optima."""
    import numpy as np

    (n_lo, n_hi), (d_lo, d_hi) = n_range, d_range
    c_ref = plan.optimal["flops"]
    n_grid = np.logspace(np.log10(n_lo), np.log10(n_hi), 200)
    d_grid = np.logspace(np.log10(d_lo), np.log10(d_hi), 200)
    nn, dd = np.meshgrid(n_grid, d_grid)
    loss = fit.E + fit.A / nn**fit.alpha + fit.B / dd**fit.beta
    # levels up to twice the plan's reducible loss: the corner of tiny N and D predicts losses of 100+, which would
    # stretch the colour scale until everything a reader cares about shares one colour
    top = min(float(loss.max()), 2 * max(plan.predicted_loss, fit.E) - fit.E)
    levels = np.linspace(float(loss.min()), top, 21)
    contours = ax.contourf(nn, dd, np.minimum(loss, top), levels=levels, cmap="viridis_r", alpha=0.85)
    fig.colorbar(contours, ax=ax, label=f"predicted loss ({fit.name} fit)")
    for k in np.arange(-3, 4):
        c = c_ref * 10.0**k
        ax.plot(n_grid, c / (6 * n_grid), color="white", lw=0.8, ls="--", alpha=0.7)
        x = n_grid[len(n_grid) // 8 * 7]
        y = c / (6 * x)
        if d_lo < y < d_hi:
            ax.annotate(f"{c:.0e}", (x, y), color="white", fontsize=7)
    budgets = c_ref * np.logspace(-4, 4, 60)
    frontier = np.array([fit.optimal(c) for c in budgets])
    ax.plot(frontier[:, 0], frontier[:, 1], color="orange", lw=2, label=f"{fit.name} fit frontier")
    ratio = plan.optimal["tokens"] / plan.optimal["params"]
    ax.plot(n_grid, ratio * n_grid, color="red", lw=1.5, ls=":", label=f"{ratio:g} tokens/param")
    ax.scatter([plan.params], [plan.tokens], marker="*", s=250, color="black", zorder=5, label="plan")
    for optimum, marker, size, color, label in (
        (plan.optimal, "o", 80, "red", "compute-optimal (rule)"),
        (plan.optimal_fit, "D", 60, "orange", "compute-optimal (fit)"),
    ):
        ax.scatter([optimum["params"]], [optimum["tokens"]], marker=marker, s=size, color=color, zorder=5, label=label)
    finish_nd_axes(ax, n_range, d_range, "Loss over (N, D); dashed: iso-FLOP lines C = 6ND")


def _iso_flop_profile(ax: Any, plan: Plan, fit: ScalingFit, n_range: tuple) -> None:
    """The right panel: the fit's loss along the plan's iso-FLOP line, with the plan's size and both optima."""
    import numpy as np

    c_ref = plan.optimal["flops"]
    iso_n = np.logspace(np.log10(n_range[0]), np.log10(n_range[1]), 300)
    ax.plot(iso_n, fit.loss(iso_n, c_ref / (6 * iso_n)), color="tab:blue")
    ax.axvline(plan.params, color="black", ls="--", label=f"plan {human(plan.params)}")
    ax.axvline(plan.optimal["params"], color="red", ls=":", label=f"rule N* {human(plan.optimal['params'])}")
    ax.axvline(plan.optimal_fit["params"], color="orange", ls="-.", label=f"fit N* {human(plan.optimal_fit['params'])}")
    ax.set(xscale="log", xlabel="parameters N", ylabel="predicted loss", title=f"Iso-FLOP profile at C = {c_ref:.2e}")
    ax.legend(fontsize=8)


@dataclass(frozen=True)
class PlanFiles:
    """What ``write_report`` wrote, and the Markdown it wrote to ``plan.md``."""

    json: Path  # plan.json
    markdown: Path  # plan.md
    png: Path | None  # plots/plan.png; None when not drawn (``with_png=False``)
    text: str  # plan.md's content (the Prefect artifact)


def write_report(plan: Plan, out_dir: str | Path, with_png: bool = True) -> PlanFiles:
    """Write ``plan.json``, ``plan.md`` and ``plots/plan.png`` into ``out_dir`` (a run directory)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    blocking = check(plan)
    payload = plan.to_dict() | {"blocking": blocking}
    (out / "plan.json").write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    png = plot_plan(plan, out / PNG_NAME) if with_png else None
    markdown = render_markdown(plan, PNG_NAME if png else None, blocking)
    (out / "plan.md").write_text(markdown, encoding="utf-8")
    return PlanFiles(json=out / "plan.json", markdown=out / "plan.md", png=png, text=markdown)


def finish_nd_axes(ax, n_range: tuple[float, float], d_range: tuple[float, float], title: str) -> None:
    """Log-log (parameters N, training tokens D) axes with the legend: the plan's loss surface and the scaling
    fit's (``training.scaling``) share them."""
    ax.set(
        xscale="log",
        yscale="log",
        xlim=n_range,
        ylim=d_range,
        xlabel="parameters N",
        ylabel="training tokens D",
        title=title,
    )
    ax.legend(loc="upper left", fontsize=8)
