"""``tokenmill pipeline RECIPE``: curate → dedup → tokenize → plan (gate) → train → report, with cached stages."""

from __future__ import annotations

from typing import Optional

import typer

from flows.commands.curate import print_summary
from flows.errors import CommandError


def register(app: typer.Typer) -> None:
    @app.command("pipeline")
    def pipeline_command(
        recipe: str = typer.Argument(..., help="recipe YAML with stages, plan: and train: sections"),
        output: Optional[str] = typer.Option(None, "--output", help="run directory (default: recipe output_dir)"),  # noqa: UP045
        force: bool = typer.Option(False, "--force", help="train even when the budget check finds blocking problems"),
    ) -> None:
        """Run a recipe end to end; a rerun skips the stages whose config, inputs and code are unchanged."""
        from flows.runtime import ensure_prefect_backend
        from pipeline.layout import RunLayout
        from pipeline.run import resolve_run
        from training.recipe import load_recipe

        try:  # a typo or a folder another run holds fails here, before Prefect (and its server) start
            layout = RunLayout.at(resolve_run(load_recipe(recipe), None, output).output_dir)
            layout.check_unlocked()
            layout.check_clearable("pipeline")  # a folder tokenmill did not create: refused, untouched
        except FileNotFoundError as error:  # a TokenmillError goes to flows.cli's one handler
            raise CommandError(str(error)) from None
        ensure_prefect_backend()
        from flows.end_to_end import pipeline
        from pipeline import progress

        try:
            with progress.shown():  # one progress line per stage instead of datatrove's per-rank logs
                result = pipeline(recipe, output=output, force=force)
        except FileNotFoundError as error:  # not the OSError line: the input's own words
            raise CommandError(str(error)) from None
        print_result(result)


def print_result(result: dict) -> None:
    from flows.runtime import console

    curation = result["curation"]
    print_summary({"sources": curation["sources"], "warnings": curation.get("warnings"), "report": result["report"]})
    if result.get("dedup"):
        console.print(f"dedup: {_dedup_line(result['dedup'])}")
    if result.get("tokenize"):
        from pipeline.shards.format import ShardManifest

        manifest = ShardManifest.from_dict(result["tokenize"])  # the flow's result holds the manifest's JSON
        console.print(f"shards: vocab {manifest.vocab_size}, dtype {manifest.dtype}")
    if result.get("plan"):
        console.print("plan: " + "; ".join(result["plan"]["plan"].get("verdicts", [])))
    if result.get("train"):
        train = result["train"]
        console.print(
            f"train: {train.get('step')} steps, final loss {_rounded(train.get('final_loss'))}, "
            f"model {train.get('final')}"
        )


def _rounded(value: object) -> object:
    return f"{value:.3f}" if isinstance(value, float) else value


def _dedup_line(dedup: dict) -> str:
    return f"kept {dedup.get('kept')}, dropped {dedup.get('dropped')} ({dedup.get('rules')})"
