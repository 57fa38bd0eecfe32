"""``tokenmill train`` (budget-gated pre-training; rerunning the same command resumes) and ``tokenmill generate``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from flows.errors import CommandError
from flows.model_options import options_from
from training.config import TrainConfig, load_train_config

if TYPE_CHECKING:
    from training.report import TrainSummary


def register(app: typer.Typer) -> None:
    app.command(name="train")(train_command)
    app.command(name="generate")(generate_command)


@options_from(
    TrainConfig,
    only=[
        "shards",
        "model",
        "output",
        "max_steps",
        "init_from",
        "seq_len",
        "micro_batch",
        "global_batch_tokens",
        "gpu",
    ],
)
def train_command(
    config: Path | None = typer.Argument(None, help="train config YAML (configs/train/*.yaml); flags given here win"),
    overrides: dict[str, Any] | None = None,  # TrainConfig's fields: --shards, --model, --max-steps …
    force: bool = typer.Option(False, "--force", help="train despite blocking budget problems or a changed config"),
    eval_tasks: str | None = typer.Option(
        None, help="evaluate the final model on these tasks, comma-separated (`tokenmill eval --tasks`)"
    ),
    accelerate_config: Path | None = typer.Option(
        None, help="launch with `accelerate launch --config_file` (configs/accelerate/*.yaml) in a subprocess"
    ),
    num_processes: int | None = typer.Option(None, help="processes (GPUs) for accelerate launch"),
) -> None:
    """Pre-train (or continue pre-training) a Llama-style model on token shards, gated by the budget check."""
    from pipeline.console import make_console
    from training.launch import LaunchFailed, launch_training
    from training.steps import TrainingDiverged

    console = make_console(highlight=False, soft_wrap=True)
    overrides = dict(overrides or {})
    if force:
        overrides["force"] = True
    if eval_tasks:
        overrides["eval_tasks"] = [t.strip() for t in eval_tasks.split(",") if t.strip()]
    launched = accelerate_config is not None or (num_processes or 1) > 1
    # a refused config, gate, checkpoint, model or shard folder is a TokenmillError: flows.cli's one handler, exit 2
    try:
        settings = load_train_config(config, overrides)
        summary = launch_training(
            settings,
            accelerate_config=str(accelerate_config) if accelerate_config else None,
            num_processes=num_processes,
            on_event=lambda kind, value: _print_launch(console, kind, value),
        )
    except TrainingDiverged as error:
        console.print(f"[red]diverged:[/red] {error}")
        raise typer.Exit(1) from None
    except LaunchFailed as error:
        raise typer.Exit(error.code) from None
    if launched:
        raise typer.Exit(0)  # the launched processes printed their own summary
    _print_summary(console, summary)


def _print_launch(console, kind: str, value: Any) -> None:
    """The launch's steps as the CLI words them: the gate's notes, then the command."""
    if kind == "preflight":
        for note in value.notes:
            console.print(f"note: {note}")
    elif kind == "launch":
        console.print("launching: " + " ".join(value))


def _print_summary(console, summary: TrainSummary) -> None:
    from rich.table import Table

    table = Table(show_header=False, box=None, pad_edge=False)
    rows = [
        ("status", f"{summary.status} at step {summary.step}/{summary.max_steps}"),
        ("final loss", f"{summary.final_loss:.4f}" if summary.final_loss is not None else "—"),
        ("tokens/s", f"{summary.tokens_per_s:,.0f}" if summary.tokens_per_s else "—"),
        ("model", summary.final or "— (not finished: rerun the same command to continue)"),
        ("report", (summary.report.report_md if summary.report else None) or "—"),
    ]
    for name, task in ((summary.tasks or {}).get("tasks") or {}).items():
        rows.append(
            (
                f"task {name}",
                f"accuracy {task['accuracy']:.3f} (chance {task['chance']:.3f}), gold bpb {task['gold_bpb']:.4f}",
            )
        )
    for source, values in (summary.eval or {}).items():
        rows.append((f"held-out {source}", f"loss {values['loss']:.4f}, perplexity {values['ppl']:.2f}"))
    for key, value in rows:
        table.add_row(f"[bold]{key}[/bold]", str(value))
    console.print(table)


def generate_command(
    model_dir: Path = typer.Argument(..., help="an exported model folder, e.g. runs/demo/train/final"),
    prompt: str = typer.Option("The", help="text to continue"),
    max_new_tokens: int = typer.Option(40, min=1, metavar="N", help="tokens to generate after the prompt"),
    top_k: int | None = typer.Option(None, metavar="K", help="sample from the k likeliest tokens (default: greedy)"),
    seed: int = typer.Option(0, metavar="N", help="seed of the sampling (with --top-k)"),
) -> None:
    """Continue a prompt with a trained model (greedy or top-k)."""
    from training.generate import generate_sample

    try:
        text = generate_sample(model_dir, prompt, max_new_tokens, top_k=top_k, seed=seed)
    except (FileNotFoundError, ValueError) as error:  # a missing or foreign model folder: its own words, exit 2
        raise CommandError(str(error)) from None
    typer.echo(text)
