"""Scoring with a trained classifier: what the curate stages (``classify``, ``toxicity``) need, and nothing of
training (that is ``pipeline.classifier``, which sits above curation because it reads documents through the
extract stage).

A model is fastText's ``MODEL.bin``; ``MODEL.json`` beside it (written by ``tokenmill classifier train``) names
the labels and holds the calibration fitted on the validation split: ``Classifier.scores`` returns the calibrated
P(positive), so a threshold means what the card's held-out table says it means. A model trained elsewhere (no
card, or a card without ``calibration``) scores with fastText's own probabilities.

Calibration is applied here with numpy only (a sigmoid, or a piecewise-linear interpolation); it is fitted in
``pipeline.classifier.calibrate``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import fasttext
import numpy as np
from pydantic import Field, model_validator

from pipeline.config_base import StrictModel
from pipeline.read.common import InputError

_SPACES = re.compile(r"\s+")
#: raw scores are clipped into [EPS, 1 - EPS] before the logit, so a saturated fastText score stays finite
EPS = 1e-6


class ClassifierError(InputError):
    """A classifier that cannot be trained or used as asked (no documents in a class, a missing model); an
    ``InputError``, so the CLI reports it as one ``error:`` line."""


def flatten(text: str) -> str:
    """One document as one fastText line: newlines and runs of whitespace become one space (DCLM's
    preprocessing; fastText reads one example per line and splits words on whitespace)."""
    return _SPACES.sub(" ", text).strip()


def labels_for(label: str) -> tuple[str, str]:
    """fastText label names of the positive and the negative class."""
    return f"__label__{label}", f"__label__not_{label}"


def logit(raw: np.ndarray) -> np.ndarray:
    clipped = np.clip(raw, EPS, 1 - EPS)
    return np.log(clipped / (1 - clipped))


class Calibration(StrictModel):
    """A monotone map from fastText's P(positive) to a calibrated probability, as stored in ``MODEL.json``.

    ``platt``: ``sigmoid(a * logit(p) + b)`` with ``a >= 0`` (Platt 1999); ``isotonic``: the piecewise-linear
    interpolation through the knots ``(x[i], y[i])`` of an isotonic fit, flat beyond the end knots."""

    method: Literal["platt", "isotonic"]
    a: float | None = Field(default=None, ge=0, description="platt: slope on the logit of the raw score")
    b: float | None = Field(default=None, description="platt: intercept")
    x: list[float] | None = Field(default=None, description="isotonic: raw-score knots, increasing")
    y: list[float] | None = Field(default=None, description="isotonic: calibrated value at each knot, non-decreasing")
    fit_on: str = Field(default="validation", description="the split the map was fitted on")
    documents: int = Field(default=0, ge=0, description="documents of that split")

    @model_validator(mode="after")
    def _parameters_present(self) -> Calibration:
        if self.method == "platt" and (self.a is None or self.b is None):
            raise ValueError("platt calibration needs a and b")
        if self.method == "isotonic" and (not self.x or not self.y or len(self.x) != len(self.y)):
            raise ValueError("isotonic calibration needs knots x and y of the same length")
        return self

    def apply(self, raw: Sequence[float] | np.ndarray) -> np.ndarray:
        """Calibrated scores in [0, 1], non-decreasing in ``raw``."""
        values = np.asarray(raw, dtype=np.float64)
        if self.method == "platt":
            assert self.a is not None and self.b is not None
            out = 1.0 / (1.0 + np.exp(-(self.a * logit(values) + self.b)))
        else:
            assert self.x is not None and self.y is not None
            out = np.interp(values, self.x, self.y)
        return np.clip(out, 0.0, 1.0)


def positive_scores(model: Any, texts: Sequence[str], positive_label: str) -> list[float]:
    """fastText's own P(positive) for each flat text (no newlines), in one batched call."""
    if not texts:
        return []
    labels, probs = model.predict(list(texts), k=-1)
    out = []
    for names, values in zip(labels, probs, strict=True):
        score = 0.0
        for name, value in zip(names, values, strict=True):
            if name == positive_label:
                score = float(value)
                break
        # fastText's softmax output can exceed 1 by rounding; keep scores in [0, 1]
        out.append(min(1.0, max(0.0, score)))
    return out


def load_model(path: str | Path) -> Any:
    """A fastText model file, with a ``ClassifierError`` naming it when it cannot be read."""
    path = Path(path)
    if not path.is_file():
        raise ClassifierError(f"{path}: no such model file")
    try:
        return fasttext.load_model(str(path))
    except ValueError as error:
        raise ClassifierError(f"{path}: not a fastText model ({error})") from None


def card_path(model_path: str | Path) -> Path:
    """``MODEL.json`` beside ``MODEL.bin``."""
    return Path(model_path).with_suffix(".json")


def read_card(model_path: str | Path) -> dict[str, Any] | None:
    path = card_path(model_path)
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ClassifierError(f"{path}: not a model card ({error})") from None


def model_labels(model: Any, model_path: str | Path, label: str | None = None) -> tuple[str, str]:
    """``(positive label, negative label)`` of a model: from ``MODEL.json``, from ``label``, or -- for a model
    trained elsewhere -- its two labels, the first not starting with ``not_`` taken as positive."""
    card = read_card(model_path)
    if label is None and card is not None:
        return card["labels"]["positive"], card["labels"]["negative"]
    names = list(model.get_labels())
    if label is not None:
        positive = label if label.startswith("__label__") else f"__label__{label}"
        if positive not in names:
            raise ClassifierError(f"{model_path}: no label {positive!r}; the model has {', '.join(names)}")
        others = [n for n in names if n != positive]
        return positive, others[0] if others else ""
    if len(names) != 2:
        raise ClassifierError(f"{model_path}: {len(names)} labels ({', '.join(names)}); name the positive one")
    first, second = names
    return (second, first) if first.removeprefix("__label__").startswith("not_") else (first, second)


def card_calibration(card: dict[str, Any] | None, positive: str) -> Calibration | None:
    """The card's calibration, when it was fitted for ``positive`` (a ``--label`` naming the other class of the
    model scores uncalibrated)."""
    if not card or not card.get("calibration") or card["labels"]["positive"] != positive:
        return None
    return Calibration.model_validate(card["calibration"])


class Classifier:
    """A loaded model, its positive label and its calibration: ``scores`` is what the stages threshold on."""

    def __init__(self, path: str | Path, label: str | None = None) -> None:
        self.path = Path(path)
        self.model = load_model(self.path)
        self.positive, self.negative = model_labels(self.model, self.path, label)
        self.calibration = card_calibration(read_card(self.path), self.positive)

    def raw_scores(self, texts: Sequence[str]) -> list[float]:
        """fastText's P(positive) of each flat text."""
        return positive_scores(self.model, texts, self.positive)

    def scores(self, texts: Sequence[str]) -> list[float]:
        """Calibrated P(positive) of each flat text (fastText's own where the model has no calibration)."""
        raw = self.raw_scores(texts)
        if self.calibration is None or not raw:
            return raw
        return [float(v) for v in self.calibration.apply(raw)]
