"""``tokenmill plan``: the Chinchilla budget check from flags or from a YAML file's ``plan:`` section."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer
from pydantic import ValidationError

from flows.model_options import options_from
from training.gpus import GIB
from training.plan.options import PlanOptions, load_plan_options, plan_from_options
from training.plan.planner import check
from training.units import PlanError, human, per_param


def register(app: typer.Typer) -> None:
    app.command(name="plan")(plan_command)


#: what the command line reads as text that PlanOptions parses itself: counts such as 300B or 3e23
COUNTS = ["params", "tokens", "unique_tokens", "base_tokens", "min_tokens", "flops"]


@options_from(PlanOptions, exclude=["tp_size"], text=COUNTS)
def plan_command(
    recipe: Path | None = typer.Argument(
        None, help="YAML file with a top-level 'plan:' mapping of these options (flags given here win)"
    ),
    overrides: dict[str, Any] | None = None,  # one flag per PlanOptions field: --model, --tokens, --gpu …
    output: Path | None = typer.Option(None, help="write plan.json, plan.md and plots/plan.png here"),
    as_json: bool = typer.Option(False, "--json", help="print the plan as JSON (fields: docs/plan.md)"),
    strict: bool = typer.Option(False, "--check", help="exit 1 when check() finds blocking problems"),
) -> None:
    """Check a planned LLM against a Chinchilla compute/data budget: FLOPs, optimal N/D, memory, time, verdict."""
    overrides = overrides or {}
    # a PlanError (a bad flag, file or budget) goes to flows.cli's one handler: the error line, exit 2
    options = load_plan_options(recipe, overrides) if recipe is not None else _validate_flags(PlanOptions, overrides)
    result = plan_from_options(options, origin=str(recipe) if recipe else None)
    blocking = check(result)
    for warning in result.warnings:
        typer.echo(f"warning: {warning}", err=True)
    if output is not None:
        from training.plan.report import write_report

        paths = write_report(result, output)
        if not as_json:
            typer.echo(f"wrote {paths.markdown}, {paths.json}, {paths.png}", err=True)
    if as_json:
        sys.stdout.write(json.dumps(result.to_dict() | {"blocking": blocking}, indent=2, ensure_ascii=False) + "\n")
    else:
        _print_summary(result, blocking)
    if strict and blocking:
        raise typer.Exit(1)


def _validate_flags(model_cls: Any, overrides: dict[str, Any]) -> Any:
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
    from training.plan.report import flops_convention, memory_verdict, suggestion_label

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
