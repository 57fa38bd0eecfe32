"""``tokenmill serve``: serve prefect.yaml's deployments from this process (no work pool, no worker)."""

from __future__ import annotations

from typing import Optional

import typer


def register(app: typer.Typer) -> None:
    @app.command()
    def serve(
        only: Optional[list[str]] = typer.Option(  # noqa: UP045
            None, "--only", help="serve only these deployments, e.g. --only 'curate/one-off'"
        ),
    ) -> None:
        """Serve curate/nightly-crawl, curate/one-off, pipeline/one-off and train/one-off (needs a Prefect server)."""
        from prefect import serve as prefect_serve

        from flows.runtime import configured_api_url, console
        from flows.serve import deployments

        if not configured_api_url():
            console.print(
                "[red]error:[/] serving needs a Prefect server: `prefect server start --host 127.0.0.1` and "
                "`prefect config set PREFECT_API_URL=http://127.0.0.1:4200/api`"
            )
            raise typer.Exit(2)
        prefect_serve(*deployments(only=only))
