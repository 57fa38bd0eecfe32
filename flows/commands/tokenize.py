"""``tokenmill tokenize`` (curated documents → mixed token shards) and ``tokenmill shards inspect|verify``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from flows.errors import print_error
from flows.model_options import options_from
from flows.tokenize_job import TokenizeJob, tokenize_job, tokenize_shards
from pipeline.tokenize.config import TokenizeConfig

if TYPE_CHECKING:
    from pipeline.shards.format import ShardManifest

shards_app = typer.Typer(help="Look at token shards written by `tokenmill tokenize`.", no_args_is_help=True)


def _pairs(values: list[str] | None, option: str) -> dict[str, float]:
    result: dict[str, float] = {}
    for value in values or []:
        name, sep, number = value.partition("=")
        try:
            if not sep or not name:
                raise ValueError
            result[name] = float(number)
        except ValueError:
            raise typer.BadParameter(f"expected NAME=NUMBER, got {value!r}", param_hint=option) from None
    return result


def _write_shards(job: TokenizeJob) -> ShardManifest:
    """``tokenize_shards`` for the command: an output another command writes, or that tokenmill did not create, is
    refused first (flows.cli's handler: one line, exit 2, nothing touched); an input error is one line, exit 1."""
    from pipeline import progress
    from pipeline.lock import RunDirError

    try:
        with progress.shown():  # one progress line per encode stage instead of datatrove's per-rank logs
            return tokenize_shards(job)
    except RunDirError:
        raise  # flows.cli's handler: one line, exit 2 (a folder not ours, another run holds it)
    except ValueError as error:  # every tokenmill input error is a ValueError naming its file or source
        print_error(str(error))  # exit 1, as before: the run itself failed
        raise typer.Exit(1) from None


@options_from(
    TokenizeConfig,
    only=[
        "tokenizer", "vocab_size", "heldout_share", "seed", "max_shard_tokens", "target_tokens", "text_key", "id_key",
        "tasks", "workers",
    ],
    metavars={
        "tokenizer": "PATH", "vocab_size": "N", "heldout_share": "SHARE", "seed": "N", "max_shard_tokens": "N",
        "target_tokens": "N", "text_key": "FIELD", "id_key": "FIELD", "tasks": "N", "workers": "N",
    },
)  # fmt: skip
def tokenize(
    input_path: Path = typer.Option(..., "--input", "-i", help="curation run dir, curated/ folder, or JSONL/Parquet"),
    output: Path = typer.Option(..., "--output", "-o", help="shards folder to write (e.g. runs/demo/shards)"),
    recipe: Path | None = typer.Option(
        None,
        "--recipe",
        metavar="RECIPE",
        help="take source weights/epochs, stages.tokenize and a slurm/ray executor from this recipe",
    ),
    weight: list[str] | None = typer.Option(
        None, "--weight", metavar="NAME=SHARE", help="token share of a source, e.g. finance=0.51 (repeatable)"
    ),
    epochs: list[str] | None = typer.Option(
        None, "--epochs", metavar="NAME=TIMES", help="epochs of a source, e.g. finance=2 (repeatable)"
    ),
    overrides: dict[str, Any] | None = None,  # TokenizeConfig's fields: --tokenizer, --vocab-size, --seed …
) -> None:
    """Train or reuse a tokenizer, mix the sources and write shuffled token shards with a manifest."""
    from pipeline.console import make_console

    console = make_console()
    overrides = overrides or {}
    if "tokenizer" in overrides and "vocab_size" in overrides:
        raise typer.BadParameter("give exactly one of --tokenizer PATH or --vocab-size N", param_hint="--tokenizer")
    if "vocab_size" in overrides:  # a size given here trains a tokenizer, whatever the recipe reuses
        overrides["tokenizer"] = None
    job = tokenize_job(input_path, output, recipe, overrides)
    if not {"tokenizer", "vocab_size"} & job.config.keys():  # neither a flag nor the recipe's stages.tokenize
        raise typer.BadParameter(
            "give exactly one of --tokenizer PATH or --vocab-size N (or a --recipe with stages.tokenize)",
            param_hint="--tokenizer",
        )
    for name, value in _pairs(weight, "--weight").items():
        job.sources[name] = {"weight": value, "epochs": None}
    for name, value in _pairs(epochs, "--epochs").items():
        job.sources[name] = {"weight": None, "epochs": value}
    _print_summary(console, _write_shards(job), job.output)


def _print_summary(console, manifest: ShardManifest, folder: Path) -> None:  # a rich Console
    from rich.markup import escape
    from rich.table import Table

    from pipeline.tokenize.report import SHARD_COLUMNS, shard_rows

    tok = manifest.tokenizer_info
    console.print(
        f"[bold]{folder}[/bold]  tokenizer {tok.path} ({'trained' if tok.trained else 'reused'}, "
        f"vocab {tok.vocab_size:,}, sha256 {(tok.sha256 or '')[:12]}…)  dtype {manifest.dtype}  "
        f"eos {tok.eos_token!r}={tok.eos_id}  fingerprint {manifest.fingerprint or None}"
    )
    table = Table(*SHARD_COLUMNS)  # the rows of report.md's shards section and the token-mix artifact
    for row in shard_rows(manifest):
        table.add_row(*row)
    console.print(table)
    langs = Table("source", "language", "documents", "bytes/token")
    for name, entry in manifest.sources.items():
        for lang, stats in entry.languages.items():
            langs.add_row(name, lang, f"{stats.documents:,}", f"{stats.bytes_per_token}")
    console.print(langs)
    files = Table("split", "files", "documents", "tokens")
    for split, split_entry in manifest.splits.items():
        files.add_row(split, str(len(split_entry.files)), f"{split_entry.documents:,}", f"{split_entry.tokens:,}")
    console.print(files)
    for warning in manifest.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(warning)}", soft_wrap=True)


@shards_app.command("inspect")
def inspect(
    folder: Path = typer.Argument(..., help="shards folder (holds manifest.json)"),
    split: str = typer.Option("train", help="split to sample from: train, heldout/<source>"),
    doc: int = typer.Option(0, help="document number in the split's first file"),
    chars: int = typer.Option(600, help="characters of the decoded sample to show"),
    show_files: bool = typer.Option(False, "--files", help="list every shard file"),
) -> None:
    """Print the manifest and decode one document."""
    from pipeline.console import make_console
    from pipeline.shards.format import ShardError, ShardManifest
    from pipeline.tokenize.verify import load_shard_tokenizer, read_document

    console = make_console(stderr=False)
    try:
        manifest = ShardManifest.load(folder)
        _print_summary(console, manifest, folder)
        splits = manifest.splits
        if show_files:
            for name, entry in splits.items():
                for item in entry.files:
                    console.print(f"  {name}: {item.path}  {item.documents:,} docs  {item.tokens:,} tokens")
        files = splits[split].files if split in splits else ()
        if not files:
            raise ShardError(f"{folder}: no split {split!r} (has: {', '.join(sorted(splits))})")
        first = files[0]
        if not 0 <= doc < first.documents:
            raise ShardError(f"{first.path} has documents 0..{first.documents - 1}, not {doc}")
        ids = read_document(folder, first.path, doc, manifest)
        text = load_shard_tokenizer(folder).decode(ids.tolist(), skip_special_tokens=False)
        console.rule(f"{first.path} document {doc}: {len(ids):,} tokens, {len(text):,} characters")
        console.print(text[:chars] + ("…" if len(text) > chars else ""), markup=False, highlight=False)
    except (ShardError, ValueError) as error:
        print_error(str(error))
        raise typer.Exit(1) from None


@shards_app.command("verify")
def verify(
    folder: Path = typer.Argument(..., help="shards folder (holds manifest.json)"),
    input_path: Path | None = typer.Option(None, "--input", "-i", help="the tokenized input, to prove the round trip"),
) -> None:
    """Check every shard and decode every document; with --input, compare with the input texts."""

    from pipeline.console import make_console
    from pipeline.tokenize.verify import verify_shards

    console = make_console(stderr=False)

    try:
        report = verify_shards(folder, input_path)
    except ValueError as error:
        print_error(str(error))
        raise typer.Exit(1) from None
    console.print_json(json.dumps(report.to_dict()))
    if not report.ok:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("tokenize")(tokenize)
    app.add_typer(shards_app, name="shards")
