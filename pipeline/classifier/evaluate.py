"""``tokenmill classifier eval``: a saved model's metrics on other documents, labelled ``eval`` (the card's
``heldout`` metrics are the training split's; these are whatever documents the user brings)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pipeline.classifier.metrics import metrics
from pipeline.classify.scoring import Classifier, ClassifierError


@dataclass(frozen=True)
class Evaluation:
    """What ``evaluate`` returns; ``to_dict`` is what ``tokenmill classifier eval --json`` prints."""

    model: str  # the model's path
    label: str  # the positive class's fastText label
    calibrated: bool  # scored through the card's calibration
    eval: dict[str, Any]  # the metrics (``pipeline.classifier.metrics``)
    inputs: dict[str, Any] | None = None  # what the documents were read from, when the caller said

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if self.inputs is None:
            del data["inputs"]
        return data


def evaluate(
    model_path: str | Path, positives: list[str], negatives: list[str], label: str | None = None, threshold: float = 0.5
) -> Evaluation:
    """The metrics of a saved model, scored as the stages score it (calibrated when its ``MODEL.json`` has a
    calibration)."""
    classifier = Classifier(model_path, label)
    if not positives and not negatives:
        raise ClassifierError("no documents to evaluate on")
    return Evaluation(
        model=str(model_path),
        label=classifier.positive,
        calibrated=classifier.calibration is not None,
        eval=metrics(classifier.scores(positives), classifier.scores(negatives), threshold),
    )
