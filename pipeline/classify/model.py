"""DCLM's fastText quality-classifier recipe, for any two sets of documents (``tokenmill classifier``).

DCLM (Li et al. 2024, section 4.4 and appendix) trains fastText's supervised mode on one document per line
(newlines flattened), word bigrams, dimension 100, learning rate 0.1, 5 epochs, ``minCount`` 1, on balanced
positive / negative classes, and keeps the documents with the highest P(positive). Those are the defaults
of ``Hyperparameters``; every one can be overridden. 10 % of each class is held out (seeded, stratified) and
the model is measured on it: precision, recall and F1 of the positive class at P >= 0.5, ROC-AUC, and the
percentiles of P(positive) on the held-out negatives, so a user can pick the threshold that keeps the top
k % of a crawl.

``MODEL.bin`` is fastText's own file; ``MODEL.json`` beside it records labels, counts, hyper-parameters and
the held-out metrics (``model_card``).

ROC-AUC is computed here (Mann-Whitney U with mid-ranks for ties) because scikit-learn is not a dependency.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import Field

from pipeline.atomic import partial_path, write_json_atomic
from pipeline.config_base import StrictModel
from pipeline.read.common import InputError

PERCENTILES = (50, 75, 90, 95, 99)


class ClassifierError(InputError):
    """A classifier that cannot be trained or used as asked (no documents in a class, a missing model); an
    ``InputError``, so the CLI reports it as one ``error:`` line."""


class Hyperparameters(StrictModel):
    """fastText supervised settings; defaults are DCLM's recipe (see module docstring)."""

    word_ngrams: int = Field(default=2, ge=1, description="word n-grams (DCLM: bigrams)")
    dim: int = Field(default=100, gt=0)
    lr: float = Field(default=0.1, gt=0)
    epoch: int = Field(default=5, gt=0)
    min_count: int = Field(default=1, ge=1)
    bucket: int = Field(
        default=2_000_000,
        ge=0,
        description="hash buckets of the word n-grams (fastText's and DCLM's default); the model holds "
        "bucket x dim floats (2M x 100: ~800 MB), so small training sets and tests use ~100k (~40 MB)",
    )
    heldout: float = Field(default=0.1, ge=0, lt=1, description="share of each class held out for the metrics")
    balance: bool = Field(default=True, description="down-sample the larger class to the smaller's size (DCLM)")
    threads: int = Field(default=1, gt=0, description="fastText threads; 1 makes training reproducible per seed")
    seed: int = 0


def labels_for(label: str) -> tuple[str, str]:
    """fastText label names of the positive and the negative class."""
    return f"__label__{label}", f"__label__not_{label}"


def positive_scores(model: Any, texts: Sequence[str], positive_label: str) -> list[float]:
    """P(positive) for each flat text (no newlines), in one batched fastText call."""
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


def roc_auc(positives: Sequence[float], negatives: Sequence[float]) -> float | None:
    """Area under the ROC curve: P(score of a random positive > that of a random negative), ties counting half."""
    if not positives or not negatives:
        return None
    scored = sorted([(s, 1) for s in positives] + [(s, 0) for s in negatives])
    rank_sum, i = 0.0, 0
    while i < len(scored):
        j = i
        while j < len(scored) and scored[j][0] == scored[i][0]:
            j += 1
        mid_rank = (i + j + 1) / 2  # ranks are 1-based: the tie block holds ranks i+1 .. j
        rank_sum += mid_rank * sum(label for _, label in scored[i:j])
        i = j
    n_pos, n_neg = len(positives), len(negatives)
    return (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolated percentile (numpy's default method)."""
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def metrics(positives: Sequence[float], negatives: Sequence[float], threshold: float = 0.5) -> dict[str, Any]:
    """Precision, recall, F1 of the positive class at ``score >= threshold``, ROC-AUC, negative-score percentiles."""
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
        "negative_score_percentiles": {f"p{q}": _round(percentile(negatives, q)) for q in PERCENTILES},
        "positive_score_percentiles": {f"p{q}": _round(percentile(positives, q)) for q in PERCENTILES},
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(float(value), 6)


def split(texts: list[str], share: float, rng: random.Random) -> tuple[list[str], list[str]]:
    """``(train, held out)``: a seeded shuffle, ``round(len * share)`` held out (at least one when there are
    two or more texts and ``share > 0``, so that every class is measured)."""
    order = list(texts)
    rng.shuffle(order)
    n_held = round(len(order) * share)
    if share > 0 and n_held == 0 and len(order) >= 2:
        n_held = 1
    return order[n_held:], order[:n_held]


def load_model(path: str | Path):
    """A fastText model file, with a ``ClassifierError`` naming it when it cannot be read."""
    import fasttext

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
    return json.loads(path.read_text(encoding="utf-8"))


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


def train_classifier(
    positives: list[str],
    negatives: list[str],
    output: str | Path,
    label: str = "positive",
    params: Hyperparameters | None = None,
    inputs: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Train on flat texts, write ``output`` (fastText ``.bin``) and its ``MODEL.json``; return the card.

    Classes are balanced by a seeded down-sample of the larger one (``params.balance``), each class is split
    into train and held out, the training file is shuffled, and the held-out metrics go into the card.
    """
    import fasttext

    params = params or Hyperparameters()
    if not positives:
        raise ClassifierError("no positive documents to train on")
    if not negatives:
        raise ClassifierError("no negative documents to train on")
    rng = random.Random(params.seed)
    pos, neg = list(positives), list(negatives)
    if params.balance:
        n = min(len(pos), len(neg))
        pos = rng.sample(pos, n) if len(pos) > n else pos
        neg = rng.sample(neg, n) if len(neg) > n else neg
    pos_train, pos_held = split(pos, params.heldout, rng)
    neg_train, neg_held = split(neg, params.heldout, rng)
    if not pos_train or not neg_train:
        raise ClassifierError("too few documents: a class has nothing left to train on after the held-out split")
    pos_label, neg_label = labels_for(label)
    lines = [f"{pos_label} {t}" for t in pos_train] + [f"{neg_label} {t}" for t in neg_train]
    rng.shuffle(lines)
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    handle, train_file = tempfile.mkstemp(prefix="fasttext-", suffix=".txt", dir=output.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.writelines(line + "\n" for line in lines)
        model = fasttext.train_supervised(
            input=train_file,
            wordNgrams=params.word_ngrams,
            dim=params.dim,
            lr=params.lr,
            epoch=params.epoch,
            minCount=params.min_count,
            bucket=params.bucket,
            thread=params.threads,
            seed=params.seed,
            verbose=0,
        )
    finally:
        os.unlink(train_file)
    tmp_bin = partial_path(output)  # fastText writes to a path, not a handle: atomic_open's naming by hand
    model.save_model(tmp_bin)
    os.replace(tmp_bin, output)
    card: dict[str, Any] = {
        "format": "fasttext",
        "recipe": "DCLM (fastText supervised, flattened documents, balanced classes)",
        "labels": {"positive": pos_label, "negative": neg_label},
        "label": label,
        "counts": {
            "positive": {"given": len(positives), "used": len(pos), "train": len(pos_train), "heldout": len(pos_held)},
            "negative": {"given": len(negatives), "used": len(neg), "train": len(neg_train), "heldout": len(neg_held)},
        },
        "hyperparameters": params.model_dump(),
        "heldout": metrics(positive_scores(model, pos_held, pos_label), positive_scores(model, neg_held, pos_label)),
    }
    if inputs:
        card["inputs"] = inputs
    write_json_atomic(card_path(output), card, end="\n", indent=2)
    return card


def evaluate(
    model_path: str | Path, positives: list[str], negatives: list[str], label: str | None = None, threshold: float = 0.5
) -> dict[str, Any]:
    """The held-out metrics of ``train_classifier`` for a saved model on other documents."""
    model = load_model(model_path)
    pos_label, _ = model_labels(model, model_path, label)
    if not positives and not negatives:
        raise ClassifierError("no documents to evaluate on")
    return {
        "model": str(model_path),
        "label": pos_label,
        **metrics(
            positive_scores(model, positives, pos_label), positive_scores(model, negatives, pos_label), threshold
        ),
    }
