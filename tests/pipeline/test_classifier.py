"""``tokenmill classifier train|eval`` (tuned on a validation split, calibrated, measured on a held-out one) on
text no one here wrote, built at run time: the Python Language Reference topics pydoc ships
(``pydoc_data.topics``) as positives, the source code of stdlib modules as negatives, both cut into ~1.5 KB
documents. The search runs under a small ``budget_s`` (a few candidates) to keep the tests fast."""

from __future__ import annotations

import gzip
import inspect
import json
import random
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from flows.cli import app
from pipeline.classifier.calibrate import fit_isotonic, fit_platt
from pipeline.classifier.data import flatten, load_texts
from pipeline.classifier.evaluate import evaluate
from pipeline.classifier.grid import GRID, Candidate, candidates, estimate_seconds, plan
from pipeline.classifier.metrics import metrics, percentile, precision_thresholds, roc_auc
from pipeline.classifier.train import Hyperparameters, split_classes, train_classifier
from pipeline.classify.scoring import Calibration, Classifier, ClassifierError
from pipeline.layout import RUN_HEADER
from tests.helpers.text import chunks

SOURCE_MODULES = ["argparse", "calendar", "csv", "difflib", "enum", "fractions", "gettext", "json.decoder", "shlex"]


def reference_topics() -> list[str]:
    from pydoc_data.topics import topics

    return [piece for name in sorted(topics) for piece in chunks(topics[name], min_tail=200)]


def stdlib_source() -> list[str]:
    import importlib

    return [
        piece
        for name in SOURCE_MODULES
        for piece in chunks(inspect.getsource(importlib.import_module(name)), min_tail=200)
    ]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, Path, list[str], list[str]]:
    """A folder of positive .txt files and a JSONL file of negatives."""
    root = tmp_path_factory.mktemp("classifier")
    positives, negatives = reference_topics(), stdlib_source()
    assert len(positives) > 150 and len(negatives) > 150
    folder = root / "reference"
    folder.mkdir()
    for i, text in enumerate(positives):
        (folder / f"{i:04d}.txt").write_text(text, encoding="utf-8")
    jsonl = root / "source.jsonl"
    with jsonl.open("w", encoding="utf-8") as handle:
        for i, text in enumerate(negatives):
            handle.write(json.dumps({"id": f"src-{i}", "text": text}) + "\n")
        handle.write("{not json\n")  # a broken row: read, counted as skipped, never used
    return folder, jsonl, positives, negatives


def test_roc_auc_and_percentiles_match_hand_computed_values():
    assert roc_auc([0.9, 0.8], [0.1, 0.2]) == 1.0
    assert roc_auc([0.1], [0.9]) == 0.0
    assert roc_auc([0.5, 0.9], [0.5, 0.1]) == pytest.approx((1 + 1 + 0.5 + 1) / 4)  # one tie counts half
    assert roc_auc([], [0.2]) is None
    assert percentile([1, 2, 3, 4, 5], 50) == 3
    assert percentile([0.0, 1.0], 90) == pytest.approx(0.9)
    m = metrics([0.9, 0.6, 0.4], [0.7, 0.1, 0.2, 0.3])
    assert (m["true_positives"], m["false_positives"], m["false_negatives"]) == (2, 1, 1)
    assert m["precision"] == pytest.approx(2 / 3) and m["recall"] == pytest.approx(2 / 3)
    assert m["f1"] == pytest.approx(2 / 3)
    assert m["negative_score_percentiles"]["p50"] == pytest.approx(0.25)


def test_flatten_makes_one_line():
    assert flatten("a\n\nb\tc  \r\n d ") == "a b c d"


def test_load_texts_counts_skips_and_samples(corpus):
    folder, jsonl, positives, negatives = corpus
    loaded = load_texts([jsonl])
    assert loaded.read == len(negatives) + 1
    assert loaded.skipped == {"read/bad_json": 1}
    assert len(loaded.texts) == len(negatives) and "\n" not in loaded.texts[0]
    sample = load_texts([folder], max_docs=20, seed=3)
    assert len(sample.texts) == 20 and sample.read == len(positives)
    assert sample.texts == load_texts([folder], max_docs=20, seed=3).texts  # seeded
    assert sample.texts != load_texts([folder], max_docs=20, seed=4).texts
    assert set(sample.texts) <= {flatten(t) for t in positives}


def test_load_texts_reads_a_run_directory(tmp_path):
    run = tmp_path / "run"
    (run / "curated" / "web").mkdir(parents=True)
    (run / "config.yaml").write_text(RUN_HEADER + "\nname: x\n", encoding="utf-8")
    with gzip.open(run / "curated" / "web" / "00000.jsonl.gz", "wt", encoding="utf-8") as handle:
        for i in range(3):
            handle.write(json.dumps({"id": str(i), "text": f"kept document {i}\nsecond line"}) + "\n")
    loaded = load_texts([run])
    assert sorted(loaded.texts) == [f"kept document {i} second line" for i in range(3)]


#: the tests' search: a budget that plans 3 of the grid's 9 candidates on ~200 + 200 documents of ~250 words, and
#: at least 2 when the corpus comes out larger (stdlib_source reads the modules a full test run has imported)
SMALL = {"budget_s": 8.0, "bucket": 100_000}


@pytest.fixture(scope="module")
def trained(corpus, tmp_path_factory):
    """``(model path, card, params, positives, negatives)`` of one tuned training run with the defaults."""
    _, _, positives, negatives = corpus
    pos, neg = [flatten(t) for t in positives], [flatten(t) for t in negatives]
    params = Hyperparameters(**SMALL)
    path = tmp_path_factory.mktemp("tuned") / "m.bin"
    card = train_classifier(pos, neg, path, label="reference", params=params)
    return path, card, params, pos, neg


def test_train_records_chosen_hyperparameters_and_heldout_metrics(trained, tmp_path):
    path, card, params, pos, neg = trained
    assert path.is_file() and json.loads(path.with_suffix(".json").read_text()) == card.to_dict()
    assert card.recipe == "tuned"
    assert card.labels == {"positive": "__label__reference", "negative": "__label__not_reference"}
    n = min(len(pos), len(neg))  # balanced by down-sampling the larger class, then split 80 / 10 / 10
    counts = card.counts["positive"]
    assert counts["used"] == card.counts["negative"]["used"] == n
    assert counts["heldout"] == round(n * 0.1) and counts["validation"] == round((n - counts["heldout"]) * 0.1 / 0.9)
    search = card.search
    tried = [r for r in search["candidates"] if "validation" in r]
    assert len(tried) >= 2 and search["metric"] == "validation log loss"
    best = min(tried, key=lambda r: r["validation"]["log_loss"])
    chosen = {k: best[k] for k in ("epoch", "lr", "word_ngrams")}
    assert search["chosen"] == chosen
    assert {k: card.hyperparameters[k] for k in chosen} == chosen  # the card says what the model was trained with
    assert card.hyperparameters["bucket"] == 100_000 and card.hyperparameters["dim"] == 100
    held = card.heldout
    assert held["calibrated"] is True and held["positives"] == counts["heldout"]
    assert held["f1"] >= 0.9 and held["roc_auc"] >= 0.95
    assert set(held["negative_score_percentiles"]) == {"p50", "p75", "p90", "p95", "p99"}
    again = train_classifier(pos, neg, tmp_path / "again.bin", label="reference", params=params)
    assert again.heldout == card.heldout and again.calibration == card.calibration  # 1 thread + seed


def test_scores_are_calibrated_and_a_card_threshold_gives_its_precision(trained):
    path, card, params, pos, neg = trained
    calibration = Calibration.model_validate(card.calibration)
    assert calibration.method == "platt" and calibration.fit_on == "validation"
    grid = np.linspace(0, 1, 1001)
    mapped = calibration.apply(grid)
    assert np.all(np.diff(mapped) >= 0) and mapped.min() >= 0 and mapped.max() <= 1
    assert mapped[-1] > mapped[0]  # not a constant
    classifier = Classifier(path)
    assert classifier.calibration == calibration
    splits = split_classes(pos, neg, params)  # the same seeded split the trainer used
    held_pos, held_neg = (classifier.scores(texts) for texts in splits.heldout)
    assert metrics(held_pos, held_neg)["f1"] == card.heldout["f1"]  # the stages score as the card measured
    rows = [r for r in card.heldout_thresholds if r["threshold"] is not None]
    assert rows, card.heldout_thresholds
    for row in rows:
        measured = metrics(held_pos, held_neg, threshold=row["threshold"])
        assert measured["precision"] == pytest.approx(row["precision"])
        assert measured["precision"] >= row["target_precision"]
        assert measured["recall"] == pytest.approx(row["recall"])


def test_platt_and_isotonic_fits_are_monotone_maps_into_the_unit_interval():
    rng = np.random.default_rng(0)
    pos = list(rng.beta(5, 2, 300))
    neg = list(rng.beta(2, 5, 300))
    for fitted in (fit_platt(pos, neg), fit_isotonic(pos, neg)):
        out = fitted.apply(np.linspace(0, 1, 501))
        assert np.all(np.diff(out) >= -1e-12) and out.min() >= 0 and out.max() <= 1
    # perfectly separated scores (a strong model): Platt's smoothed targets keep the slope finite
    separated = fit_platt([0.99, 0.98, 0.97], [0.01, 0.02, 0.03])
    assert separated.a is not None and 0 < separated.a < 100
    assert 0.5 < separated.apply([0.98])[0] < 1 and 0 < separated.apply([0.02])[0] < 0.5
    table = precision_thresholds([0.9, 0.8, 0.4], [0.7, 0.1], targets=(0.7, 1.0))
    assert table[0]["threshold"] == 0.4 and table[0]["precision"] == pytest.approx(0.75)
    assert table[1]["threshold"] == 0.8 and table[1]["recall"] == pytest.approx(2 / 3)


def test_the_budget_bounds_the_grid_deterministically():
    options = candidates("tuned", None, None, None)
    assert options == list(GRID)
    for budget in (1.0, 10.0, 60.0, 1e6):
        planned, left_out = plan(options, 500_000, 50_000, 500_000, 100, 1, budget)
        assert len(planned) + len(left_out) == len(options)
        assert sum(seconds for _, seconds in planned) <= budget or len(planned) == 1
    small = plan(options, 500_000, 50_000, 500_000, 100, 1, 10.0)[0]
    large = plan(options, 500_000, 50_000, 500_000, 100, 1, 60.0)[0]
    assert len(small) < len(large) <= len(options)
    assert plan(options, 500_000, 50_000, 500_000, 100, 1, 1e6)[0] == [
        (c, estimate_seconds(c, 500_000, 50_000, 500_000, 100, 1)) for c in options
    ]
    # nothing fits: the cheapest candidate alone (a model is always trained)
    (only, _), *rest = plan(options, 10**9, 0, 2_000_000, 100, 1, 1.0)[0]
    assert rest == [] and only == min(options, key=lambda c: c.epoch / {1: 2.5, 2: 1.3}[c.word_ngrams])
    # a fixed setting narrows the grid; the paper's recipe is one candidate
    assert {c.epoch for c in candidates("tuned", 50, None, None)} == {50}
    assert candidates("dclm", None, None, None) == [Candidate(5, 0.1, 2)]


def test_training_plans_by_estimate_and_records_what_it_left_out(corpus, tmp_path):
    _, _, positives, negatives = corpus
    pos, neg = [flatten(t) for t in positives], [flatten(t) for t in negatives]
    card = train_classifier(pos, neg, tmp_path / "m.bin", params=Hyperparameters(budget_s=2.0, bucket=100_000))
    search = card.search
    assert len(search["candidates"]) + len(search["left_out"]) == len(GRID)
    assert sum(r["estimated_s"] for r in search["candidates"]) <= 2.0 or len(search["candidates"]) == 1
    assert search["left_out"] and all(r["estimated_s"] > 0 for r in search["left_out"])
    dclm = train_classifier(pos, neg, tmp_path / "d.bin", params=Hyperparameters(recipe="dclm", bucket=100_000))
    assert [(r["epoch"], r["lr"], r["word_ngrams"]) for r in dclm.search["candidates"]] == [(5, 0.1, 2)]
    assert dclm.hyperparameters["epoch"] == 5 and dclm.calibration["method"] == "platt"


def test_train_refuses_an_empty_class(tmp_path):
    with pytest.raises(ClassifierError, match="no negative"):
        train_classifier(["some text"], [], tmp_path / "m.bin")
    with pytest.raises(ClassifierError, match="too few documents"):
        train_classifier(["a b", "c d"], ["e f", "g h"], tmp_path / "m.bin")


def test_cli_train_then_eval(corpus, tmp_path):
    folder, jsonl, positives, negatives = corpus
    model = tmp_path / "topics.bin"
    runner = CliRunner()
    result = runner.invoke(
        app,
        ["classifier", "train", "--positive", str(folder), "--negative", str(jsonl), "--output", str(model)]
        + [
            "--label",
            "topics",
            "--budget-s",
            "4",
            "--negative-sample",
            "120",
            "--seed",
            "7",
            "--bucket",
            "100000",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    card = json.loads(result.stdout)
    assert card["counts"]["negative"]["given"] == 120  # --negative-sample
    assert card["inputs"]["negative"]["skipped"] == {"read/bad_json": 1}
    assert card["hyperparameters"]["seed"] == 7 and card["search"]["budget_s"] == 4
    assert model.with_suffix(".json").is_file()
    # --bucket 100000: the input matrix holds (words + buckets) x dim floats, ~40 MB instead of fastText's ~800 MB
    assert card["hyperparameters"]["bucket"] == 100_000 and model.stat().st_size < 100 * 2**20

    # eval on other documents: stdlib source the model never saw, and the topics as HTML pages (extracted)
    import html
    import importlib

    other = tmp_path / "other.jsonl"
    with other.open("w", encoding="utf-8") as handle:
        for name in ("pathlib", "textwrap", "zipfile"):
            for piece in chunks(inspect.getsource(importlib.import_module(name)), min_tail=200):
                handle.write(json.dumps({"text": piece}) + "\n")
    pages = tmp_path / "pages"
    pages.mkdir()
    for i, text in enumerate(random.Random(0).sample(positives, 40)):
        (pages / f"{i}.html").write_text(f"<html><body><p>{html.escape(text)}</p></body></html>", encoding="utf-8")
    result = runner.invoke(
        app, ["classifier", "eval", str(model), "--positive", str(pages), "--negative", str(other), "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert "heldout" not in report and report["calibrated"] is True  # eval metrics are labelled eval
    metrics_ = report["eval"]
    assert metrics_["positives"] == 40 and metrics_["negatives"] > 50
    assert report["label"] == "__label__topics"
    assert metrics_["f1"] >= 0.9 and metrics_["roc_auc"] >= 0.95
    assert metrics_["negative_score_percentiles"]["p95"] < 0.5
    result = runner.invoke(app, ["classifier", "eval", str(model), "--positive", str(pages)])
    assert result.exit_code == 0 and result.output.startswith("eval: 40 positive") and "held out" not in result.output
    assert f"recall {metrics_['recall']:.4f}" in result.output  # the text says what --json says


def test_cli_errors_are_one_line(tmp_path):
    runner = CliRunner()
    result = runner.invoke(
        app,
        ["classifier", "train", "--positive", str(tmp_path / "nope"), "--negative", str(tmp_path), "--output", "m.bin"],
    )
    assert result.exit_code == 2 and "does not exist" in result.output
    result = runner.invoke(app, ["classifier", "eval", str(tmp_path / "missing.bin"), "--positive", str(tmp_path)])
    assert result.exit_code == 2 and "error:" in result.output


def test_cli_bad_training_input_is_one_line(corpus, tmp_path):
    folder, jsonl, _, _ = corpus
    runner = CliRunner()
    out = str(tmp_path / "m.bin")
    one_class = runner.invoke(app, ["classifier", "train", "--positive", str(folder), "--output", out])
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    empty_file = runner.invoke(
        app, ["classifier", "train", "--positive", str(folder), "--negative", str(empty), "--output", out]
    )
    for result, message in ((one_class, "give both classes"), (empty_file, "no usable documents (read 0")):
        assert result.exit_code == 2, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], result.output
    assert not (tmp_path / "m.bin").exists()


def test_evaluate_a_model_without_card_guesses_labels(corpus, tmp_path):
    _, _, positives, negatives = corpus
    pos, neg = [flatten(t) for t in positives[:60]], [flatten(t) for t in negatives[:60]]
    params = Hyperparameters(epoch=25, lr=0.5, word_ngrams=2, bucket=100_000)
    train_classifier(pos, neg, tmp_path / "m.bin", label="ref", params=params)
    (tmp_path / "m.json").unlink()
    result = evaluate(tmp_path / "m.bin", pos[:10], neg[:10])
    assert result.label == "__label__ref" and result.calibrated is False  # fastText's own scores


def test_a_nan_in_this_process_is_trained_once_more_in_a_fresh_one(tmp_path, monkeypatch) -> None:
    # after hundreds of tests in one process fastText said "Encountered NaN." on data a fresh process trains;
    # the in-process trainer is made to fail here, the spawned interpreter (without the patch) trains
    from pipeline.classifier import train as trainer

    pos = [flatten(t) for t in reference_topics()[::2]]
    neg = [flatten(t) for t in stdlib_source()[::2]]
    params = Hyperparameters(epoch=25, lr=0.1, word_ngrams=2, bucket=100_000, calibration="none")
    clean = trainer.train_classifier(pos, neg, tmp_path / "clean.bin", label="x", params=params)

    def diverges(*_args, **_kwargs):
        raise RuntimeError("Encountered NaN.")

    monkeypatch.setattr(trainer, "_train", diverges)
    card = trainer.train_classifier(pos, neg, tmp_path / "retried.bin", label="x", params=params)
    assert card.heldout == clean.heldout
    assert (tmp_path / "retried.bin").read_bytes() == (tmp_path / "clean.bin").read_bytes()
    assert not list(tmp_path.glob("*.retry.bin"))
