"""``tokenmill classifier train|eval``: fastText classifiers from a team's own documents (DCLM's recipe)."""

from __future__ import annotations

from pathlib import Path

import typer

from flows.errors import print_error

classifier_app = typer.Typer(
    help="Train and evaluate fastText document classifiers (quality, domain, toxicity): docs/classifier.md",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    app.add_typer(classifier_app, name="classifier")


def _fail(message: str) -> None:
    print_error(message)
    raise typer.Exit(2)


def _load(paths: list[Path], max_docs: int | None, seed: int, name: str):
    from pipeline.classify.data import load_texts
    from pipeline.progress import quiet_datatrove

    with quiet_datatrove():  # datatrove's per-file INFO lines would bury the metrics
        return load_texts([str(p) for p in paths], max_docs=max_docs, seed=seed, name=name)


def _print_metrics(result: dict, out) -> None:
    def show(value) -> str:
        return "n/a" if value is None else f"{value:.4f}"

    out(
        f"held out: {result['positives']} positive, {result['negatives']} negative; at P >= {result['threshold']}: "
        f"precision {show(result['precision'])}, recall {show(result['recall'])}, F1 {show(result['f1'])}, "
        f"ROC-AUC {show(result['roc_auc'])}"
    )
    cuts = ", ".join(f"{k} {show(v)}" for k, v in result["negative_score_percentiles"].items())
    out(f"P(positive) on the negatives: {cuts}  (a top-k % threshold: the (100-k)th percentile)")


@classifier_app.command("train")
def train_command(
    positive: list[Path] = typer.Option(
        ..., metavar="PATH", help="positive documents: folder, JSONL/Parquet, WARC, or a run directory (repeatable)"
    ),
    negative: list[Path] = typer.Option(..., metavar="PATH", help="negative documents, as --positive (repeatable)"),
    output: Path = typer.Option(..., metavar="MODEL.bin", help="the fastText model; MODEL.json is written beside it"),
    label: str = typer.Option("positive", metavar="NAME", help="the positive class's name (__label__NAME)"),
    max_docs: int | None = typer.Option(None, min=1, metavar="N", help="at most N documents per class (random)"),
    negative_sample: int | None = typer.Option(
        None, min=1, metavar="N", help="a random sample of N negative documents (e.g. out of a crawl)"
    ),
    seed: int = typer.Option(0, metavar="S", help="seed of sampling, the held-out split and fastText"),
    dim: int = typer.Option(100, min=1, metavar="N", help="vector dimension (DCLM: 100)"),
    lr: float = typer.Option(0.1, min=0.0, metavar="X", help="learning rate (DCLM: 0.1)"),
    epoch: int = typer.Option(5, min=1, metavar="N", help="epochs (DCLM: 5)"),
    word_ngrams: int = typer.Option(2, min=1, metavar="N", help="word n-grams (DCLM: 2)"),
    min_count: int = typer.Option(1, min=1, metavar="N", help="minimal word count (DCLM: 1)"),
    bucket: int = typer.Option(
        2_000_000, min=0, metavar="N", help="n-gram hash buckets; the model is ~bucket x dim x 4 bytes (DCLM: 2M)"
    ),
    heldout: float = typer.Option(0.1, min=0.0, max=0.9, metavar="X", help="share of each class held out"),
    balance: bool = typer.Option(True, "--balance/--no-balance", help="down-sample the larger class (DCLM)"),
    threads: int = typer.Option(1, min=1, metavar="N", help="fastText threads (1: reproducible)"),
    as_json: bool = typer.Option(False, "--json", help="print MODEL.json's content"),
) -> None:
    """Train a fastText classifier, positives vs negatives (DCLM's recipe); write MODEL.bin and MODEL.json."""
    import json
    import sys

    from pipeline.classify.model import ClassifierError, Hyperparameters, train_classifier
    from pipeline.read import InputError

    if not output.name.endswith(".bin"):
        _fail(f"--output {output}: name the model file MODEL.bin (MODEL.json is written beside it)")
    try:
        params = Hyperparameters(
            dim=dim,
            lr=lr,
            epoch=epoch,
            word_ngrams=word_ngrams,
            min_count=min_count,
            bucket=bucket,
            heldout=heldout,
            balance=balance,
            threads=threads,
            seed=seed,
        )
        pos = _load(positive, max_docs, seed, "positive")
        neg_cap = min(x for x in (max_docs, negative_sample) if x is not None) if max_docs or negative_sample else None
        neg = _load(negative, neg_cap, seed + 1, "negative")
        inputs = {
            "positive": {"paths": [str(p) for p in positive], **pos.summary()},
            "negative": {"paths": [str(p) for p in negative], **neg.summary()},
        }
        card = train_classifier(pos.texts, neg.texts, output, label=label, params=params, inputs=inputs)
    except (ClassifierError, InputError, ValueError) as error:
        _fail(str(error))
    if as_json:
        sys.stdout.write(json.dumps(card, indent=2) + "\n")
        return
    counts = card["counts"]
    typer.echo(
        f"{output}: {counts['positive']['train']} positive + {counts['negative']['train']} negative documents "
        f"trained on (read {pos.read} / {neg.read}; skipped {sum(pos.skipped.values())} / {sum(neg.skipped.values())})"
    )
    _print_metrics(card["heldout"], typer.echo)
    trained = counts["positive"]["train"] + counts["negative"]["train"]
    if trained < SMALL_TRAINING_SET and epoch <= 5:
        typer.echo(
            f"note: {trained:,} training documents; DCLM's {epoch} epochs are sized for hundreds of thousands and "
            "underfit a set this small (scores crowd around 0.5): try --epoch 50 (docs/classifier.md)",
            err=True,
        )


#: below this many training documents the CLI suggests more epochs (docs/classifier.md, "Small training sets")
SMALL_TRAINING_SET = 10_000


@classifier_app.command("eval")
def eval_command(
    model: Path = typer.Argument(..., metavar="MODEL.bin", help="a model from `tokenmill classifier train`"),
    positive: list[Path] = typer.Option([], metavar="PATH", help="positive documents (repeatable)"),
    negative: list[Path] = typer.Option([], metavar="PATH", help="negative documents (repeatable)"),
    label: str | None = typer.Option(None, metavar="NAME", help="positive label (default: from MODEL.json)"),
    threshold: float = typer.Option(0.5, min=0.0, max=1.0, metavar="P", help="P(positive) counted as positive"),
    max_docs: int | None = typer.Option(None, min=1, metavar="N", help="at most N documents per class (random)"),
    seed: int = typer.Option(0, metavar="S", help="seed of the --max-docs sample"),
    as_json: bool = typer.Option(False, "--json", help="print the metrics as one JSON object"),
) -> None:
    """Precision, recall, F1, ROC-AUC and negative-score percentiles of a classifier on other documents."""
    import json
    import sys

    from pipeline.classify.model import ClassifierError, evaluate
    from pipeline.read import InputError

    if not positive and not negative:
        _fail("give documents to evaluate on: --positive PATH and/or --negative PATH")
    try:
        pos = _load(positive, max_docs, seed, "positive")
        neg = _load(negative, max_docs, seed + 1, "negative")
        result = evaluate(model, pos.texts, neg.texts, label=label, threshold=threshold)
    except (ClassifierError, InputError, ValueError) as error:
        _fail(str(error))
    result["inputs"] = {"positive": pos.summary(), "negative": neg.summary()}
    if as_json:
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
        return
    _print_metrics(result, typer.echo)
