"""``tokenmill train`` (budget-gated pre-training; rerunning the same command resumes) and ``tokenmill generate``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from flows.errors import print_error


def register(app: typer.Typer) -> None:
    app.command(name="train")(train_command)
    app.command(name="generate")(generate_command)


def train_command(
    config: Path | None = typer.Argument(None, help="train config YAML (configs/train/*.yaml); flags given here win"),
    shards: str | None = typer.Option(None, help="token shards folder (holds manifest.json)"),
    model: str | None = typer.Option(None, help="preset (tiny, 20m, 125m, 350m, 1b, 3b, 7b), model YAML or HF folder"),
    output: str | None = typer.Option(None, help="run folder for checkpoints, metrics, final model and report"),
    max_steps: int | None = typer.Option(None, help="stop after N optimizer steps"),
    init_from: str | None = typer.Option(None, help="continue pre-training from this local HF model folder"),
    seq_len: int | None = typer.Option(None, help="tokens per sequence"),
    micro_batch: int | None = typer.Option(None, help="sequences per GPU per forward pass"),
    global_batch_tokens: int | None = typer.Option(None, help="tokens per optimizer step over all GPUs"),
    gpu: str | None = typer.Option(None, help="GPU type the budget check plans for (default: the CUDA device)"),
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
    from pipeline.shards.format import ShardError
    from training.checkpoint import CheckpointMismatch
    from training.config import TrainConfigError, load_train_config
    from training.launch import LaunchFailed, launch_training
    from training.modeling import ModelSetupError
    from training.preflight import GateError
    from training.steps import TrainingDiverged

    console = make_console(highlight=False, soft_wrap=True)
    overrides: dict[str, Any] = {
        "shards": shards,
        "model": model,
        "output": output,
        "max_steps": max_steps,
        "init_from": init_from,
        "seq_len": seq_len,
        "micro_batch": micro_batch,
        "global_batch_tokens": global_batch_tokens,
        "gpu": gpu,
        "force": True if force else None,
        "eval_tasks": [t.strip() for t in eval_tasks.split(",") if t.strip()] if eval_tasks else None,
    }
    refused = (TrainConfigError, GateError, CheckpointMismatch, ModelSetupError, ShardError)
    launched = accelerate_config is not None or (num_processes or 1) > 1
    try:
        settings = load_train_config(config, overrides)
        summary = launch_training(
            settings,
            accelerate_config=str(accelerate_config) if accelerate_config else None,
            num_processes=num_processes,
            on_event=lambda kind, value: _print_launch(console, kind, value),
        )
    except refused as error:
        print_error(str(error))
        raise typer.Exit(2) from None
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
        for note in value["notes"]:
            console.print(f"note: {note}")
    elif kind == "launch":
        console.print("launching: " + " ".join(value))


def _print_summary(console, summary: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(show_header=False, box=None, pad_edge=False)
    rows = [
        ("status", f"{summary['status']} at step {summary['step']}/{summary['max_steps']}"),
        ("final loss", f"{summary['final_loss']:.4f}" if summary.get("final_loss") is not None else "—"),
        ("tokens/s", f"{summary['tokens_per_s']:,.0f}" if summary.get("tokens_per_s") else "—"),
        ("model", summary.get("final") or "— (not finished: rerun the same command to continue)"),
        ("report", summary.get("report_md") or "—"),
    ]
    for name, task in ((summary.get("tasks") or {}).get("tasks") or {}).items():
        rows.append(
            (
                f"task {name}",
                f"accuracy {task['accuracy']:.3f} (chance {task['chance']:.3f}), gold bpb {task['gold_bpb']:.4f}",
            )
        )
    for source, values in (summary.get("eval") or {}).items():
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
    except (FileNotFoundError, ValueError) as error:
        print_error(str(error))
        raise typer.Exit(2) from None
    typer.echo(text)
