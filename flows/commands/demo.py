"""``tokenmill demo``: generate the bundled sample and run the demo recipe end to end."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command()
    def demo(
        output: str = typer.Option("runs/demo", help="run directory"),
        sample_dir: str = typer.Option("runs/sample", help="where the generated sample crawl is written"),
        pages: int = typer.Option(400, min=20, help="pages in the generated crawl"),
        seed: int = typer.Option(0, help="seed of the sample generator"),
    ) -> None:
        """Generate a sample crawl + domain folder and run configs/demo.yaml on it."""
        from flows.runtime import console, ensure_prefect_backend, repo_root
        from pipeline.sample import generate_sample

        info = generate_sample(sample_dir, seed=seed, pages=pages)
        console.print(f"sample written to {sample_dir}: {info}")
        recipe_path = Path(repo_root()) / "configs" / "demo.yaml"
        ensure_prefect_backend()
        from flows.commands.curate import print_summary
        from flows.demo import demo_flow

        result = demo_flow(str(recipe_path), sample_dir=sample_dir, output=output)
        print_summary(result["curate"])
        console.print(f"[bold green]demo finished[/]: report at {result['report']}")
