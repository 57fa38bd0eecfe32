"""``tokenmill classifier train``: a fastText classifier from two sets of documents, tuned, calibrated and
measured without the user choosing anything.

Each class is balanced (a seeded down-sample of the larger, as DCLM trains) and split three ways, seeded and
per class: **train** (80 %), **validation** (10 %) and **held out** (10 %). With ``recipe="tuned"`` (the
default) the candidates of ``pipeline.classifier.grid`` that fit ``budget_s`` are trained on the train split
and scored on the validation split; the one with the lowest validation log loss is kept (a proper scoring
rule: it punishes the underfit model whose scores crowd at 0.5 and the overconfident one alike). Its scores are
then calibrated on the validation split (``pipeline.classifier.calibrate``) and everything reported is measured
on the held-out split, which neither the choice nor the calibration saw: precision, recall and F1 at 0.5,
ROC-AUC, score percentiles, and the thresholds that reach 80/90/95/99 % precision.

``recipe="dclm"`` is the paper's fixed recipe (Li et al. 2024: word bigrams, dim 100, lr 0.1, 5 epochs,
``minCount`` 1), calibrated the same way unless ``calibration="none"``. With a single candidate and no
calibration no validation split is taken (train 90 % / held out 10 %, as before the search existed).

``MODEL.bin`` is fastText's own file; ``MODEL.json`` beside it records labels, counts, the chosen
hyper-parameters, the search (every candidate's estimate, time and validation metrics), the calibration and
the held-out metrics.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

import fasttext
from pydantic import Field

from pipeline.atomic import partial_path, write_json_atomic
from pipeline.classifier.calibrate import fit_calibration
from pipeline.classifier.grid import Candidate, candidates, plan
from pipeline.classifier.metrics import log_loss, metrics, precision_thresholds
from pipeline.classify.scoring import Calibration, ClassifierError, card_path, labels_for, positive_scores
from pipeline.config_base import StrictModel

#: fastText's and DCLM's n-gram hash buckets; small training sets get fewer (``auto_bucket``)
MAX_BUCKET = 2_000_000
MIN_BUCKET = 100_000


class Hyperparameters(StrictModel):
    """How ``train_classifier`` trains: the recipe, the search budget, the splits; ``epoch``, ``lr`` and
    ``word_ngrams`` left ``None`` are chosen by the search (module docstring)."""

    recipe: Literal["tuned", "dclm"] = Field(
        default="tuned", description="tuned: search the grid on a validation split; dclm: the paper's fixed recipe"
    )
    budget_s: float = Field(default=60.0, gt=0, description="seconds the search may spend (estimated, not timed)")
    epoch: int | None = Field(default=None, gt=0, description="fix the epochs (default: chosen)")
    lr: float | None = Field(default=None, gt=0, description="fix the learning rate (default: chosen)")
    word_ngrams: int | None = Field(default=None, ge=1, description="fix the word n-grams (default: chosen)")
    dim: int = Field(default=100, gt=0, description="vector dimension (DCLM: 100)")
    min_count: int = Field(default=1, ge=1)
    bucket: int | None = Field(
        default=None,
        ge=0,
        description="hash buckets of the word n-grams; the model holds bucket x dim floats (2M x 100: ~800 MB). "
        "Default: the training token count, between 100k and fastText's 2M",
    )
    heldout: float = Field(default=0.1, gt=0, lt=1, description="share of each class held out for the metrics")
    validation: float = Field(default=0.1, gt=0, lt=1, description="share of each class for the choice and calibration")
    calibration: Literal["platt", "isotonic", "none"] = Field(default="platt", description="fitted on validation")
    balance: bool = Field(default=True, description="down-sample the larger class to the smaller's size (DCLM)")
    threads: int = Field(default=1, gt=0, description="fastText threads; 1 makes training reproducible per seed")
    seed: int = 0


@dataclass
class Splits:
    """Each class's documents after balancing, split three ways (``validation`` empty when not needed)."""

    used: tuple[int, int]
    train: tuple[list[str], list[str]]
    validation: tuple[list[str], list[str]]
    heldout: tuple[list[str], list[str]]
    #: the generator after the splits; it shuffles the training lines (so a run without a validation split
    #: draws exactly what the trainer drew before the search existed)
    rng: random.Random


def split(texts: list[str], share: float, rng: random.Random) -> tuple[list[str], list[str]]:
    """``(rest, taken)``: a seeded shuffle, ``round(len * share)`` taken (at least one when there are two or more
    texts, so that every class is measured)."""
    order = list(texts)
    rng.shuffle(order)
    n_taken = round(len(order) * share)
    if n_taken == 0 and len(order) >= 2:
        n_taken = 1
    return order[n_taken:], order[:n_taken]


def needs_validation(params: Hyperparameters) -> bool:
    return (
        params.calibration != "none" or len(candidates(params.recipe, params.epoch, params.lr, params.word_ngrams)) > 1
    )


def split_classes(positives: Sequence[str], negatives: Sequence[str], params: Hyperparameters) -> Splits:
    """The balancing and the splits ``train_classifier`` uses (deterministic per ``params.seed``)."""
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
    pos_rest, pos_held = split(pos, params.heldout, rng)
    neg_rest, neg_held = split(neg, params.heldout, rng)
    pos_val: list[str] = []
    neg_val: list[str] = []
    if needs_validation(params):
        share = params.validation / (1 - params.heldout)
        pos_rest, pos_val = split(pos_rest, share, rng)
        neg_rest, neg_val = split(neg_rest, share, rng)
        if not pos_val or not neg_val:
            raise ClassifierError(
                f"too few documents ({len(pos)} positive, {len(neg)} negative after balancing) for train, validation "
                "and held-out splits: give at least 3 of each class, or --recipe dclm --calibration none"
            )
    if not pos_rest or not neg_rest:
        raise ClassifierError("too few documents: a class has nothing left to train on after the held-out split")
    return Splits((len(pos), len(neg)), (pos_rest, neg_rest), (pos_val, neg_val), (pos_held, neg_held), rng)


def auto_bucket(train_tokens: int) -> int:
    """Buckets for a training set of ``train_tokens``: it holds fewer distinct n-grams than tokens, so more buckets
    only make the model file larger (rounded up to 100k, within [100k, 2M])."""
    return min(MAX_BUCKET, max(MIN_BUCKET, -(-train_tokens // 100_000) * 100_000))


def _train(train_file: str, candidate: Candidate, params: Hyperparameters, bucket: int) -> Any:
    return fasttext.train_supervised(
        input=train_file,
        wordNgrams=candidate.word_ngrams,
        dim=params.dim,
        lr=candidate.lr,
        epoch=candidate.epoch,
        minCount=params.min_count,
        bucket=bucket,
        thread=params.threads,
        seed=params.seed,
        verbose=0,
    )


def _train_to_file(train_file: str, candidate: Candidate, params: Hyperparameters, bucket: int, out: str) -> None:
    """``_train`` in a fresh interpreter, the model saved to ``out`` (``.bin`` round-trips losslessly)."""
    _train(train_file, candidate, params, bucket).save_model(out)


def _fit(train_file: str, candidate: Candidate, params: Hyperparameters, bucket: int) -> Any:
    """Train one candidate; a NaN is tried once more in a fresh (spawned) interpreter before it counts.

    Why: after some hundred tests in one pytest process, fastText (0.9.3, fasttext-numpy2) gave "Encountered
    NaN." at lr 0.1 on a 206-line file that trains cleanly, three times in a row, in a fresh process (the
    process's floating-point environment was normal: round to nearest, no flush-to-zero). The cause inside the
    long-lived process was not found; a candidate that really diverges (lr 1.0 now and then) fails in the fresh
    interpreter too and is recorded as before. Settings and seed are the same, so the model is the one a fresh
    process trains."""
    try:
        return _train(train_file, candidate, params, bucket)
    except RuntimeError:
        out = f"{train_file}.retry.bin"
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            pool.submit(_train_to_file, train_file, candidate, params, bucket, out).result()
        try:
            return fasttext.load_model(out)
        finally:
            os.unlink(out)


def _search(
    train_file: str, splits: Splits, params: Hyperparameters, bucket: int, train_tokens: int, positive: str
) -> tuple[Any, Candidate, dict[str, Any]]:
    """Train the planned candidates; keep the one with the lowest validation log loss."""
    options = candidates(params.recipe, params.epoch, params.lr, params.word_ngrams)
    val_pos, val_neg = splits.validation
    val_tokens = sum(len(t.split()) for t in val_pos + val_neg)
    planned, left_out = plan(options, train_tokens, val_tokens, bucket, params.dim, params.threads, params.budget_s)
    started = time.perf_counter()
    tried: list[dict[str, Any]] = []
    best: tuple[float, Any, Candidate] | None = None
    for candidate, estimate in planned:
        begin = time.perf_counter()
        row: dict[str, Any] = {**candidate.as_dict(), "estimated_s": round(estimate, 2)}
        try:
            model = _fit(train_file, candidate, params, bucket)
        except RuntimeError as error:  # fastText diverges now and then at lr 1.0: "Encountered NaN."
            tried.append({**row, "seconds": round(time.perf_counter() - begin, 2), "error": str(error)})
            continue
        if val_pos:
            s_pos, s_neg = positive_scores(model, val_pos, positive), positive_scores(model, val_neg, positive)
            found = metrics(s_pos, s_neg)
            loss = log_loss(s_pos, s_neg)
            row["validation"] = {k: found[k] for k in ("log_loss", "roc_auc", "f1", "precision", "recall")}
        else:
            loss = 0.0
        row["seconds"] = round(time.perf_counter() - begin, 2)
        tried.append(row)
        if best is None or (loss is not None and loss < best[0]):
            best = (loss if loss is not None else 0.0, model, candidate)
    if best is None:
        raise ClassifierError(f"every candidate failed to train: {'; '.join(r.get('error', '') for r in tried)}")
    _, model, chosen = best
    search = {
        "metric": "validation log loss" if val_pos else "none (a single candidate)",
        "budget_s": params.budget_s,
        "train_tokens": train_tokens,
        "candidates": tried,
        "chosen": chosen.as_dict(),
        "left_out": [{**c.as_dict(), "estimated_s": round(s, 2)} for c, s in left_out],
        "seconds": round(time.perf_counter() - started, 2),
    }
    return model, chosen, search


@dataclass(frozen=True)
class ClassifierCard:
    """What ``train_classifier`` returns: the trained model's card. ``to_dict`` is ``MODEL.json`` (and what
    ``tokenmill classifier train --json`` prints), in the key order it always had."""

    format: str  # "fasttext"
    recipe: str  # "tuned" or "dclm"
    labels: dict[str, str]  # "positive" / "negative" -> the fastText label
    label: str  # the positive class's name as given
    counts: dict[str, dict[str, int]]  # class -> given, used, train, validation, heldout
    hyperparameters: dict[str, Any]  # what the model was trained with (the chosen candidate, the bucket)
    search: dict[str, Any]  # every candidate tried: estimate, time, validation metrics; the chosen one
    calibration: dict[str, Any] | None  # the fitted ``Calibration``'s JSON; None when not calibrated
    heldout: dict[str, Any]  # metrics on the held-out split (``pipeline.classifier.metrics``)
    heldout_thresholds: list[dict[str, Any]]  # the thresholds that reach 80/90/95/99 % precision
    inputs: dict[str, Any] | None = None  # what the documents were read from, when the caller said

    def to_dict(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "inputs"}
        if self.inputs:
            data["inputs"] = self.inputs
        return data


def train_classifier(
    positives: list[str],
    negatives: list[str],
    output: str | Path,
    label: str = "positive",
    params: Hyperparameters | None = None,
    inputs: dict[str, Any] | None = None,
) -> ClassifierCard:
    """Train on flat texts, write ``output`` (fastText ``.bin``) and its ``MODEL.json``; return the card."""
    params = params or Hyperparameters()
    splits = split_classes(positives, negatives, params)
    pos_label, neg_label = labels_for(label)
    (pos_train, neg_train), (pos_val, neg_val), (pos_held, neg_held) = splits.train, splits.validation, splits.heldout
    lines = [f"{pos_label} {t}" for t in pos_train] + [f"{neg_label} {t}" for t in neg_train]
    splits.rng.shuffle(lines)
    train_tokens = sum(len(t.split()) for t in pos_train + neg_train)
    bucket = params.bucket if params.bucket is not None else auto_bucket(train_tokens)
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    handle, train_file = tempfile.mkstemp(prefix="fasttext-", suffix=".txt", dir=output.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.writelines(line + "\n" for line in lines)
        model, chosen, search = _search(train_file, splits, params, bucket, train_tokens, pos_label)
    finally:
        os.unlink(train_file)
    tmp_bin = partial_path(output)  # fastText writes to a path, not a handle: atomic_open's naming by hand
    model.save_model(tmp_bin)
    os.replace(tmp_bin, output)
    calibration: Calibration | None = None
    if pos_val and params.calibration != "none":
        calibration = fit_calibration(
            params.calibration, positive_scores(model, pos_val, pos_label), positive_scores(model, neg_val, pos_label)
        )
    held_pos, held_neg = positive_scores(model, pos_held, pos_label), positive_scores(model, neg_held, pos_label)
    if calibration is not None:
        held_pos, held_neg = list(calibration.apply(held_pos)), list(calibration.apply(held_neg))
    chosen_params = {**params.model_dump(), **chosen.as_dict(), "bucket": bucket}
    card = ClassifierCard(
        format="fasttext",
        recipe=params.recipe,
        labels={"positive": pos_label, "negative": neg_label},
        label=label,
        counts={
            name: {"given": len(given), "used": used, "train": len(train), "validation": len(val), "heldout": len(held)}
            for name, given, used, train, val, held in (
                ("positive", positives, splits.used[0], pos_train, pos_val, pos_held),
                ("negative", negatives, splits.used[1], neg_train, neg_val, neg_held),
            )
        },
        hyperparameters=chosen_params,
        search=search,
        calibration=calibration.model_dump(exclude_none=True) if calibration else None,
        heldout={"calibrated": calibration is not None, **metrics(held_pos, held_neg)},
        heldout_thresholds=precision_thresholds(held_pos, held_neg),
        inputs=inputs or None,
    )
    write_json_atomic(card_path(output), card.to_dict(), end="\n", indent=2)
    return card
