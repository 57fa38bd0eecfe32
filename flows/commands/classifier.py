"""``tokenmill classifier train|eval``: fastText classifiers from a team's own documents, tuned and calibrated
on a validation split (``pipeline.classifier``; docs/classifier.md)."""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import typer

from flows.errors import CommandError

# pipeline.classifier (fastText, datatrove, the extract stage) is imported inside the commands: the CLI imports
# every command module at start-up (flows/cli.py), and `tokenmill --help` should not pay for them

classifier_app = typer.Typer(
    help="Train and evaluate fastText document classifiers (quality, domain, toxicity): docs/classifier.md",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    app.add_typer(classifier_app, name="classifier")


def _fail(message: str) -> NoReturn:
    raise CommandError(message)  # flows.cli's one handler: the error line, exit 2


def _load(paths: list[Path], max_docs: int | None, seed: int, name: str) -> Any:
    from pipeline.classifier.data import load_texts
    from pipeline.classify.scoring import ClassifierError
    from pipeline.progress import quiet_datatrove

    with quiet_datatrove():  # datatrove's per-file INFO lines would bury the metrics
        loaded = load_texts([str(p) for p in paths], max_docs=max_docs, seed=seed, name=name)
    if not loaded.texts:
        where = " ".join(str(p) for p in paths)
        skipped = ", ".join(f"{rule} {n}" for rule, n in sorted(loaded.skipped.items())) or "none"
        raise ClassifierError(f"--{name} {where}: no usable documents (read {loaded.read}; skipped: {skipped})")
    return loaded


def _print_metrics(split: str, result: dict[str, Any], out: Callable[[str], Any]) -> None:
    def show(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.4f}"

    out(
        f"{split}: {result['positives']} positive, {result['negatives']} negative; at P >= {result['threshold']}: "
        f"precision {show(result['precision'])}, recall {show(result['recall'])}, F1 {show(result['f1'])}, "
        f"ROC-AUC {show(result['roc_auc'])}"
    )
    cuts = ", ".join(f"{k} {show(v)}" for k, v in result["negative_score_percentiles"].items())
    out(f"{split}: P(positive) on the negatives: {cuts}")


@classifier_app.command("train")
def train_command(
    positive: list[Path] = typer.Option(
        [], metavar="PATH", help="positive documents: folder, JSONL/Parquet, WARC, or a run directory (repeatable)"
    ),
    negative: list[Path] = typer.Option([], metavar="PATH", help="negative documents, as --positive (repeatable)"),
    output: Path = typer.Option(..., metavar="MODEL.bin", help="the fastText model; MODEL.json is written beside it"),
    label: str = typer.Option("positive", metavar="NAME", help="the positive class's name (__label__NAME)"),
    max_docs: int | None = typer.Option(None, min=1, metavar="N", help="at most N documents per class (random)"),
    negative_sample: int | None = typer.Option(
        None, min=1, metavar="N", help="a random sample of N negative documents (e.g. out of a crawl)"
    ),
    recipe: str = typer.Option(
        "tuned", metavar="tuned|dclm", help="tuned: choose epochs, lr, n-grams on a validation split; dclm: fixed"
    ),
    budget_s: float = typer.Option(60.0, min=1.0, metavar="S", help="seconds the tuned search may spend (estimated)"),
    seed: int = typer.Option(0, metavar="S", help="seed of sampling, the splits and fastText"),
    dim: int = typer.Option(100, min=1, metavar="N", help="vector dimension (DCLM: 100)"),
    lr: float | None = typer.Option(None, min=0.0, metavar="X", help="fix the learning rate (default: chosen)"),
    epoch: int | None = typer.Option(None, min=1, metavar="N", help="fix the epochs (default: chosen)"),
    word_ngrams: int | None = typer.Option(None, min=1, metavar="N", help="fix the word n-grams (default: chosen)"),
    min_count: int = typer.Option(1, min=1, metavar="N", help="minimal word count (DCLM: 1)"),
    bucket: int | None = typer.Option(
        None, min=0, metavar="N", help="n-gram hash buckets (default: the training tokens, 100k..2M)"
    ),
    heldout: float = typer.Option(0.1, min=0.01, max=0.5, metavar="X", help="share of each class held out"),
    validation: float = typer.Option(0.1, min=0.01, max=0.5, metavar="X", help="share for the choice and calibration"),
    calibration: str = typer.Option("platt", metavar="platt|isotonic|none", help="calibration fitted on validation"),
    balance: bool = typer.Option(True, "--balance/--no-balance", help="down-sample the larger class (DCLM)"),
    threads: int = typer.Option(1, min=1, metavar="N", help="fastText threads (1: reproducible)"),
    as_json: bool = typer.Option(False, "--json", help="print MODEL.json's content"),
) -> None:
    """Train a fastText classifier, positives vs negatives: hyper-parameters chosen on a validation split within
    --budget-s, scores calibrated; write MODEL.bin and MODEL.json (docs/classifier.md)."""
    from pipeline.classifier.train import Hyperparameters, train_classifier
    from pipeline.classify.scoring import ClassifierError
    from pipeline.read import InputError

    if not output.name.endswith(".bin"):
        _fail(f"--output {output}: name the model file MODEL.bin (MODEL.json is written beside it)")
    if not positive or not negative:
        _fail(f"give both classes: --positive PATH and --negative PATH (documents that are not {label})")
    try:
        # validated like the keyword form; recipe and calibration are checked against their Literal choices here
        params = Hyperparameters.model_validate(
            {
                "recipe": recipe,
                "budget_s": budget_s,
                "dim": dim,
                "lr": lr,
                "epoch": epoch,
                "word_ngrams": word_ngrams,
                "min_count": min_count,
                "bucket": bucket,
                "heldout": heldout,
                "validation": validation,
                "calibration": calibration,
                "balance": balance,
                "threads": threads,
                "seed": seed,
            }
        )
        pos = _load(positive, max_docs, seed, "positive")
        neg_cap = min(x for x in (max_docs, negative_sample) if x is not None) if max_docs or negative_sample else None
        neg = _load(negative, neg_cap, seed + 1, "negative")
        inputs = {
            "positive": {"paths": [str(p) for p in positive], **pos.summary()},
            "negative": {"paths": [str(p) for p in negative], **neg.summary()},
        }
        card = train_classifier(pos.texts, neg.texts, output, label=label, params=params, inputs=inputs)
    except (ClassifierError, InputError) as error:
        _fail(str(error))
    except ValueError as error:  # pydantic's ValidationError: one line per field
        _fail(str(error).replace("\n", " "))
    if as_json:
        sys.stdout.write(json.dumps(card.to_dict(), indent=2) + "\n")
        return
    counts, chosen, search = card.counts, card.hyperparameters, card.search
    typer.echo(
        f"{output}: {counts['positive']['train']} positive + {counts['negative']['train']} negative documents "
        f"trained on (read {pos.read} / {neg.read}; skipped {sum(pos.skipped.values())} / {sum(neg.skipped.values())})"
    )
    typer.echo(
        f"chosen: epoch {chosen['epoch']}, lr {chosen['lr']}, word n-grams {chosen['word_ngrams']} "
        f"({len(search['candidates'])} tried, {len(search['left_out'])} over the {search['budget_s']:g} s budget; "
        f"{search['seconds']:.1f} s); calibration: {card.calibration['method'] if card.calibration else 'none'}"
    )
    _print_metrics("held out", card.heldout, typer.echo)
    cuts = ", ".join(
        f"{row['target_precision']:.0%} at P >= {row['threshold']:.4f} (recall {row['recall']:.3f})"
        for row in card.heldout_thresholds
        if row["threshold"] is not None
    )
    typer.echo(f"held out: precision reached: {cuts or 'none'}")


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
    """Precision, recall, F1, ROC-AUC and negative-score percentiles of a classifier on other documents (eval)."""
    from pipeline.classifier.data import Loaded
    from pipeline.classifier.evaluate import evaluate
    from pipeline.classify.scoring import ClassifierError
    from pipeline.read import InputError

    if not positive and not negative:
        _fail("give documents to evaluate on: --positive PATH and/or --negative PATH")
    try:
        pos = _load(positive, max_docs, seed, "positive") if positive else Loaded()
        neg = _load(negative, max_docs, seed + 1, "negative") if negative else Loaded()
        result = evaluate(model, pos.texts, neg.texts, label=label, threshold=threshold)
    except (ClassifierError, InputError, ValueError) as error:
        _fail(str(error))
    result = dataclasses.replace(result, inputs={"positive": pos.summary(), "negative": neg.summary()})
    if as_json:
        sys.stdout.write(json.dumps(result.to_dict(), indent=2) + "\n")
        return
    _print_metrics("eval", result.eval, typer.echo)
