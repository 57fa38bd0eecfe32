"""``tokenmill classifier eval``: a saved model's metrics on other documents, labelled ``eval`` (the card's
``heldout`` metrics are the training split's; these are whatever documents the user brings)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipeline.classifier.metrics import metrics
from pipeline.classify.scoring import Classifier, ClassifierError


def evaluate(
    model_path: str | Path, positives: list[str], negatives: list[str], label: str | None = None, threshold: float = 0.5
) -> dict[str, Any]:
    """``{"model", "label", "calibrated", "eval": metrics}`` of a saved model, scored as the stages score it
    (calibrated when its ``MODEL.json`` has a calibration)."""
    classifier = Classifier(model_path, label)
    if not positives and not negatives:
        raise ClassifierError("no documents to evaluate on")
    return {
        "model": str(model_path),
        "label": classifier.positive,
        "calibrated": classifier.calibration is not None,
        "eval": metrics(classifier.scores(positives), classifier.scores(negatives), threshold),
    }
