"""Fit a scaling law L(N, D) = E + A/N^α + B/D^β to the team's own runs (``tokenmill scaling fit``).

Method: Chinchilla's Approach 3 (Hoffmann et al. 2022, §3.3 and appendix D.2) as replicated by Besiroglu et
al. 2024 ("Chinchilla Scaling: A replication attempt"):

  * the prediction is written in log space as a log-sum-exp, log L̂ = LSE(a − α·log N, b − β·log D, e), with
    E = exp(e), A = exp(a), B = exp(b), which keeps every term positive without bounds on a, b, e;
  * the objective is the Huber loss (δ = 1e-3) of the residuals log L̂ − log L, summed over the runs: robust
    to the odd diverged or badly tuned run;
  * L-BFGS-B (``scipy.optimize.minimize``) from every point of the grid α, β ∈ {0, 0.5, …, 2},
    e ∈ {−1, 0, 1}, a, b ∈ {0, 5, …, 25} (5·5·3·6·6 = 2,700 starts), keeping the lowest objective;
  * 95 % intervals by bootstrap: resample the runs with replacement, refit, take the 2.5th/97.5th percentiles.

Speed (why some of this is hand-written): scipy has no vectorised multi-start driver, so each start is one
``minimize`` call with the objective and its analytic gradient in numpy (finite differences would cost six
evaluations per step), and OpenBLAS runs on one thread meanwhile (``_one_blas_thread``, measured 20-30×).
The full-data fit runs L-BFGS-B from all 2,700 starts (exponents bounded at ≥ 0), then re-runs the best
few distinct optima with tight tolerances (``_POLISH``). A bootstrap resample is close to the full data, so
it reuses only the ``BOOTSTRAP_STARTS`` best distinct optima of the full-data fit as its starts instead of
the whole grid (2,700 × N fits would take minutes; measured: 5.6 s of CPU for the grid and 3.6 s for 200 resamples of 60
runs on a shared 2-core machine).

Parameter counts are taken from the CSV as given; docs/scaling.md says which count to put there.
"""

from __future__ import annotations

import csv
import ctypes
import itertools
import json
import math
from collections.abc import Iterable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypedDict

from pipeline.errors import TokenmillError
from pipeline.figures import save_figure
from training.plan.laws import ScalingFit
from training.plan.report import finish_nd_axes
from training.units import PlanError, parse_count

HUBER_DELTA = 1e-3
GRID = {
    "alpha": [0.0, 0.5, 1.0, 1.5, 2.0],
    "beta": [0.0, 0.5, 1.0, 1.5, 2.0],
    "e": [-1.0, 0.0, 1.0],
    "a": [0.0, 5.0, 10.0, 15.0, 20.0, 25.0],
    "b": [0.0, 5.0, 10.0, 15.0, 20.0, 25.0],
}
PARAM_ORDER = ("a", "b", "e", "alpha", "beta")  # the optimiser's vector θ
N_PARAMS = 5
BOOTSTRAP_STARTS = 5  # distinct full-data optima a bootstrap resample starts from
DEFAULT_BOOTSTRAP = 200
BUDGETS = (1e18, 1e20, 1e22, 1e24)  # compute budgets (FLOPs, C = 6ND) at which tokens/param are reported
REQUIRED_COLUMNS = ("params", "tokens", "loss")
FIT_NAME = "own"  # as training.plan.laws.OWN_FIT: the law fitted to your runs


class ScalingFitError(TokenmillError, ValueError):
    """A runs CSV or a fit that cannot be used; the message names the file and the row or field."""


# ---------------------------------------------------------------------------------------------- input


@dataclass
class Runs:
    """The runs a law is fitted to: parameters N, tokens D, final (held-out) loss L, one entry per run."""

    params: list[float]
    tokens: list[float]
    loss: list[float]
    source: str = "<runs>"

    def __len__(self) -> int:
        return len(self.params)


def read_runs(path: str | Path) -> Runs:
    """Read ``params,tokens,loss`` (extra columns ignored) from a CSV. Counts may be written ``125M``, ``2.5B``.

    Raises ScalingFitError naming the file and the row (``row 3 (line 4)``) for a missing column, a value
    that is not a number, not finite or not positive, and for fewer runs than the law has parameters.
    """
    path = Path(path)
    try:
        handle = path.open(newline="", encoding="utf-8")
    except FileNotFoundError:
        raise ScalingFitError(f"{path}: not found") from None
    except OSError as error:
        raise ScalingFitError(f"{path}: cannot read: {error}") from None
    with handle:
        reader = csv.DictReader(handle)
        header = [name.strip() for name in reader.fieldnames or []]
        missing = [name for name in REQUIRED_COLUMNS if name not in header]
        if missing:
            found = ", ".join(header) if header else "no header"
            raise ScalingFitError(
                f"{path}: missing column(s) {', '.join(missing)} (needs {', '.join(REQUIRED_COLUMNS)}; found: {found})"
            )
        reader.fieldnames = header
        values: dict[str, list[float]] = {name: [] for name in REQUIRED_COLUMNS}
        for row_number, row in enumerate(reader, start=1):
            where = f"{path}: row {row_number} (line {reader.line_num})"
            for name in REQUIRED_COLUMNS:
                raw = row.get(name)
                if raw is None or not str(raw).strip():
                    raise ScalingFitError(f"{where}: {name} is empty")
                try:
                    value = parse_count(raw, name)
                except PlanError:
                    raise ScalingFitError(f"{where}: {name} {raw!r} is not a number") from None
                if not math.isfinite(value) or value <= 0:
                    raise ScalingFitError(f"{where}: {name} must be a positive finite number, got {raw!r}")
                values[name].append(value)
    runs = Runs(values["params"], values["tokens"], values["loss"], source=str(path))
    check_runs(runs)
    return runs


def check_runs(runs: Runs) -> None:
    """Enough runs, and enough spread in N and D, for five parameters to be determined."""
    if len(runs) < N_PARAMS:
        raise ScalingFitError(
            f"{runs.source}: {len(runs)} run(s), but the law has {N_PARAMS} parameters (E, A, B, alpha, beta): "
            f"give at least {N_PARAMS} runs (a ladder gives dozens)"
        )
    for name, column in (("params", runs.params), ("tokens", runs.tokens)):
        if len(set(column)) < 2:
            raise ScalingFitError(
                f"{runs.source}: every run has the same {name} ({column[0]:g}): its exponent cannot be fitted; "
                f"vary {name} across runs"
            )


# ---------------------------------------------------------------------------------------------- objective


def _arrays(runs: Runs):
    import numpy as np

    return np.log(np.asarray(runs.params)), np.log(np.asarray(runs.tokens)), np.log(np.asarray(runs.loss))


def objective(theta, log_n, log_d, log_l, weights=None) -> tuple[float, Any]:
    """Σ Huber_δ(LSE(a − α log N, b − β log D, e) − log L) and its analytic gradient in θ = (a, b, e, α, β).

    The Huber derivative is clip(r, −δ, δ) and the loss is slope·(r − slope/2), which is ½r² inside ±δ and
    δ(|r| − δ/2) outside. ``weights`` (how often each run was drawn) evaluates a bootstrap resample without
    copying rows. Written as few whole-array operations as possible: L-BFGS-B calls it ~50 times per start.
    """
    import numpy as np

    a, b, e, alpha, beta = theta
    t0 = a - alpha * log_n
    t1 = b - beta * log_d
    top = np.maximum(np.maximum(t0, t1), e)  # log-sum-exp shifted by the largest term: no overflow
    x0 = np.exp(t0 - top)
    x1 = np.exp(t1 - top)
    x2 = np.exp(e - top)
    total = x0 + x1 + x2
    residual = top + np.log(total) - log_l
    slope = np.clip(residual, -HUBER_DELTA, HUBER_DELTA)
    if weights is not None:
        value = float(np.dot(weights, slope * (residual - 0.5 * slope)))
        slope = slope * weights
    else:
        value = float(np.dot(slope, residual - 0.5 * slope))
    w = slope / total  # chain rule: ∂LSE/∂term_k = x_k / total
    g0 = w * x0
    g1 = w * x1
    grad = np.array([g0.sum(), g1.sum(), np.dot(w, x2), -np.dot(g0, log_n), -np.dot(g1, log_d)])
    return value, grad


def grid_starts():
    """The 2,700 starting points as rows of θ = (a, b, e, α, β)."""
    import numpy as np

    rows = itertools.product(GRID["a"], GRID["b"], GRID["e"], GRID["alpha"], GRID["beta"])
    return np.array(list(rows), dtype=float)


_BOUNDS = [(None, None), (None, None), (None, None), (0.0, None), (0.0, None)]  # a law's exponents are ≥ 0
# scipy's defaults for the 2,700 starts; the best few are then polished with tight tolerances, because the
# objective is small (δ = 1e-3) and its relative decrease stops the default run a little early
_POLISH = {"maxiter": 2000, "ftol": 1e-14, "gtol": 1e-12}


@contextmanager
def _one_blas_thread():
    """Run scipy's L-BFGS-B with OpenBLAS on one thread, restoring the thread counts afterwards.

    Why hand-written: L-BFGS-B calls BLAS on vectors of five numbers, and a multi-threaded OpenBLAS wakes its
    threads for each call. Measured on a shared 2-core machine: 770–1,080 µs per objective evaluation with
    the default threads, 37 µs with one (the fit of 2,700 starts: minutes vs seconds). threadpoolctl does
    this but is not a dependency; this looks up the OpenBLAS libraries already loaded into the process and
    does nothing when there are none.
    """

    import scipy.optimize  # noqa: F401  (loads scipy's OpenBLAS, so that it is found below)

    changed = []
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            paths = sorted(
                {line.split()[-1] for line in maps if "openblas" in line and line.split()[-1].startswith("/")}
            )
    except OSError:
        paths = []
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for suffix in ("", "64_"):
            for prefix in ("scipy_openblas", "openblas"):
                setter = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                getter = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                if setter is not None and getter is not None:
                    changed.append((setter, getter()))
                    setter(1)
                    break
    try:
        yield
    finally:
        for setter, threads in changed:
            setter(threads)


def _minimise(theta0, log_n, log_d, log_l, weights=None, options=None):
    from scipy.optimize import minimize

    result = minimize(
        objective,
        theta0,
        args=(log_n, log_d, log_l, weights),
        jac=True,
        method="L-BFGS-B",
        bounds=_BOUNDS,
        options=options,
    )
    return result.x, float(result.fun)


def _fit_from(starts, log_n, log_d, log_l, weights=None, options=None):
    """(θ, objective) of every start's L-BFGS-B optimum, best first."""
    results = [_minimise(start, log_n, log_d, log_l, weights, options) for start in starts]
    results.sort(key=lambda item: item[1])
    return results


def _distinct(results, count: int):
    import numpy as np

    kept: list = []
    for theta, value in results:
        if all(np.max(np.abs(theta - other)) > 1e-3 for other, _ in kept):
            kept.append((theta, value))
        if len(kept) == count:
            break
    return kept


# ---------------------------------------------------------------------------------------------- the fit


@dataclass
class FitResult:
    """The fitted law, its bootstrap intervals and where its optimum sits at a few budgets."""

    E: float
    A: float
    B: float
    alpha: float
    beta: float
    n_points: int
    objective: float
    ci: dict[str, list[float]] | None
    tokens_per_param: dict[str, float | None]
    tokens_per_param_ci: dict[str, list[float]] | None
    optimal: dict[str, dict[str, float]]
    compute_range: list[float]
    bootstrap: dict[str, Any]
    source: str
    rmse_log: float
    notes: list[str] = field(default_factory=list)

    def law(self) -> ScalingFit:
        return ScalingFit(FIT_NAME, self.E, self.A, self.B, self.alpha, self.beta, self.source)

    def to_dict(self) -> dict[str, Any]:
        return {
            "E": self.E,
            "A": self.A,
            "B": self.B,
            "alpha": self.alpha,
            "beta": self.beta,
            "ci": self.ci,
            "n_points": self.n_points,
            "tokens_per_param": self.tokens_per_param,
            "tokens_per_param_ci": self.tokens_per_param_ci,
            "optimal": self.optimal,
            "compute_range": self.compute_range,
            "objective": self.objective,
            "rmse_log": self.rmse_log,
            "bootstrap": self.bootstrap,
            "method": "Chinchilla Approach 3 (Besiroglu et al. 2024): Huber δ=1e-3 on log residuals, L-BFGS-B "
            "from a 2,700-point grid",
            "source": self.source,
            "notes": self.notes,
        }


def _budget_key(flops: float) -> str:
    return f"{flops:.0e}".replace("e+", "e")


class Constants(TypedDict):
    """The law's five constants, named as ``ScalingFit``'s fields."""

    E: float
    A: float
    B: float
    alpha: float
    beta: float


_CONSTANT_NAMES: tuple[Literal["E", "A", "B", "alpha", "beta"], ...] = ("E", "A", "B", "alpha", "beta")


def _constants(theta) -> Constants:
    a, b, e, alpha, beta = (float(x) for x in theta)
    return {"E": math.exp(e), "A": math.exp(a), "B": math.exp(b), "alpha": alpha, "beta": beta}


def _tokens_per_param(constants: Constants, flops: float) -> float:
    if constants["alpha"] <= 0 or constants["beta"] <= 0:
        return math.nan  # a term that does not fall with N (or D): no interior optimum
    try:  # a poorly determined (bootstrap) fit can put N* below the float range: no usable optimum either
        n, d = ScalingFit("x", source="", **constants).optimal(flops)
        return d / n
    except (ZeroDivisionError, OverflowError):
        return math.nan


def fit_runs(runs: Runs, bootstrap: int = DEFAULT_BOOTSTRAP, seed: int = 0, budgets=BUDGETS) -> FitResult:
    """Fit the law to ``runs`` (Approach 3) with ``bootstrap`` resamples for the 95 % intervals (0: none).

    The full-data fit runs L-BFGS-B from all 2,700 grid points; each resample starts from the
    ``BOOTSTRAP_STARTS`` best distinct full-data optima only (see the module docstring). Resamples with fewer
    than five distinct runs are skipped (not redrawn) and counted in ``bootstrap.skipped``.
    """
    import numpy as np

    check_runs(runs)
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, int) or bootstrap < 0:
        raise ScalingFitError(f"bootstrap: must be a whole number ≥ 0, got {bootstrap!r}")
    log_n, log_d, log_l = _arrays(runs)
    with _one_blas_thread():
        results = _fit_from(grid_starts(), log_n, log_d, log_l)
        starts = [theta for theta, _ in _distinct(results, BOOTSTRAP_STARTS)]
        polished = _fit_from(starts, log_n, log_d, log_l, options=_POLISH)
        best_theta, best_value = polished[0]
    constants = _constants(best_theta)
    law = ScalingFit(FIT_NAME, source=runs.source, **constants)
    residual = np.log([law.loss(n, d) for n, d in zip(runs.params, runs.tokens, strict=True)]) - log_l
    notes = _bound_notes(constants)
    samples, skipped = _bootstrap(starts, (log_n, log_d, log_l), bootstrap, seed)
    ci, tpp_ci = _intervals(samples, budgets)
    optimal, tokens_per_param = _optima(law, constants, budgets)
    compute = [6 * p * t for p, t in zip(runs.params, runs.tokens, strict=True)]
    return FitResult(
        **constants,
        n_points=len(runs),
        objective=best_value,
        ci=ci,
        tokens_per_param=tokens_per_param,
        tokens_per_param_ci=tpp_ci,
        optimal=optimal,
        compute_range=[min(compute), max(compute)],
        bootstrap={"samples": bootstrap, "used": len(samples), "skipped": skipped, "seed": seed, "starts": len(starts)},
        source=runs.source,
        rmse_log=float(np.sqrt(np.mean(residual**2))),
        notes=notes,
    )


def _bound_notes(constants: Constants) -> list[str]:
    """Why the fit cannot place the optimum: an exponent at its bound 0 (the runs do not vary N or D enough)."""
    notes: list[str] = []
    if constants["alpha"] <= 1e-6 or constants["beta"] <= 1e-6:
        notes.append(
            "an exponent is at its bound 0: the runs do not show the loss falling with "
            + ("N" if constants["alpha"] <= 1e-6 else "D")
            + "; the compute-optimal split is undefined — add runs that vary it"
        )
    return notes


def _bootstrap(starts: list, logs: tuple, bootstrap: int, seed: int) -> tuple[list[Constants], int]:
    """The constants fitted to ``bootstrap`` resamples of the runs (as multiplicities, from the full fit's best
    ``starts``), and how many resamples were skipped for holding fewer distinct runs than the law has constants."""
    import numpy as np

    log_n, log_d, log_l = logs
    samples: list[Constants] = []
    skipped = 0
    rng = np.random.default_rng(seed)
    n = len(log_n)
    for _ in range(bootstrap):
        counts = np.bincount(rng.integers(0, n, size=n), minlength=n).astype(float)
        if np.count_nonzero(counts) < N_PARAMS:
            skipped += 1
            continue
        with _one_blas_thread():
            theta, _ = _fit_from(starts, log_n, log_d, log_l, counts, _POLISH)[0]
        samples.append(_constants(theta))
    return samples, skipped


def _intervals(
    samples: list[Constants], budgets: Iterable[float]
) -> tuple[dict[str, list[float]] | None, dict[str, list[float]] | None]:
    """95 % percentile intervals of each constant and of the tokens/param at each budget (``None`` without
    samples; a budget whose ratio is undefined in every sample is left out)."""
    import numpy as np

    ci: dict[str, list[float]] | None = None
    tpp_ci: dict[str, list[float]] | None = None
    if samples:
        ci = {
            name: [
                float(np.percentile([s[name] for s in samples], 2.5)),
                float(np.percentile([s[name] for s in samples], 97.5)),
            ]
            for name in _CONSTANT_NAMES
        }
        tpp_ci = {}
        for flops in budgets:
            values = np.array([_tokens_per_param(s, flops) for s in samples])
            values = values[np.isfinite(values)]
            if values.size:
                tpp_ci[_budget_key(flops)] = [float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))]
    return ci, tpp_ci


def _optima(law: ScalingFit, constants: Constants, budgets: Iterable[float]) -> tuple[dict, dict]:
    """At each budget: the fitted law's compute-optimal size, tokens and loss, and its tokens/param (``None``,
    and no optimum, where the ratio is undefined: JSON has no NaN)."""
    optimal = {}
    tokens_per_param = {}
    for flops in budgets:
        ratio = _tokens_per_param(constants, flops)
        tokens_per_param[_budget_key(flops)] = ratio if math.isfinite(ratio) else None  # JSON has no NaN
        if math.isfinite(ratio):
            n_opt, d_opt = law.optimal(flops)
            optimal[_budget_key(flops)] = {"params": n_opt, "tokens": d_opt, "loss": law.loss(n_opt, d_opt)}
    return optimal, tokens_per_param


def fit_csv(path: str | Path, bootstrap: int = DEFAULT_BOOTSTRAP, seed: int = 0) -> FitResult:
    """``read_runs`` then ``fit_runs``: what ``tokenmill scaling fit`` does before printing or writing."""
    return fit_runs(read_runs(path), bootstrap=bootstrap, seed=seed)


# ---------------------------------------------------------------------------------------------- output

FIT_JSON = "fit.json"
FIT_PNG = "fit.png"


def write_fit(result: FitResult, runs: Runs, out_dir: str | Path) -> dict[str, Path]:
    """Write ``fit.json`` (what ``tokenmill plan --fit`` reads) and ``fit.png`` into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    json_path = out / FIT_JSON
    json_path.write_text(json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return {"json": json_path, "png": plot_fit(result, runs, out / FIT_PNG)}


def plot_fit(result: FitResult, runs: Runs, path: str | Path) -> Path:
    """Two panels: the runs over the fitted loss surface in the (N, D) plane with iso-FLOP lines and the
    compute-optimal frontier; and loss along iso-FLOP curves (the runs grouped by compute, the law's curve
    through each group). matplotlib on the headless Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    params = np.asarray(runs.params)
    n_grid = np.logspace(np.log10(params.min() / 3), np.log10(params.max() * 3), 200)  # shared by both panels
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(13, 5.5))
    _runs_over_surface(fig, ax, result, runs, n_grid)
    _iso_flop_curves(ax2, result, runs, n_grid)
    fig.suptitle(
        f"L = {result.E:.3g} + {result.A:.3g}/N^{result.alpha:.3f} + {result.B:.3g}/D^{result.beta:.3f}  "
        f"({len(runs)} runs)",
        fontsize=10,
    )
    return save_figure(fig, path)


def _runs_over_surface(fig: Any, ax: Any, result: FitResult, runs: Runs, n_grid: Any) -> None:
    """The left panel: the runs over the fitted surface, iso-FLOP lines by decade, the fitted frontier (when both
    exponents are positive) and the 20 tokens/param rule."""
    import numpy as np

    law = result.law()
    params, tokens, loss = np.asarray(runs.params), np.asarray(runs.tokens), np.asarray(runs.loss)
    compute = 6 * params * tokens
    n_lo, n_hi = params.min() / 3, params.max() * 3
    d_lo, d_hi = tokens.min() / 3, tokens.max() * 3
    d_grid = np.logspace(np.log10(d_lo), np.log10(d_hi), 200)
    nn, dd = np.meshgrid(n_grid, d_grid)
    contours = ax.contourf(nn, dd, law.loss(nn, dd), levels=20, cmap="viridis_r", alpha=0.85)
    fig.colorbar(contours, ax=ax, label="fitted loss L(N, D)")
    ax.scatter(
        params,
        tokens,
        c=loss,
        cmap="viridis_r",
        norm=contours.norm,
        edgecolors="black",
        s=40,
        zorder=5,
        label=f"runs ({len(runs)})",
    )
    decades = np.arange(np.floor(np.log10(compute.min() / 10)), np.ceil(np.log10(compute.max() * 10)) + 1)
    for k in decades:
        ax.plot(n_grid, 10.0**k / (6 * n_grid), color="white", lw=0.8, ls="--", alpha=0.7)
    if result.alpha > 0 and result.beta > 0:
        frontier = np.array([law.optimal(c) for c in np.logspace(decades[0], decades[-1], 60)])
        ax.plot(frontier[:, 0], frontier[:, 1], color="orange", lw=2, label="fitted compute-optimal frontier")
    ax.plot(n_grid, 20 * n_grid, color="red", lw=1.2, ls=":", label="20 tokens/param (Chinchilla rule)")
    finish_nd_axes(ax, (n_lo, n_hi), (d_lo, d_hi), "Runs over the fitted surface; dashed: iso-FLOP lines C = 6ND")


def _iso_flop_curves(ax: Any, result: FitResult, runs: Runs, n_grid: Any) -> None:
    """The right panel: the runs grouped by compute, each group with the law's loss along its iso-FLOP curve."""
    import matplotlib.pyplot as plt
    import numpy as np

    law = result.law()
    params, loss = np.asarray(runs.params), np.asarray(runs.loss)
    compute = 6 * params * np.asarray(runs.tokens)
    # iso-FLOP groups: runs within a factor 10^0.25 of each other's compute share a curve
    groups: dict[float, list[int]] = {}
    for index, c in enumerate(compute):
        groups.setdefault(round(float(np.log10(c)) * 4) / 4, []).append(index)
    colours = plt.cm.plasma(np.linspace(0, 0.85, max(1, len(groups))))
    for colour, (_key, members) in zip(colours, sorted(groups.items()), strict=False):
        c = float(np.median(compute[members]))
        ax.scatter(params[members], loss[members], color=colour, s=30, zorder=5)
        curve = law.loss(n_grid, c / (6 * n_grid))
        ax.plot(n_grid, curve, color=colour, lw=1.2, label=f"C ≈ {c:.1e}")
    ax.set(xscale="log", xlabel="parameters N", ylabel="loss", title="Loss along iso-FLOP curves (points: runs)")
    ax.set_ylim(loss.min() * 0.97, loss.max() * 1.05)
    ax.legend(fontsize=7, ncol=2)


def summary_lines(result: FitResult) -> list[str]:
    """The fit as a few human-readable lines (the CLI's output without --json)."""

    def interval(name: str, fmt: str) -> str:
        if not result.ci:
            return ""
        low, high = result.ci[name]
        return f"  [95 %: {low:{fmt}} – {high:{fmt}}]"

    lines = [
        f"fitted on {result.n_points} runs ({result.source}); compute {result.compute_range[0]:.3g}–"
        f"{result.compute_range[1]:.3g} FLOPs; RMSE of log loss {result.rmse_log:.4f}",
        "L(N, D) = E + A/N^alpha + B/D^beta",
    ]
    for name, fmt in (("E", ".4g"), ("A", ".4g"), ("B", ".4g"), ("alpha", ".4f"), ("beta", ".4f")):
        lines.append(f"  {name:<5} = {getattr(result, name):{fmt}}{interval(name, fmt)}")
    lines.append("compute-optimal tokens per parameter (C = 6ND):")
    for key, ratio in result.tokens_per_param.items():
        if ratio is None:
            lines.append(f"  C = {key} FLOPs: undefined (an exponent is 0)")
            continue
        ci = (result.tokens_per_param_ci or {}).get(key)
        extra = f"  [95 %: {ci[0]:.3g} – {ci[1]:.3g}]" if ci else ""
        lines.append(f"  C = {key} FLOPs: {ratio:.3g}{extra}")
    if result.bootstrap["samples"]:
        b = result.bootstrap
        lines.append(f"intervals: {b['used']} bootstrap resamples (seed {b['seed']}, {b['starts']} starts each)")
    lines += [f"note: {note}" for note in result.notes]
    return lines
