"""``tokenmill ablate RECIPE``: raw vs curated arms, equal tokens, ≥ 2 seeds each, bits per byte on references."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from flows.errors import print_error
from training.units import PlanError


def register(app: typer.Typer) -> None:
    app.command(name="ablate")(ablate_command)


def ablate_command(
    recipe: Path = typer.Argument(..., help="recipe YAML with sources, stages and a train: section"),
    output: Path | None = typer.Option(None, help="ablation folder (default: <recipe output_dir>/ablate)"),
    reference: list[Path] = typer.Option(
        [], help="held-out text you name (text/markdown/JSONL file or folder; repeatable), added to ablate.reference"
    ),
    seeds: str | None = typer.Option(None, help="training seeds per arm, comma-separated (default 1,2,3)"),
    max_steps: int | None = typer.Option(None, min=1, help="training steps per run (default: the recipe's train:)"),
    force: bool = typer.Option(False, "--force", help="train past the budget check"),
    tasks: str | None = typer.Option(
        None, help="also evaluate every run's model on these multiple-choice tasks, comma-separated (`tokenmill eval`)"
    ),
    as_json: bool = typer.Option(False, "--json", help="print the report as one JSON object"),
) -> None:
    """Does curation help? Train raw (read + extract only) and curated arms on equal tokens with the same
    tokenizer, model and seeds; compare bits per byte on references neither arm was filtered toward."""

    from pipeline import progress
    from pipeline.config import RecipeError
    from pipeline.layout import RunDirError
    from pipeline.read import InputError
    from pipeline.run import resolve_run
    from pipeline.shards.format import ShardError
    from pipeline.tokenize.tokenizer import TokenizerError
    from training.ablate import AblateError, load_ablate_config, run_ablation
    from training.checkpoint import CheckpointMismatch
    from training.config import TrainConfigError
    from training.modeling import ModelSetupError
    from training.preflight import GateError
    from training.recipe import load_recipe
    from training.steps import TrainingDiverged

    def fail(message: str, code: int = 2) -> None:
        print_error(message)
        raise typer.Exit(code)

    try:
        loaded = resolve_run(load_recipe(recipe))
        settings = dict(loaded.ablate or {})
        settings["reference"] = [*settings.get("reference", []), *(str(p) for p in reference)]
        if seeds is not None:
            try:
                settings["seeds"] = [int(s) for s in seeds.split(",") if s.strip()]
            except ValueError:
                fail(f"--seeds: {seeds!r} is not a comma-separated list of integers")
        if max_steps is not None:
            settings["max_steps"] = max_steps
        if force:
            settings["force"] = True
        if tasks:
            settings["tasks"] = [t.strip() for t in tasks.split(",") if t.strip()]
        config = load_ablate_config(settings, str(recipe))
        target = output or Path(loaded.output_dir) / "ablate"
        with progress.shown():  # one progress line per stage of each arm, datatrove's rank logs to logs/
            report = run_ablation(loaded, target, config, say=lambda line: typer.echo(line, err=True))
    except (
        AblateError,
        RecipeError,
        InputError,
        RunDirError,
        ShardError,
        TokenizerError,
        PlanError,
        ModelSetupError,
        TrainConfigError,
        GateError,
        CheckpointMismatch,
        FileNotFoundError,
    ) as error:
        fail(str(error))
    except TrainingDiverged as error:
        fail(str(error), 1)
    if as_json:
        sys.stdout.write(json.dumps(report.to_dict(), indent=2) + "\n")
    else:
        assert report.report_md is not None, "run_ablation writes the Markdown"
        typer.echo(Path(report.report_md).read_text(encoding="utf-8"))
