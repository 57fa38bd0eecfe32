"""Fitting the calibration that ``pipeline.classify.scoring.Calibration`` applies, on the validation split's
scores (the model never trained on them; the held-out split stays untouched, to measure the result).

* ``platt`` (default): logistic regression of the class on ``logit(raw score)``, with Platt's (1999) smoothed
  targets ``(N+ + 1) / (N+ + 2)`` and ``1 / (N- + 2)``, so perfectly separated validation scores still give a
  finite slope; the slope is bounded at >= 0 so the map is monotone. Two parameters: right for the few hundred
  validation documents a team's own classifier has.
* ``isotonic``: scipy's pool-adjacent-violators fit (``scipy.optimize.isotonic_regression``), stored as knots and
  interpolated linearly; it needs more validation documents than Platt to be smooth.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.optimize import isotonic_regression, minimize

from pipeline.classify.scoring import Calibration, logit

__all__ = ["fit_calibration", "fit_isotonic", "fit_platt"]


def fit_platt(positives: Sequence[float], negatives: Sequence[float], fit_on: str = "validation") -> Calibration:
    z = logit(np.asarray(list(positives) + list(negatives), dtype=np.float64))
    n_pos, n_neg = len(positives), len(negatives)
    target = np.concatenate([np.full(n_pos, (n_pos + 1) / (n_pos + 2)), np.full(n_neg, 1 / (n_neg + 2))])

    def loss(params: np.ndarray) -> tuple[float, np.ndarray]:
        a, b = params
        margin = a * z + b
        # log(1 + e^m) - t * m, its gradient (sigmoid(m) - t) * (z, 1): the cross-entropy, written stably
        value = np.logaddexp(0.0, margin) - target * margin
        residual = 1.0 / (1.0 + np.exp(-margin)) - target
        return float(value.mean()), np.array([(residual * z).mean(), residual.mean()])

    prior = np.log((n_pos + 1) / (n_neg + 1))
    result = minimize(loss, np.array([1.0, prior]), jac=True, method="L-BFGS-B", bounds=[(0.0, None), (None, None)])
    a, b = (float(v) for v in result.x)
    return Calibration(method="platt", a=round(a, 8), b=round(b, 8), fit_on=fit_on, documents=n_pos + n_neg)


def fit_isotonic(positives: Sequence[float], negatives: Sequence[float], fit_on: str = "validation") -> Calibration:
    raw = np.asarray(list(positives) + list(negatives), dtype=np.float64)
    label = np.concatenate([np.ones(len(positives)), np.zeros(len(negatives))])
    knots, inverse = np.unique(raw, return_inverse=True)  # ties pooled first: one point per distinct score
    weight = np.bincount(inverse).astype(np.float64)
    mean = np.bincount(inverse, weights=label) / weight
    fitted = isotonic_regression(mean, weights=weight, increasing=True).x
    keep = np.ones(len(knots), dtype=bool)  # drop knots inside a flat run (the interpolation is the same)
    keep[1:-1] = ~((fitted[1:-1] == fitted[:-2]) & (fitted[1:-1] == fitted[2:]))
    return Calibration(
        method="isotonic",
        x=[round(float(v), 8) for v in knots[keep]],
        y=[round(float(v), 8) for v in fitted[keep]],
        fit_on=fit_on,
        documents=len(raw),
    )


def fit_calibration(
    method: str, positives: Sequence[float], negatives: Sequence[float], fit_on: str = "validation"
) -> Calibration | None:
    """``None`` for ``method="none"`` (scores stay fastText's own)."""
    if method == "none":
        return None
    if method == "isotonic":
        return fit_isotonic(positives, negatives, fit_on)
    return fit_platt(positives, negatives, fit_on)
