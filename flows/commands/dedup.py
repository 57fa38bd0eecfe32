"""``tokenmill dedup --input PATH --output DIR [--index PATH] [--rebuild-index]``: dedup an existing dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from pydantic import ValidationError
from rich.markup import escape
from rich.table import Table

from flows.errors import CommandError
from flows.model_options import options_from
from flows.options import check_prefect_mode, id_key_option, prefect_option, text_key_option
from flows.runtime import console, prefect_backend
from pipeline.dedup.config import DedupConfig, recipe_dedup_settings
from pipeline.errors import TokenmillError


def register(app: typer.Typer) -> None:
    app.command()(dedup)


@options_from(
    DedupConfig,
    only=["threshold", "bands", "rows", "tasks"],
    metavars={"threshold": "J", "bands": "N", "rows": "N", "tasks": "N"},
)
def dedup(
    input: Path = typer.Option(  # noqa: A002
        ..., "--input", "-i", help="JSONL (.jsonl, .jsonl.gz, .jsonl.zst) or Parquet file, or a folder of them"
    ),
    output: Path = typer.Option(..., "--output", "-o", help="folder to write deduped/, dropped/, stages/dedup/"),
    index: Path | None = typer.Option(
        None, "--index", help="persistent index folder: drop what earlier runs kept, then add what this one keeps"
    ),
    redis: str | None = typer.Option(
        None,
        "--redis",
        metavar="HOST:PORT[/DB]",
        help="keep the index in Redis instead: HOST:PORT or HOST:PORT/DB (key prefix: --redis-basename)",
    ),
    redis_basename: str = typer.Option(
        "tokenmill", "--redis-basename", metavar="PREFIX", help="key prefix of the index in Redis"
    ),
    rebuild_index: bool = typer.Option(
        False, "--rebuild-index", help="set an existing (e.g. corrupt) index aside and start a new one"
    ),
    no_index_update: bool = typer.Option(False, "--no-index-update", help="compare with the index, add nothing"),
    recipe: Path | None = typer.Option(
        None, "--recipe", help="take stages.dedup, sources' priorities and the executor from this recipe"
    ),
    source: str | None = typer.Option(
        None, "--source", help="source name for documents without metadata.source (default: input name)"
    ),
    text_key: str = text_key_option("text"),
    id_key: str = id_key_option("id"),
    priority: list[str] | None = typer.Option(
        None, "--priority", metavar="NAME=N", help="documents of higher-priority sources survive (repeatable)"
    ),
    overrides: dict[str, Any] | None = None,  # --threshold, --bands, --rows, --tasks (DedupConfig's fields)
    workers: int = typer.Option(1, "--workers", metavar="N", help="ranks run at the same time (local executor)"),
    run_name: str | None = typer.Option(
        None, "--run-name", help="name recorded in the index (default: output folder name)"
    ),
    restart: bool = typer.Option(False, "--restart", help="discard earlier dedup state in --output"),
    prefect: str = prefect_option(),
) -> None:
    """Exact + MinHash near-duplicate removal, writing kept documents and drop rows like a curation run."""
    from pipeline.dedup.result import DedupResult, dedup_report_md, dedup_warnings

    settings, priorities, executor = _settings(recipe, priority, workers)
    settings.update(overrides or {})
    _index_settings(settings, index, redis, redis_basename, rebuild_index, no_index_update, run_name)
    _check(settings, input)
    check_prefect_mode(prefect)
    if executor["kind"] != "local":  # a Ray worker resolves relative paths against its own folder
        input, output = input.absolute(), output.absolute()  # noqa: A001 - the --input parameter, made absolute
        if (settings.get("index") or {}).get("path"):
            settings["index"]["path"] = str(Path(settings["index"]["path"]).absolute())
    job: dict[str, Any] = {"input": str(input), "output": str(output), "config": settings, "priority": priorities}
    job |= {"executor": executor, "source": source, "text_key": text_key, "id_key": id_key, "restart": restart}
    report = DedupResult.model_validate(_run(job, prefect))
    report_path = Path(output) / "dedup_report.md"
    report_path.write_text(dedup_report_md(report), encoding="utf-8")
    print_summary(report)
    index_settings = settings.get("index") or {}
    redis_index = index_settings.get("redis")
    index_label = index_settings.get("path") or (
        f"redis {redis_index['host']}:{redis_index['port']}/{redis_index.get('basename', 'tokenmill')}"
        if redis_index
        else None
    )
    for warning in dedup_warnings(report, text_key, index_label):  # as curate words them
        console.print(f"[yellow]warning:[/] {escape(warning)}")
    console.print(f"kept: {Path(output) / 'deduped'}   drops: {Path(output) / 'dropped'}   report: {report_path}")
    if not report.accounting_ok:
        raise typer.Exit(1)


def _settings(recipe: Path | None, priority: list[str] | None, workers: int) -> tuple[dict, dict[str, int], dict]:
    """Dedup settings, source priorities and the executor: the recipe's (when given), then ``--priority``."""
    from training.recipe import load_recipe

    settings: dict = {}
    priorities: dict[str, int] = {}
    executor = {"kind": "local", "tasks": 1, "workers": workers}
    if recipe is not None:
        loaded = load_recipe(recipe)  # a RecipeError goes to flows.cli's one handler: error line, exit 2
        settings, priorities = recipe_dedup_settings(loaded)
        executor = loaded.executor.model_dump()
    for value in priority or []:
        name, sep, number = value.partition("=")
        if not sep or not name or not number.lstrip("-").isdigit():
            raise typer.BadParameter(f"expected NAME=INTEGER, got {value!r}", param_hint="--priority")
        priorities[name] = int(number)
    return settings, priorities, executor


def _index_settings(
    settings: dict,
    index: Path | None,
    redis: str | None,
    redis_basename: str,
    rebuild_index: bool,
    no_index_update: bool,
    run_name: str | None,
) -> None:
    """``settings["index"]`` from ``--index``/``--redis`` and their flags (in place)."""
    if index is not None and redis is not None:
        raise typer.BadParameter("give --index or --redis, not both", param_hint="--index")
    if index is not None or redis is not None:
        index_cfg: dict = dict(settings.get("index") or {})
        index_cfg.pop("path", None)
        index_cfg.pop("redis", None)
        if index is not None:
            index_cfg["path"] = str(index)
        elif redis is not None:
            index_cfg["redis"] = _redis_config(redis, redis_basename)
        index_cfg["rebuild"] = rebuild_index
        index_cfg["update"] = not no_index_update
        if run_name:
            index_cfg["run_name"] = run_name
        settings["index"] = index_cfg
    elif rebuild_index:
        raise typer.BadParameter("--rebuild-index needs --index or --redis", param_hint="--rebuild-index")


def _check(settings: dict, input: Path) -> None:  # noqa: A002
    """Refuse invalid settings and a missing input before anything runs (exit 2)."""

    from pipeline.config import format_validation_error

    try:
        DedupConfig.model_validate(settings)
    except ValidationError as error:
        raise CommandError(format_validation_error(error, "dedup options")) from None
    if not input.exists():
        raise CommandError(f"{input}: no such file or folder")


def _run(job: dict[str, Any], prefect: str) -> dict[str, Any]:
    """The dedup ``job`` (the ``dedup`` flow's parameters): the flow's own sequence (``flows.dedup_job``) in this
    process without a Prefect backend, else through the flow, which runs that sequence with its steps as tasks."""
    from flows.dedup_job import dedup_job
    from pipeline import progress

    try:
        with progress.shown():  # one progress line per dedup step instead of datatrove's logs
            if prefect_backend(prefect) == "none":
                return dedup_job(**job).run().to_dict()
            from flows.dedup import dedup as dedup_flow

            return dedup_flow(**job)
    except TokenmillError:
        raise  # flows.cli's one handler: the error line, exit 2
    except ValueError as error:  # a dataset file of another kind, an invalid setting: a user error too
        raise CommandError(str(error)) from None


def _redis_config(value: str, basename: str) -> dict:
    host, _, rest = value.partition(":")
    port, _, db = rest.partition("/")
    if not host or not port.isdigit() or (db and not db.isdigit()):
        raise typer.BadParameter(f"expected HOST:PORT or HOST:PORT/DB, got {value!r}", param_hint="--redis")
    return {"host": host, "port": int(port), "db": int(db or 0), "basename": basename}


def print_summary(result) -> None:  # a pipeline.dedup.result.DedupResult
    """The dedup result as a rich table of ``dedup_source_rows`` (the rows of report.md's dedup section), then the
    index matches and any accounting problem."""

    from pipeline.dedup.result import DEDUP_COLUMNS, dedup_source_rows

    table = Table(title="dedup")
    for column in DEDUP_COLUMNS:
        table.add_column(column, justify="left" if column == "source" else "right")
    for row in dedup_source_rows(result):
        table.add_row(*row)
    console.print(table)
    if result.index:
        console.print(
            f"index: {result.index.get('matched_exact', 0)} exact + {result.index.get('matched_near', 0)} "
            f"near matches with earlier runs; {result.index.get('entries_added', 0)} entries added"
        )
    for problem in result.problems:
        console.print(f"[red]accounting:[/] {escape(problem)}")
