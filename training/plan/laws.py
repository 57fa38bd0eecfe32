"""Scaling math: FLOPs per token, the published scaling laws and the team's fitted one, compute-optimal sizes.

Conventions, and why:
  * FLOPs per token = 6N + 12·L·H·Q·T (PaLM / nanoGPT; N = all parameters, H·Q = query width, T = sequence
    length). This is the convention docs/reference.md's MFU figures use (134M at 371k tok/s = 39 % of 989 TFLOP/s).
    ``causal`` halves the attention term (a causal mask skips half the scores); ``6n`` drops it.
  * Compute-optimal sizes use C = 6·N·D as Chinchilla's Table 3 does. The default rule is D = 20·N, which
    reproduces every Table 3 row within 5 % (N = sqrt(C / 120)); the parametric fit (Epoch AI's refit by
    default) is reported beside it. Hoffmann's published Approach-3 constants imply ~90+ tokens/parameter
    at Table 3's budgets and disagree with the paper's own table, hence the warning when they are chosen.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, overload

from training.models import ModelShape
from training.units import PlanError, require_positive

if TYPE_CHECKING:
    import numpy as np

TOKENS_PER_PARAM = 20.0  # the Chinchilla rule of thumb; reproduces Table 3 within 5 %

Convention = Literal["palm", "causal", "6n"]

HOFFMANN_WARNING = (
    "Hoffmann et al.'s published fit constants imply ~90+ tokens/parameter at Chinchilla's budgets and disagree "
    "with the paper's own Table 3 (Besiroglu et al. 2024); the Epoch AI refit is the default for a reason."
)
FITTED_LOSS_CAVEAT = (
    "Predicted loss comes from the law fitted to your runs: it holds for their data, tokenizer and recipe, and "
    "is a forecast outside the compute range they span."
)
LOSS_CAVEAT = (
    "Predicted loss L(N, D) = E + A/N^α + B/D^β holds only for the fit's data and tokenizer (MassiveText); "
    "use it to compare plans, not to predict your run's loss."
)


def flops_per_token(
    params: float, shape: ModelShape | None = None, seq_len: int = 2048, convention: Convention = "palm"
) -> float:
    """Training FLOPs per token: 6N plus the attention term 12·L·H·Q·T (``palm``), half of it (``causal``) or
    none (``6n``). Without a shape the attention term is unknown and left out."""
    if convention not in ("palm", "causal", "6n"):
        raise PlanError(f"convention: {convention!r} is not one of palm, causal, 6n")
    require_positive("params", params)
    require_positive("seq_len", seq_len)
    base = 6.0 * params
    if shape is None or convention == "6n":
        return base
    attention = 12.0 * shape.num_layers * shape.q_width * seq_len
    return base + (attention / 2 if convention == "causal" else attention)


@dataclass(frozen=True)
class ScalingFit:
    """L(N, D) = E + A/N^α + B/D^β and its compute-optimal split under C = 6·N·D.

    ``path`` is set for a law fitted to the team's own runs (``tokenmill scaling fit``, loaded by
    ``load_fit``); such a law drives the plan's optimum and verdicts. ``compute_range`` is the span of
    C = 6ND over the runs it was fitted on (outside it the law extrapolates).
    """

    name: str
    E: float
    A: float
    B: float
    alpha: float
    beta: float
    source: str
    path: str | None = None
    compute_range: tuple[float, float] | None = None
    n_points: int | None = None
    rmse_log: float | None = None  # scatter of the fitted runs around the law (log loss), for own fits

    @property
    def loss_resolution(self) -> float:
        """Relative loss difference below which two predictions are not told apart: the RMSE of log loss of the
        runs an own law was fitted on, else PUBLISHED_LOSS_RESOLUTION."""
        return self.rmse_log if self.rmse_log else PUBLISHED_LOSS_RESOLUTION

    @overload
    def loss(self, params: float, tokens: float) -> float: ...
    @overload
    def loss(self, params: np.ndarray, tokens: np.ndarray | float) -> np.ndarray: ...  # a grid (the figures)

    def loss(self, params: float | np.ndarray, tokens: float | np.ndarray) -> float | np.ndarray:
        # N^-α rather than 1/N^α: a poorly determined fit (α ≈ 50 on a few tiny runs) underflows to 0 instead of
        # raising OverflowError in the power
        return self.E + self.A * params**-self.alpha + self.B * tokens**-self.beta

    def _g(self) -> float:
        return (self.alpha * self.A / (self.beta * self.B)) ** (1 / (self.alpha + self.beta))

    def optimal(self, flops: float) -> tuple[float, float]:
        """N*, D* minimising the loss at C = 6·N·D (Hoffmann et al. 2022, eq. 4)."""
        require_positive("flops", flops)
        n = self._g() * (flops / 6) ** (self.beta / (self.alpha + self.beta))
        return n, flops / 6 / n

    def tokens_for(self, params: float) -> float:
        """D such that (params, D) lies on this law's compute-optimal frontier."""
        require_positive("params", params)
        half_c = (params / self._g()) ** ((self.alpha + self.beta) / self.beta)  # C/6 = N·D on the frontier
        return half_c / params

    def params_for(self, tokens: float) -> float:
        """N such that (N, tokens) lies on this law's compute-optimal frontier: N = (G·D^p)^(1/(1−p))."""
        require_positive("tokens", tokens)
        p = self.beta / (self.alpha + self.beta)
        return (self._g() * tokens**p) ** (1 / (1 - p))

    @property
    def fitted(self) -> bool:
        return self.path is not None

    def constants(self) -> dict[str, float]:
        return {"E": self.E, "A": self.A, "B": self.B, "alpha": self.alpha, "beta": self.beta}


# a convention, not a measurement: published fits ship no residuals for the plan's point, and predicted losses
# 0.5 % apart (0.01 at a loss of 2) are not told apart; GPT-3 (1.7 tokens/param) is 0.85 % above its optimum
PUBLISHED_LOSS_RESOLUTION = 0.005

FITS = {
    "epoch": ScalingFit("epoch", 1.8172, 482.01, 2085.43, 0.3478, 0.3658, "Besiroglu et al. 2024 (Epoch AI refit)"),
    "hoffmann": ScalingFit("hoffmann", 1.69, 406.4, 410.7, 0.34, 0.28, "Hoffmann et al. 2022, Approach 3"),
}
FIT_FILE = "fit.json"
OWN_FIT = "own"  # the name a law fitted to the team's runs goes by in plans ("own fit")


def load_fit(path: str | Path) -> ScalingFit:
    """A law from a ``fit.json`` written by ``tokenmill scaling fit`` (or a folder holding one).

    Needs ``E``, ``A``, ``B``, ``alpha``, ``beta`` (positive numbers); ``n_points`` and ``compute_range`` are
    used when present. Raises PlanError naming the file and the field.
    """
    path = Path(path)
    if path.is_dir():
        path = path / FIT_FILE
    where = f"fit: {path}"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PlanError(
            f"{where}: not found (tokenmill scaling fit RUNS.csv --output DIR writes DIR/{FIT_FILE})"
        ) from None
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise PlanError(f"{where}: not readable JSON: {error}") from None
    if not isinstance(data, dict):
        raise PlanError(f"{where}: expected a JSON object with E, A, B, alpha, beta")
    constants: dict[str, float] = {}
    for key in ("E", "A", "B", "alpha", "beta"):
        if key not in data:
            raise PlanError(f"{where}: missing field {key!r} (a fit needs E, A, B, alpha, beta)")
        value = data[key]
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
            raise PlanError(f"{where}: field {key!r} must be a positive number, got {value!r}")
        constants[key] = float(value)
    span = data.get("compute_range")
    compute_range = None
    if span is not None:
        if (
            not isinstance(span, list)
            or len(span) != 2
            or not all(isinstance(v, int | float) and not isinstance(v, bool) and v > 0 for v in span)
        ):
            raise PlanError(f"{where}: field 'compute_range' must be [low, high] FLOPs, got {span!r}")
        compute_range = (float(min(span)), float(max(span)))
    n_points = data.get("n_points")
    if n_points is not None and (isinstance(n_points, bool) or not isinstance(n_points, int) or n_points < 1):
        raise PlanError(f"{where}: field 'n_points' must be a positive integer, got {n_points!r}")
    runs = f" of {n_points} runs" if n_points else ""
    rmse = data.get("rmse_log")
    rmse_log = float(rmse) if isinstance(rmse, int | float) and not isinstance(rmse, bool) and rmse > 0 else None
    return ScalingFit(
        OWN_FIT,
        **constants,
        source=f"tokenmill scaling fit{runs}, {path}",
        path=str(path),
        compute_range=compute_range,
        n_points=n_points,
        rmse_log=rmse_log,
    )


def get_fit(name: str | ScalingFit) -> ScalingFit:
    """A published fit by name (``epoch``, ``hoffmann``), or a fitted law from a ``fit.json`` path."""
    if isinstance(name, ScalingFit):
        return name
    if name in FITS:
        return FITS[name]
    if not looks_like_fit_path(name):
        raise PlanError(f"fit: {name!r} is not one of {', '.join(FITS)}, nor a {FIT_FILE} path (tokenmill scaling fit)")
    return load_fit(name)


def looks_like_fit_path(value: str) -> bool:
    """A ``fit`` value that is meant as a file: ends in .json, or names an existing file or folder."""
    return str(value).endswith(".json") or Path(value).exists()


def optimal_by_rule(flops: float, tokens_per_param: float = TOKENS_PER_PARAM) -> tuple[float, float]:
    """N*, D* with D = r·N and C = 6·N·D, i.e. N* = sqrt(C / 6r)."""
    require_positive("flops", flops)
    require_positive("tokens_per_param", tokens_per_param)
    n = math.sqrt(flops / (6 * tokens_per_param))
    return n, tokens_per_param * n


def compute_optimal(flops: float, method: str = "rule", tokens_per_param: float = TOKENS_PER_PARAM):
    """N*, D* for a compute budget: ``rule`` (20 tokens/param), ``epoch`` or ``hoffmann`` (parametric fits)."""
    if method == "rule":
        return optimal_by_rule(flops, tokens_per_param)
    return get_fit(method).optimal(flops)
