"""``tokenmill scaling fit``: re-fit the scaling law L(N, D) = E + A/N^α + B/D^β from the team's own runs."""

from __future__ import annotations

from pathlib import Path

import typer

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
    import json
    import sys

    from training.scaling import ScalingFitError, fit_runs, read_runs, summary_lines, write_fit

    try:
        data = read_runs(runs)
        result = fit_runs(data, bootstrap=bootstrap, seed=seed)
    except ScalingFitError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from None
    for note in result.notes:
        typer.echo(f"warning: {note}", err=True)
    if output is not None:
        paths = write_fit(result, data, output)
        typer.echo(f"wrote {paths['json']}, {paths['png']}", err=True)
    if as_json:
        sys.stdout.write(json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        typer.echo("\n".join(line for line in summary_lines(result) if not line.startswith("note: ")))
