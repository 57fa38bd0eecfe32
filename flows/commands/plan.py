"""``tokenmill plan``: the Chinchilla budget check from flags or from a YAML file's ``plan:`` section."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer

from flows.errors import print_error


def register(app: typer.Typer) -> None:
    app.command(name="plan")(plan_command)


def plan_command(
    recipe: Path | None = typer.Argument(
        None, help="YAML file with a top-level 'plan:' mapping of these options (flags given here win)"
    ),
    model: str | None = typer.Option(
        None, help="preset (tiny, 20m, 125m, 350m, 1b, 3b, 7b), model YAML, HF config.json or model folder"
    ),
    params: str | None = typer.Option(None, help="parameter count instead of a model, e.g. 175B"),
    tokens: str | None = typer.Option(None, help="training tokens (continued tokens with --base-tokens), e.g. 300B"),
    gpu: str | None = typer.Option(None, help="GPU type (default H100-SXM); unknown names list the known ones"),
    gpus: int | None = typer.Option(None, help="number of GPUs (default 1)"),
    gpu_hours: float | None = typer.Option(None, help="budget in GPU-hours on --gpu at --mfu"),
    flops: str | None = typer.Option(None, help="budget in FLOPs, e.g. 3e23"),
    money: float | None = typer.Option(None, help="budget in money (needs --price)"),
    price: float | None = typer.Option(None, help="price per GPU-hour, for cost and a money budget"),
    mfu: float | None = typer.Option(None, help="model FLOPs utilisation in (0, 1] (default 0.40)"),
    seq_len: int | None = typer.Option(None, help="sequence length (default: the model's max positions, or 2048)"),
    micro_batch: int | None = typer.Option(None, help="sequences per GPU per forward pass (default 1)"),
    strategy: str | None = typer.Option(None, help="ddp, zero1, zero2, zero3 or fsdp (default ddp)"),
    activation_checkpointing: bool | None = typer.Option(
        None, "--activation-checkpointing/--no-activation-checkpointing", help="full activation recompute"
    ),
    manifest: str | None = typer.Option(None, help="shard manifest.json (or its folder): unique tokens, vocab"),
    unique_tokens: str | None = typer.Option(None, help="unique tokens available"),
    base_tokens: str | None = typer.Option(None, help="base model's pre-training tokens (domain-adaptive mode)"),
    min_tokens: str | None = typer.Option(None, help="fewer planned tokens is a blocking problem"),
    vocab_size: int | None = typer.Option(None, help="override the model's vocab (the tokenizer's)"),
    precision: str | None = typer.Option(
        None, help="amp (fp32 weights + bf16 autocast, default) or bf16 (bf16 weights, fp32 master: Megatron/DeepSpeed)"
    ),
    attention: str | None = typer.Option(None, help="sdpa (default; stores no s×s scores) or eager"),
    convention: str | None = typer.Option(None, help="FLOPs/token: palm (6N+12LHQT, default), causal, 6n"),
    fit: str | None = typer.Option(
        None,
        help="scaling law: epoch (default) or hoffmann (published, reported beside the 20 tokens/param rule), or "
        "a fit.json from `tokenmill scaling fit` (your law then sets the optimum, loss and verdicts)",
    ),
    tokens_per_param: float | None = typer.Option(None, help="compute-optimal rule (default 20)"),
    output: Path | None = typer.Option(None, help="write plan.json, plan.md and plots/plan.png here"),
    as_json: bool = typer.Option(False, "--json", help="print the plan as JSON (fields: docs/plan.md)"),
    strict: bool = typer.Option(False, "--check", help="exit 1 when check() finds blocking problems"),
) -> None:
    """Check a planned LLM against a Chinchilla compute/data budget: FLOPs, optimal N/D, memory, time, verdict."""
    from training.plan.options import PlanOptions, load_plan_options, plan_from_options
    from training.plan.planner import check
    from training.units import PlanError

    given: dict[str, Any] = {
        "model": model,
        "params": params,
        "tokens": tokens,
        "gpu": gpu,
        "gpus": gpus,
        "gpu_hours": gpu_hours,
        "flops": flops,
        "money": money,
        "price": price,
        "mfu": mfu,
        "seq_len": seq_len,
        "micro_batch": micro_batch,
        "strategy": strategy,
        "activation_checkpointing": activation_checkpointing,
        "manifest": manifest,
        "unique_tokens": unique_tokens,
        "base_tokens": base_tokens,
        "min_tokens": min_tokens,
        "vocab_size": vocab_size,
        "precision": precision,
        "attention": attention,
        "convention": convention,
        "fit": fit,
        "tokens_per_param": tokens_per_param,
    }
    overrides = {key: value for key, value in given.items() if value is not None}
    try:
        if recipe is not None:
            options = load_plan_options(recipe, overrides)
        else:
            options = _validate_flags(PlanOptions, overrides)
        result = plan_from_options(options, origin=str(recipe) if recipe else None)
    except PlanError as error:
        print_error(str(error))
        raise typer.Exit(2) from None
    blocking = check(result)
    for warning in result.warnings:
        typer.echo(f"warning: {warning}", err=True)
    if output is not None:
        from training.plan.report import write_report

        paths = write_report(result, output)
        if not as_json:
            typer.echo(f"wrote {paths['markdown']}, {paths['json']}, {paths['png']}", err=True)
    if as_json:
        sys.stdout.write(json.dumps(result.to_dict() | {"blocking": blocking}, indent=2, ensure_ascii=False) + "\n")
    else:
        _print_summary(result, blocking)
    if strict and blocking:
        raise typer.Exit(1)


def _validate_flags(model_cls: Any, overrides: dict[str, Any]) -> Any:
    from pydantic import ValidationError

    from training.units import PlanError

    try:
        return model_cls.model_validate(overrides)
    except ValidationError as error:
        lines = ["invalid option(s)"]
        for item in error.errors():
            flag = "--" + ".".join(str(p) for p in item["loc"]).replace("_", "-")
            lines.append(f"  {flag}: {item['msg']}")
        raise PlanError("\n".join(lines)) from None


def _print_summary(result: Any, blocking: list[str]) -> None:
    from rich.table import Table

    from pipeline.console import make_console
    from training.gpus import GIB
    from training.plan.report import flops_convention, memory_verdict, suggestion_label
    from training.units import human, per_param

    console = make_console(stderr=False)
    table = Table(show_header=False, box=None, pad_edge=False)
    memory = result.memory
    rows = [
        (
            "parameters",
            f"{result.params:,.0f} ({human(result.params)}; non-embedding {human(result.non_embedding_params)})",
        ),
        ("tokens", f"{human(result.tokens)} ({per_param(result.tokens_per_param)} per parameter)"),
        (
            "FLOPs",
            f"{result.flops:.3g} ({result.flops_per_token:.3g}/token, {flops_convention(result)}); "
            f"{result.pf_days:,.1f} PF-days",
        ),
        (
            "compute-optimal",
            f"for C = 6ND = {result.optimal['flops']:.3g} FLOPs (Chinchilla convention): "
            f"{human(result.optimal['params'])} params on {human(result.optimal['tokens'])} tokens "
            f"({result.optimal['method']}); {result.optimal_fit['fit']} fit "
            f"{human(result.optimal_fit['params'])} / {human(result.optimal_fit['tokens'])}",
        ),
        (
            "time",
            f"{result.gpu_hours:,.1f} GPU-hours on {result.gpus} × {result.gpu['name']} at MFU "
            f"{result.mfu:.0%} → {result.wall_hours:,.1f} h"
            + (f", cost {result.cost:,.0f}" if result.cost is not None else ""),
        ),
        (
            "memory/GPU",
            f"{memory.per_gpu_bytes / GIB:,.1f} GiB of {memory.usable_bytes / GIB:,.1f} usable "
            f"({memory_verdict(memory)}; {memory.strategy}, micro-batch "
            f"{memory.micro_batch}×{memory.seq_len})",
        ),
        ("predicted loss", f"{result.predicted_loss:.3f} ({result.optimal_fit['fit']} fit; comparison only)"),
        ("law", result.law_used),
    ]
    if memory.suggestion:
        rows.insert(6, ("memory fix", f"{suggestion_label(memory)}: {memory.suggestion}"))
    if result.domain:  # continued pre-training: a from-scratch optimum and loss are no yardstick for it
        rows = [row for row in rows if row[0] not in ("compute-optimal", "predicted loss", "law")]
    fit = result.optimal_fit
    if fit.get("path"):
        vs = fit["vs_chinchilla"]
        rows.append(
            (
                "vs Chinchilla",
                f"fitted N* = {vs['params_ratio']:.2f}× and D* = {vs['tokens_ratio']:.2f}× the {vs['method']} rule's "
                f"({fit['tokens_per_param']:.1f} tokens/param)",
            )
        )
    for key, value in rows:
        table.add_row(f"[bold]{key}[/bold]", value)
    for problem in blocking:  # first: what stops training matters more than the figures and other verdicts
        console.print(f"[red]blocking:[/red] {problem}", highlight=False)
    console.print(table)
    for verdict in result.verdicts:
        console.print(f"• {verdict}", highlight=False)
