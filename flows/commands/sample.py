"""``tokenmill sample``: write the bundled demo sample without running anything on it."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    @app.command()
    def sample(
        out: str = typer.Option(
            "runs/sample", "--output", "--out", metavar="DIR", help="output folder (--out: the old spelling)"
        ),
        seed: int = typer.Option(0, metavar="N", help="seed of the generator: same seed, same bytes"),
        pages: int = typer.Option(400, min=1, metavar="N", help="response records in the crawl (all kinds)"),
        warc_files: int = typer.Option(4, min=1, metavar="N", help="WARC files the crawl is split into"),
        domain_docs: int = typer.Option(60, min=1, metavar="N", help="documents in the domain folder"),
    ) -> None:
        """Write the demo sample: a WARC crawl, a domain-document folder and truth.json."""
        from sample import generate_sample

        info = generate_sample(out, seed=seed, pages=pages, warc_files=warc_files, domain_docs=domain_docs)
        typer.echo(f"{info.pages} crawl records, {info.domain_docs} domain docs → {info.truth_path}")
