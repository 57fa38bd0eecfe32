"""``tokenmill demo``: generate the bundled sample and run the demo recipe end to end (``pipeline`` flow)."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command()
    def demo(
        output: str = typer.Option("runs/demo", help="run directory"),
        sample_dir: str = typer.Option("runs/sample", help="where the generated sample crawl is written"),
        pages: int = typer.Option(400, min=20, help="response records in the generated crawl"),
        seed: int = typer.Option(0, help="seed of the sample generator"),
    ) -> None:
        """Generate a sample crawl + finance folder; curate, dedup, tokenize, plan, train `tiny`, report."""
        from flows.runtime import console, ensure_prefect_backend, repo_root
        from pipeline.sample import generate_sample

        info = generate_sample(sample_dir, seed=seed, pages=pages)
        console.print(f"sample: {info.pages} crawl records, {info.domain_docs} domain documents → {sample_dir}")
        ensure_prefect_backend()
        from flows.commands.pipeline import print_result
        from flows.demo import demo_recipe
        from flows.end_to_end import pipeline

        recipe = demo_recipe(str(Path(repo_root()) / "configs" / "demo.yaml"), sample_dir, output)
        result = pipeline(recipe)
        print_result(result)
        if result.get("train", {}).get("final"):
            from training.generate import generate_sample as generate_text

            # seeded top-k sampling: greedy decoding of a 40-second model loops on its most frequent token
            text = generate_text(
                result["train"]["final"], "The company reported", max_new_tokens=30, top_k=20, temperature=0.8
            )
            console.print(f"[bold]sample from the trained tiny model:[/] {text!r}")
        ablation = maybe_ablate(recipe, console)
        if ablation is not None:
            console.print(f"ablation report: {ablation}")
        console.print(f"[bold green]demo finished[/]: report at {result['report']}")


def maybe_ablate(recipe_path: str, console) -> str | None:
    """Run ``tokenmill ablate`` on the demo recipe when its ``ablate: {enabled: true}`` asks for it (on in
    configs/demo.yaml: 25 s more on two cores); print the table."""
    from pathlib import Path

    from pipeline.config import load_recipe
    from training.ablate import load_ablate_config, render_report, run_ablation

    recipe = load_recipe(recipe_path)
    settings = load_ablate_config(recipe.ablate)
    if not settings.enabled:
        return None
    console.print("ablation (ablate.enabled in the recipe): raw vs curated arms")
    report = run_ablation(recipe, Path(recipe.output_dir) / "ablate", settings, say=console.print)
    console.print(render_report(report), markup=False, soft_wrap=True)  # tables stay one row per line
    return report["report_md"]
