"""``tokenmill scaling fit``: re-fit the scaling law L(N, D) = E + A/N^α + B/D^β from the team's own runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, NoReturn

import typer

from flows.errors import CommandError, print_error
from flows.model_options import options_from
from training.ladder_config import LadderConfig
from training.units import PlanError

scaling_app = typer.Typer(
    name="scaling",
    help="Scaling laws from your own runs: fit L(N, D) = E + A/N^alpha + B/D^beta (docs/scaling.md).",
    no_args_is_help=True,
    add_completion=False,
)


def register(app: typer.Typer) -> None:
    app.add_typer(scaling_app, name="scaling")


@scaling_app.command(name="fit")
def fit_command(
    runs: Path = typer.Argument(
        ..., help="CSV with columns params,tokens,loss (one row per run; extra columns ignored)"
    ),
    as_json: bool = typer.Option(False, "--json", help="print the fit as one JSON object (fields: docs/scaling.md)"),
    output: Path | None = typer.Option(None, help="write fit.json (for `tokenmill plan --fit`) and fit.png here"),
    bootstrap: int = typer.Option(200, min=0, help="bootstrap resamples for the 95 % intervals (0: no intervals)"),
    seed: int = typer.Option(0, help="seed of the bootstrap resampling"),
) -> None:
    """Fit the law by Chinchilla's Approach 3 (Huber loss on log residuals, L-BFGS-B from a 2,700-point grid)."""

    from training.scaling import fit_runs, read_runs, summary_lines, write_fit

    data = read_runs(runs)  # a ScalingFitError: flows.cli's one handler (the error line, exit 2)
    result = fit_runs(data, bootstrap=bootstrap, seed=seed)
    for note in result.notes:
        typer.echo(f"warning: {note}", err=True)
    if output is not None:
        paths = write_fit(result, data, output)
        typer.echo(f"wrote {paths['json']}, {paths['png']}", err=True)
    if as_json:
        sys.stdout.write(json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        typer.echo("\n".join(line for line in summary_lines(result) if not line.startswith("note: ")))


@scaling_app.command(name="ladder")
@options_from(
    LadderConfig,
    # by hand below, as the snapshot has them: shards and output (Path; --output required), widths (--sizes, which
    # also picks the device's defaults), force (a bare --force, no --no-force); cpu_threads: a --config key only
    exclude=["shards", "output", "widths", "cpu_threads", "force"],
    text=["tokens_per_param", "tasks"],  # comma-separated on the command line; LadderConfig splits them
    bounded=["seq_len", "micro_batch", "eval_batches", "bootstrap"],  # the min= the hand-written flags had
)
def ladder_command(
    recipe: Path | None = typer.Argument(
        None, help="recipe YAML: the ladder trains on its run's shards and re-plans its plan: with the fit"
    ),
    shards: Path | None = typer.Option(None, help="token shards folder instead of a recipe (holds manifest.json)"),
    output: Path = typer.Option(..., help="ladder folder: size-*/ runs, runs.csv, fit.json, ladder_report.md"),
    sizes: str | None = typer.Option(  # by hand: not a field; `cpu`/`gpu` choose the device's defaults too
        None,
        help="model widths, comma-separated (e.g. 128,256,384), or `cpu` (32,48,64) / `gpu` (128…768); "
        "depth, heads and MLP follow from the width (docs/scaling.md). Default: gpu with CUDA, else cpu",
    ),
    overrides: dict[str, Any] | None = None,  # LadderConfig's fields: --tokens-per-param, --seq-len, --seed …
    config_file: Path | None = typer.Option(
        None,
        "--config",
        help="ladder YAML (configs/ladder/*.yaml): LadderConfig keys and `device: cpu|gpu`; flags given here win",
    ),
    gpu: str | None = typer.Option(None, help="--shards: GPU the implied plan is for (default H100-SXM)"),
    gpu_hours: float | None = typer.Option(None, help="--shards: the team's budget in GPU-hours for the implied plan"),
    flops: str | None = typer.Option(None, help="--shards: the team's budget in FLOPs (e.g. 1e21)"),
    force: bool = typer.Option(False, "--force", help="train past the 16-epoch repetition limit and the budget check"),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="print the planned runs and their cost (on --gpu, default H200) without training"
    ),
    as_json: bool = typer.Option(False, "--json", help="print the report as one JSON object"),
) -> None:
    """Train a ladder of small Llama-style models (WSD trunks, cool-down branches), fit L(N, D) to their held-out
    losses and report the law, its compute-optimal frontier and the plan it implies. Rerunning resumes."""

    from pipeline import progress
    from training.ladder import cost_table, load_ladder_config, plan_ladder, run_ladder
    from training.steps import TrainingDiverged

    given = {**(overrides or {}), **({"force": True} if force else {})}
    try:
        shards, options = _ladder_inputs(recipe, shards, gpu, gpu_hours, flops, dry_run)
        values = {**_ladder_values(config_file, sizes), **given, "shards": str(shards), "output": str(output)}
        config = load_ladder_config(values)
        if dry_run:  # a cost estimate: plan past the repetition limit too, and say so in its notes
            typer.echo(cost_table(plan_ladder(config.model_copy(update={"force": True})), gpu or "H200"))
            return
        with progress.shown():  # the rungs' curation and tokenization: one line per stage, not per rank
            report = run_ladder(config, options, say=lambda line: typer.echo(line, err=True))
    except FileNotFoundError as error:  # a refused recipe, plan or rung is a TokenmillError: flows.cli's handler
        _fail(str(error))
    except TrainingDiverged as error:
        print_error(str(error))
        raise typer.Exit(1) from None
    if as_json:
        sys.stdout.write(json.dumps(report.to_dict(), indent=2, default=str) + "\n")
    else:
        assert report.report_md is not None, "run_ladder writes the Markdown"
        typer.echo(Path(report.report_md).read_text(encoding="utf-8"))


def _fail(message: str) -> NoReturn:
    raise CommandError(message)  # flows.cli's one handler: the error line, exit 2


def _ladder_inputs(
    recipe: Path | None, shards: Path | None, gpu: str | None, gpu_hours: float | None, flops: str | None, dry_run: bool
) -> tuple[Path, Any]:
    """The shards the ladder trains on and the plan options its fit re-plans: a recipe's, or the flags'."""
    if recipe is None:
        if shards is None:
            _fail("give a RECIPE or --shards DIR (one of them)")
        return shards, _shards_plan_options(shards, gpu, gpu_hours, flops)
    if shards is not None:
        _fail("give a RECIPE or --shards DIR (one of them)")
    if gpu_hours or flops or (gpu and not dry_run):
        _fail("--gpu/--gpu-hours/--flops go with --shards; with a RECIPE they come from its plan: section")
    from flows.end_to_end import plan_options
    from training.recipe import load_recipe

    loaded = load_recipe(recipe)
    shards = Path(loaded.output_dir) / "shards"
    if not (shards / "manifest.json").is_file():
        _fail(f"{recipe}: its run has no shards yet ({shards}); run `tokenmill pipeline {recipe}` first")
    return shards, plan_options(loaded)


def _ladder_values(config_file: Path | None, sizes: str | None) -> dict[str, Any]:
    """The ladder's settings before the generated flags: the device's defaults, then the ``--config`` file, then
    ``--sizes``."""
    import torch

    from training.ladder import (
        CPU_TOKENS_PER_PARAM,
        CPU_WIDTHS,
        GPU_TOKENS_PER_PARAM,
        GPU_WIDTHS,
        parse_list,
        read_ladder_file,
    )

    settings = read_ladder_file(config_file) if config_file is not None else {}
    device = settings.pop("device", None) or ("gpu" if torch.cuda.is_available() else "cpu")
    given: dict = {}
    if sizes in ("cpu", "gpu"):
        device = sizes
    elif sizes:
        given["widths"] = parse_list(sizes, int, "--sizes")
    if device not in ("cpu", "gpu"):
        _fail(f"{config_file}: device: {device!r} is not cpu or gpu")
    if sizes in ("cpu", "gpu"):
        given["widths"] = list(CPU_WIDTHS if device == "cpu" else GPU_WIDTHS)
    defaults = {
        "widths": list(CPU_WIDTHS if device == "cpu" else GPU_WIDTHS),
        "tokens_per_param": list(CPU_TOKENS_PER_PARAM if device == "cpu" else GPU_TOKENS_PER_PARAM),
        "seq_len": 64 if device == "cpu" else 1024,
        "micro_batch": 8 if device == "cpu" else 16,
        "cpu_threads": 1 if device == "cpu" else None,
    }
    return {**defaults, **settings, **given}


def _shards_plan_options(shards: Path, gpu: str | None, gpu_hours: float | None, flops: str | None):
    """The implied plan for bare shards: the given budget, else one epoch of the shards' training tokens."""
    from training.plan.options import PlanOptions, manifest_info

    manifest = shards / "manifest.json"
    if not manifest.is_file():
        raise FileNotFoundError(f"--shards {shards}: no manifest.json (write shards with `tokenmill tokenize`)")
    values: dict = {"manifest": str(manifest), "gpu": gpu or "H100-SXM", "gpu_hours": gpu_hours, "flops": flops}
    if gpu_hours is None and flops is None:
        values["tokens"] = manifest_info(manifest).unique_tokens
    try:
        return PlanOptions.model_validate({k: v for k, v in values.items() if v is not None})
    except ValueError as error:
        raise PlanError(f"plan options: {error}") from None
