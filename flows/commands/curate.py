"""``tokenmill curate RECIPE [--input PATH] [--output DIR]``."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from flows.errors import CommandError
from flows.options import check_prefect_mode, id_key_option, prefect_option, text_key_option


def register(app: typer.Typer) -> None:
    @app.command()
    def curate(
        recipe: Path = typer.Argument(..., help="recipe YAML (see configs/web.yaml, configs/domain.yaml)"),
        input: Optional[str] = typer.Option(  # noqa: A002, UP045
            None,
            "--input",
            metavar="PATH",
            help="run the recipe's stages on this input instead of its sources (kind auto-detected)",
        ),
        output: Optional[str] = typer.Option(  # noqa: UP045
            None, "--output", metavar="DIR", help="run directory (default: recipe output_dir)"
        ),
        text_key: Optional[str] = text_key_option(scope="with --input"),  # noqa: UP045
        id_key: Optional[str] = id_key_option(scope="with --input"),  # noqa: UP045
        overwrite: bool = typer.Option(
            False, help="first remove what earlier runs wrote to the run directory (never files it did not write)"
        ),
        prefect: str = prefect_option(),
    ) -> None:
        """Read → extract → language ID → quality → PII (→ dedup) with a full account of every drop."""
        from flows.runtime import prefect_backend
        from pipeline import progress
        from pipeline.layout import RunLayout
        from pipeline.run import curate_run, resolve_run
        from training.recipe import load_recipe

        errors = FileNotFoundError  # a TokenmillError (recipe, input, run folder) goes to flows.cli's one handler
        try:  # a typo fails here, before Prefect (and its server) start
            resolved = resolve_run(load_recipe(recipe), input, output, text_key, id_key)
            RunLayout.at(resolved.output_dir).check_unlocked()  # another run on it: say so now, not in a flow
            RunLayout.at(resolved.output_dir).check_clearable()  # a folder tokenmill did not create: refused
        except errors as error:
            raise CommandError(str(error)) from None
        check_prefect_mode(prefect)
        try:
            with progress.shown():  # one progress line per stage instead of datatrove's per-rank logs
                if prefect_backend(prefect) == "none":  # the pipeline calls of the flow's tasks, in this process
                    with RunLayout.at(resolved.output_dir).lock():
                        layout, summary, _ = curate_run(resolved, overwrite=overwrite)
                    result = {"run_dir": str(layout.root), "report": str(layout.report_md), **summary}
                else:
                    from flows.curate import curate as curate_flow

                    result = curate_flow(
                        str(recipe), input=input, output=output, overwrite=overwrite, text_key=text_key, id_key=id_key
                    )
        except errors as error:
            raise CommandError(str(error)) from None
        print_summary(result)


def print_summary(result: dict) -> None:
    """The curation summary as a rich table of ``pipeline.curate.report.funnel.source_rows`` (the rows report.md and the
    ``curation-funnel`` artifact show), then the run's warnings and the report path."""
    from rich.table import Table

    from flows.runtime import console
    from pipeline.curate.report.funnel import SOURCE_COLUMNS, source_rows

    table = Table(title="curation")
    for column in SOURCE_COLUMNS:
        table.add_column(column, justify="left" if column in ("source", "balanced") else "right")
    for row in source_rows(result["sources"]):
        table.add_row(*row)
    console.print(table)
    for warning in result.get("warnings") or []:
        console.print(f"[bold yellow]warning:[/] {warning}", highlight=False)
    console.print(f"report: {result['report']}")
