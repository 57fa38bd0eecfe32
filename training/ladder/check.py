"""The ladder checked against itself: fit the law without the largest rung, predict that rung's held-out losses,
and report how far off the prediction is (the test a scaling law exists for: extrapolating to a larger model).

Beside the law's error the check gives a baseline that knows no scaling: the second-largest rung's loss at the
same tokens per parameter, taken as the prediction. A law that does not beat it has not learnt how the loss
falls with size from these runs, whatever its RMSE in-sample. The fit uses no bootstrap (only the point
estimate is compared). Skipped, with the reason, when fewer than five runs or fewer than two sizes remain.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from typing import Any

from training.scaling import Runs, ScalingFitError, fit_runs


@dataclass(frozen=True)
class HeldOutPrediction:
    tokens_per_param: float
    params: int
    tokens: int
    measured: float
    predicted: float
    baseline: float | None

    @property
    def error(self) -> float:
        """Relative error of the law's prediction: (predicted − measured) / measured."""
        return (self.predicted - self.measured) / self.measured


@dataclass(frozen=True)
class HoldoutCheck:
    """The largest rung's measured vs predicted loss from a fit on the other rungs (``skipped``: why not)."""

    width: int | None = None
    fitted_on: int = 0
    predictions: list[HeldOutPrediction] = field(default_factory=list)
    skipped: str | None = None

    @property
    def mean_abs_error(self) -> float | None:
        return statistics.fmean(abs(p.error) for p in self.predictions) if self.predictions else None

    @property
    def baseline_mean_abs_error(self) -> float | None:
        base = [abs(p.baseline - p.measured) / p.measured for p in self.predictions if p.baseline is not None]
        return statistics.fmean(base) if base else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "width": self.width,
            "fitted_on": self.fitted_on,
            "predictions": [asdict(p) | {"error": p.error} for p in self.predictions],
            "mean_abs_error": self.mean_abs_error,
            "baseline_mean_abs_error": self.baseline_mean_abs_error,
            "skipped": self.skipped,
        }


def holdout_check(runs: list[dict[str, Any]], seed: int = 0) -> HoldoutCheck:
    """``runs``: the finished branches (``result.json`` rows: width, params, tokens, loss, tokens_per_param)."""
    widths = sorted({r["width"] for r in runs})
    if len(widths) < 3:
        return HoldoutCheck(skipped=f"{len(widths)} size(s): holding one out leaves fewer than two to fit")
    largest, second = widths[-1], widths[-2]
    train = [r for r in runs if r["width"] != largest]
    held = [r for r in runs if r["width"] == largest]
    fit_on = Runs([r["params"] for r in train], [r["tokens"] for r in train], [r["loss"] for r in train], "ladder")
    try:
        law = fit_runs(fit_on, bootstrap=0, seed=seed).law()
    except ScalingFitError as error:
        return HoldoutCheck(width=largest, skipped=str(error))
    below = {r["tokens_per_param"]: r["loss"] for r in runs if r["width"] == second}
    predictions = [
        HeldOutPrediction(
            r["tokens_per_param"],
            r["params"],
            r["tokens"],
            r["loss"],
            law.loss(r["params"], r["tokens"]),
            below.get(r["tokens_per_param"]),
        )
        for r in held
    ]
    return HoldoutCheck(largest, len(train), predictions)


def holdout_lines(check: dict[str, Any]) -> list[str]:
    """The report's section (from ``HoldoutCheck.to_dict()``)."""
    lines = ["", "## Check: the largest rung predicted from the others", ""]
    if check.get("skipped"):
        return [*lines, f"Not checked: {check['skipped']}."]
    lines += [
        f"The law refitted on the {check['fitted_on']} runs below width {check['width']} predicts width "
        f'{check["width"]}\'s held-out loss (how to read it: docs/scaling.md, "Checking a ladder").',
        "",
        "| tokens/param | params | tokens | measured loss | predicted | error | no-scaling baseline |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for p in check["predictions"]:
        base = f"{p['baseline']:.4f}" if p["baseline"] is not None else "—"
        lines.append(
            f"| {p['tokens_per_param']:g} | {p['params']:,} | {p['tokens']:,} | {p['measured']:.4f} | "
            f"{p['predicted']:.4f} | {p['error']:+.1%} | {base} |"
        )
    law, base = check["mean_abs_error"], check["baseline_mean_abs_error"]
    verdict = (
        "the law extrapolates better than assuming no gain from size"
        if base is not None and law < base
        else "the law does **not** beat assuming no gain from size: do not extrapolate it"
    )
    baseline = f"; the no-scaling baseline (width below, same tokens/param) is off by {base:.1%}" if base else ""
    lines += ["", f"Mean absolute error {law:.1%}{baseline}: {verdict}."]
    return lines
