"""``tokenmill curate RECIPE [--input PATH] [--output DIR]``."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer


def register(app: typer.Typer) -> None:
    @app.command()
    def curate(
        recipe: Path = typer.Argument(..., help="recipe YAML (see configs/web.yaml, configs/domain.yaml)"),
        input: Optional[str] = typer.Option(  # noqa: A002, UP045
            None, "--input", help="run the recipe's stages on this input instead of its sources (kind auto-detected)"
        ),
        output: Optional[str] = typer.Option(None, "--output", help="run directory (default: recipe output_dir)"),  # noqa: UP045
        text_key: Optional[str] = typer.Option(  # noqa: UP045
            None, "--text-key", metavar="FIELD", help="with --input: the row field holding the text (default: text)"
        ),
        id_key: Optional[str] = typer.Option(  # noqa: UP045
            None, "--id-key", metavar="FIELD", help="with --input: the row field holding the document id (default: id)"
        ),
        overwrite: bool = typer.Option(
            False, help="first remove what earlier runs wrote to the run directory (never files it did not write)"
        ),
    ) -> None:
        """Read → extract → language ID → quality → PII (→ dedup) with a full account of every drop."""
        from flows.runtime import console, ensure_prefect_backend
        from pipeline.config import RecipeError
        from pipeline.layout import RunDirError, RunLayout
        from pipeline.readers import InputError
        from pipeline.run import resolve_run

        errors = (RecipeError, FileNotFoundError, InputError, RunDirError)
        try:  # a typo fails here, before Prefect (and its server) start
            resolved = resolve_run(str(recipe), input, output, text_key, id_key)
            if overwrite:
                RunLayout.at(resolved.output_dir).check_clearable()
        except errors as error:
            console.print(f"[red]error:[/] {error}")
            raise typer.Exit(2) from None
        ensure_prefect_backend()
        from flows.curate import curate as curate_flow

        try:
            result = curate_flow(
                str(recipe), input=input, output=output, overwrite=overwrite, text_key=text_key, id_key=id_key
            )
        except errors as error:
            console.print(f"[red]error:[/] {error}")
            raise typer.Exit(2) from None
        print_summary(result)


def print_summary(result: dict) -> None:
    from rich.table import Table

    from flows.runtime import console

    table = Table(title="curation")
    for column in ("source", "read", "kept", "dropped", "balanced"):
        table.add_column(column, justify="right" if column in ("read", "kept", "dropped") else "left")
    for src in result["sources"]:
        table.add_row(
            src["source"],
            f"{src['read']:,}",
            f"{src['kept_final']:,}",
            f"{src['dropped_total']:,}",
            "yes" if src["balanced"] else "NO",
        )
    console.print(table)
    for warning in result.get("warnings") or []:
        console.print(f"[bold yellow]warning:[/] {warning}", highlight=False)
    console.print(f"report: {result['report']}")
