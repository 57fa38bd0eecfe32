"""Metrics of a binary classifier from its scores: precision / recall / F1 at a threshold, ROC-AUC, log loss,
score percentiles, and the table of thresholds that reach given precisions (``precision_thresholds``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.stats import mannwhitneyu

from pipeline.classify.scoring import EPS

PERCENTILES = (50, 75, 90, 95, 99)
#: precisions the card's threshold table is computed for
PRECISION_TARGETS = (0.8, 0.9, 0.95, 0.99)


def roc_auc(positives: Sequence[float], negatives: Sequence[float]) -> float | None:
    """Area under the ROC curve: P(score of a random positive > that of a random negative), ties counting half
    (the Mann-Whitney U statistic over ``n_pos * n_neg``)."""
    if not len(positives) or not len(negatives):
        return None
    return float(mannwhitneyu(positives, negatives).statistic) / (len(positives) * len(negatives))


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolated percentile (numpy's default method)."""
    if not len(values):
        return None
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


def log_loss(positives: Sequence[float], negatives: Sequence[float]) -> float | None:
    """Mean cross-entropy of P(positive) against the true class (scores clipped to [EPS, 1 - EPS])."""
    if not len(positives) and not len(negatives):
        return None
    pos = np.clip(np.asarray(positives, dtype=np.float64), EPS, 1 - EPS)
    neg = np.clip(np.asarray(negatives, dtype=np.float64), EPS, 1 - EPS)
    total = -np.log(pos).sum() - np.log(1 - neg).sum()
    return float(total / (len(pos) + len(neg)))


def metrics(positives: Sequence[float], negatives: Sequence[float], threshold: float = 0.5) -> dict[str, Any]:
    """Precision, recall, F1 of the positive class at ``score >= threshold``, ROC-AUC, log loss, score percentiles."""
    tp = sum(1 for s in positives if s >= threshold)
    fp = sum(1 for s in negatives if s >= threshold)
    fn = len(positives) - tp
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    if precision is None or recall is None:
        f1 = None
    else:
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    accuracy = (tp + len(negatives) - fp) / (len(positives) + len(negatives)) if positives or negatives else None
    return {
        "threshold": threshold,
        "positives": len(positives),
        "negatives": len(negatives),
        "true_positives": tp,
        "false_positives": fp,
        "false_negatives": fn,
        "precision": _round(precision),
        "recall": _round(recall),
        "f1": _round(f1),
        "accuracy": _round(accuracy),
        "roc_auc": _round(roc_auc(positives, negatives)),
        "log_loss": _round(log_loss(positives, negatives)),
        "negative_score_percentiles": {f"p{q}": _round(percentile(negatives, q)) for q in PERCENTILES},
        "positive_score_percentiles": {f"p{q}": _round(percentile(positives, q)) for q in PERCENTILES},
    }


def precision_thresholds(
    positives: Sequence[float], negatives: Sequence[float], targets: Sequence[float] = PRECISION_TARGETS
) -> list[dict[str, Any]]:
    """For each target precision, the lowest threshold (one of the scores) at which ``score >= threshold`` has at
    least that precision on these scores -- the most recall that precision allows -- with the precision and
    recall measured there; ``threshold`` is ``None`` where no threshold reaches the target."""
    scored = sorted([(s, 1) for s in positives] + [(s, 0) for s in negatives], reverse=True)
    cuts = []  # (threshold, precision, recall) at each distinct score, from the highest down
    tp = fp = 0
    for i, (score, label) in enumerate(scored):
        tp += label
        fp += 1 - label
        if i + 1 == len(scored) or scored[i + 1][0] != score:
            cuts.append((score, tp / (tp + fp), tp / len(positives) if positives else 0.0))
    table = []
    for target in targets:
        reached = [c for c in cuts if c[1] >= target and c[2] > 0]
        if not reached:
            table.append({"target_precision": target, "threshold": None, "precision": None, "recall": None})
            continue
        threshold, precision, recall = reached[-1]  # the lowest threshold that still reaches the target
        table.append(
            {
                "target_precision": target,
                "threshold": threshold,
                "precision": _round(precision),
                "recall": _round(recall),
            }
        )
    return table


def _round(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else round(float(value), 6)
