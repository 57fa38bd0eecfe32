"""The ladder's result: the law fitted to ``runs.csv`` (training/scaling.py), its check against the held-out
largest rung (training/ladder/check.py), the compute-optimal frontier and the plan it implies; Markdown and JSON."""

from __future__ import annotations

import json
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from training.ladder.check import holdout_check, holdout_lines
from training.ladder.plan import LadderPlan, read_result, write_runs_csv
from training.plan.options import plan_from_options
from training.scaling import fit_runs, read_runs, write_fit
from training.units import PlanError

REPORT_MD = "ladder_report.md"
REPORT_JSON = "ladder_report.json"


@dataclass(frozen=True)
class LadderReport:
    """What ``finish_ladder`` (and ``run_ladder``) return. ``to_dict`` is ``ladder_report.json`` (and, once the
    Markdown is written, what ``tokenmill scaling ladder --json`` prints: ``files`` then names ``report_md`` too),
    in the key order it always had."""

    ladder: dict[str, Any]  # the ladder's plan (``LadderPlan.to_dict``)
    runs: list[dict[str, Any]]  # every finished branch's result.json, in ladder order
    fit: dict[str, Any]  # the law fitted to them (``training.scaling``)
    fit_uses: str  # which parameter count the fit uses
    budget_flops: float | None  # the team's budget, when plan options were given
    frontier: list[dict[str, float]]  # compute-optimal N*, D* and loss around the budget
    plan: dict[str, Any] | None  # the team's plan redone with the fitted law
    plan_error: str | None  # why that plan could not be made
    holdout_check: dict[str, Any]  # the largest rung predicted from the others (training/ladder/check.py)
    files: dict[str, str]  # runs_csv, fit_json, fit_png
    report_md: str | None = None  # ladder_report.md, once written

    def to_dict(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "report_md"}
        if self.report_md is not None:
            data["files"] = {**self.files, "report_md": self.report_md}
        return data


def finish_ladder(plan: LadderPlan, plan_options: Any = None) -> LadderReport:
    """Fit the law to ``runs.csv``, write fit.json/fit.png and the report; return the report.

    ``plan_options``: the team's ``PlanOptions`` (budget, GPU, model or tokens); the report plans with the
    fitted law in their place (``plan: {fit: <ladder>/fit.json}``). None: only the frontier is reported.
    """
    out = Path(plan.config.output)
    csv_path = write_runs_csv(plan)
    runs = read_runs(csv_path)
    result = fit_runs(runs, bootstrap=plan.config.bootstrap, seed=plan.config.seed)
    paths = write_fit(result, runs, out)
    implied, budget, plan_error = _implied_plan(paths["json"], plan_options)
    frontier = _frontier(result.law(), budget or result.compute_range[-1])
    finished = [r for rung in plan.rungs for b in rung.branches if (r := read_result(plan, rung, b))]
    files = {"runs_csv": str(csv_path), "fit_json": str(paths["json"]), "fit_png": str(paths["png"])}
    report = LadderReport(
        ladder=plan.to_dict(),
        runs=finished,
        fit=result.to_dict(),
        fit_uses="params (every parameter, embedding included)",
        budget_flops=budget,
        frontier=frontier,
        plan=implied.to_dict() if implied is not None else None,
        plan_error=plan_error,
        holdout_check=holdout_check(finished, seed=plan.config.seed).to_dict(),
        files=files,
    )
    data = report.to_dict()
    (out / REPORT_JSON).write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    (out / REPORT_MD).write_text(render_report(data), encoding="utf-8")
    return replace(report, report_md=str(out / REPORT_MD))


def _implied_plan(fit_json: Path, plan_options: Any) -> tuple[Any, float | None, str | None]:
    if plan_options is None:
        return None, None, None
    options = plan_options.model_copy(update={"fit": str(fit_json)})
    try:
        implied = plan_from_options(options)
    except PlanError as error:
        return None, None, str(error)
    except (ZeroDivisionError, OverflowError) as error:
        return None, None, f"the fitted law gives no usable optimum ({error})"
    return implied, implied.budget_flops or implied.flops, None


def _frontier(law: Any, budget: float) -> list[dict[str, float]]:
    """The fitted law's compute-optimal N*, D* and loss at the team's budget and a decade either side."""
    rows = []
    for factor in (0.01, 0.1, 1.0, 10.0, 100.0):
        flops = budget * factor
        try:  # a poorly determined law can put N* outside the float range
            n, d = law.optimal(flops)
            row = {"flops": flops, "params": n, "tokens": d, "tokens_per_param": d / n, "loss": law.loss(n, d)}
        except (ValueError, ZeroDivisionError, OverflowError):
            continue
        rows.append(row)
    return rows


def _wide(ci: dict[str, list[float]] | None) -> bool:
    if not ci:
        return False
    return any(low > 0 and high / low > 10 for name, (low, high) in ci.items() if name in ("alpha", "beta", "E"))


def render_report(report: dict[str, Any]) -> str:
    """``ladder_report.md``: the runs, the fitted law, the frontier around the budget, the plan it implies, the
    held-out check and the figure."""
    ladder = report["ladder"]
    lines = [
        f"# Scaling ladder: {Path(ladder['config']['output']).name}",
        "",
        f"{len(report['runs'])} runs on `{ladder['config']['shards']}` ({ladder['unique_tokens']:,.0f} training "
        "tokens), held-out loss per (N, D). The fit uses **params** (every parameter, embedding included); "
        "`non_embedding_params` is recorded beside it.",
        "",
        "| width | layers | params | non-embedding | tokens | tokens/param | batch | lr | held-out loss |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in report["runs"]:
        lines.append(
            f"| {r['width']} | {r['layers']} | {r['params']:,} | {r['non_embedding_params']:,} | {r['tokens']:,} | "
            f"{r['tokens'] / r['params']:.2f} | {r['batch_tokens']:,} | {r['lr']:.2e} | {r['loss']:.4f} |"
        )
    lines += _law_lines(report["fit"], ladder.get("notes", []))
    lines += _frontier_lines(report)
    lines += _plan_lines(report)
    if report.get("holdout_check"):
        lines += holdout_lines(report["holdout_check"])
    lines += ["", "![fit](fit.png)", ""]
    return "\n".join(lines)


def _law_lines(fit: dict[str, Any], ladder_notes: list[str]) -> list[str]:
    """The fitted law with its 95 % intervals, the compute it was fitted over, a caution when it is poorly
    determined, and the fit's and the ladder's notes."""

    def ci(name: str) -> str:
        low_high = (fit.get("ci") or {}).get(name)
        return f" [{low_high[0]:.3g}, {low_high[1]:.3g}]" if low_high else ""

    lines = [
        "",
        "## Fitted law",
        "",
        f"L(N, D) = {fit['E']:.3f}{ci('E')} + {fit['A']:.4g}{ci('A')} / N^{fit['alpha']:.3f}{ci('alpha')} "
        f"+ {fit['B']:.4g}{ci('B')} / D^{fit['beta']:.3f}{ci('beta')}  ({fit['n_points']} points, "
        f"RMSE of log loss {fit['rmse_log']:.4f}; 95 % bootstrap intervals in brackets)",
        "",
        f"Fitted over C = {fit['compute_range'][0]:.3g} … {fit['compute_range'][1]:.3g} FLOPs; beyond that the law "
        "extrapolates.",
    ]
    if fit["alpha"] > 2 or fit["beta"] > 2 or _wide(fit.get("ci")):
        lines.append(
            "- caution: the law is poorly determined by these runs (an exponent above 2, or an interval spanning "
            "more than a factor of 10): its frontier and plan below are not to be trusted; add sizes or token "
            "counts, or larger ones (docs/scaling.md)"
        )
    for note in fit.get("notes", []) + ladder_notes:
        lines.append(f"- note: {note}")
    return lines


def _frontier_lines(report: dict[str, Any]) -> list[str]:
    """The compute-optimal frontier around the team's budget (or, without one, around the largest run)."""
    if report.get("budget_flops"):
        lines = ["", f"## Compute-optimal frontier around the team's budget ({report['budget_flops']:.3g} FLOPs)"]
    else:
        why = "the team's plan could not be made" if report.get("plan_error") else "no team budget given"
        lines = ["", f"## Compute-optimal frontier (around the ladder's largest run; {why})"]
    lines += ["", "| FLOPs | N* | D* | tokens/param | predicted loss |", "|---:|---:|---:|---:|---:|"]
    if not report["frontier"]:
        lines.append("| — | — | — | — | the law has no usable optimum here |")
    for row in report["frontier"]:
        lines.append(
            f"| {row['flops']:.3g} | {row['params']:.3g} | {row['tokens']:.3g} | {row['tokens_per_param']:.1f} | "
            f"{row['loss']:.3f} |"
        )
    return lines


def _plan_lines(report: dict[str, Any]) -> list[str]:
    """The training plan the fitted law implies for the team's options, or why it could not be made."""
    plan = report.get("plan")
    if plan is not None:
        lines = [
            "",
            "## The plan it implies",
            "",
            f"{plan['law_used']}: {plan['params']:,.0f} parameters, {plan['tokens']:,.0f} tokens "
            f"({plan['tokens_per_param']:.1f}/param), {plan['flops']:.3g} FLOPs, {plan['gpu_hours']:,.1f} GPU-hours "
            f"on {plan['gpus']} × {plan['gpu']['name']}; predicted loss {plan['predicted_loss']:.3f}.",
        ]
        lines += [f"- {v}" for v in plan.get("verdicts", [])]
        return lines + [f"- {n}" for n in plan.get("notes", [])]
    if report.get("plan_error"):
        return ["", f"The plan could not be made: {report['plan_error']}"]
    return []
