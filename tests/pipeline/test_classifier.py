"""``tokenmill classifier train|eval`` (DCLM's fastText recipe) on text no one here wrote, built at run time:
the Python Language Reference topics pydoc ships (``pydoc_data.topics``) as positives, the source code of
stdlib modules as negatives, both cut into ~1.5 KB documents."""

from __future__ import annotations

import gzip
import inspect
import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from pipeline.classify.data import flatten, load_texts
from pipeline.classify.model import (
    ClassifierError,
    Hyperparameters,
    evaluate,
    metrics,
    percentile,
    roc_auc,
    train_classifier,
)
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


def test_train_separates_reference_prose_from_source_code(corpus, tmp_path):
    _, _, positives, negatives = corpus
    pos, neg = [flatten(t) for t in positives], [flatten(t) for t in negatives]
    params = Hyperparameters(epoch=25, bucket=100_000)  # a few hundred documents: DCLM's 5 epochs are sized for 400k
    card = train_classifier(pos, neg, tmp_path / "m.bin", label="reference", params=params)
    assert (tmp_path / "m.bin").is_file()
    on_disk = json.loads((tmp_path / "m.json").read_text())
    assert on_disk == card
    assert card["labels"] == {"positive": "__label__reference", "negative": "__label__not_reference"}
    n = min(len(pos), len(neg))  # balanced by down-sampling the larger class
    assert card["counts"]["positive"]["used"] == card["counts"]["negative"]["used"] == n
    assert card["counts"]["positive"]["heldout"] == round(n * 0.1)
    assert card["hyperparameters"]["word_ngrams"] == 2 and card["hyperparameters"]["dim"] == 100
    held = card["heldout"]
    assert held["f1"] >= 0.9 and held["roc_auc"] >= 0.95
    assert set(held["negative_score_percentiles"]) == {"p50", "p75", "p90", "p95", "p99"}
    again = train_classifier(pos, neg, tmp_path / "again.bin", label="reference", params=params)
    assert again["heldout"] == card["heldout"]  # one thread + a seed: reproducible


def test_train_refuses_an_empty_class(tmp_path):
    with pytest.raises(ClassifierError, match="no negative"):
        train_classifier(["some text"], [], tmp_path / "m.bin")


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
            "--epoch",
            "25",
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
    assert card["hyperparameters"]["seed"] == 7 and card["hyperparameters"]["epoch"] == 25
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
    assert report["positives"] == 40 and report["negatives"] > 50
    assert report["label"] == "__label__topics"
    assert report["f1"] >= 0.9 and report["roc_auc"] >= 0.95
    result = runner.invoke(app, ["classifier", "eval", str(model), "--positive", str(pages)])
    assert result.exit_code == 0 and "recall 1.0000" in result.output


def test_cli_errors_are_one_line(tmp_path):
    runner = CliRunner()
    result = runner.invoke(
        app,
        ["classifier", "train", "--positive", str(tmp_path / "nope"), "--negative", str(tmp_path), "--output", "m.bin"],
    )
    assert result.exit_code == 2 and "does not exist" in result.output
    result = runner.invoke(app, ["classifier", "eval", str(tmp_path / "missing.bin"), "--positive", str(tmp_path)])
    assert result.exit_code == 2 and "error:" in result.output


def test_evaluate_a_model_without_card_guesses_labels(corpus, tmp_path):
    _, _, positives, negatives = corpus
    pos, neg = [flatten(t) for t in positives[:60]], [flatten(t) for t in negatives[:60]]
    train_classifier(pos, neg, tmp_path / "m.bin", label="ref", params=Hyperparameters(epoch=25, bucket=100_000))
    (tmp_path / "m.json").unlink()
    result = evaluate(tmp_path / "m.bin", pos[:10], neg[:10])
    assert result["label"] == "__label__ref"
