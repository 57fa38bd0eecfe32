"""``tokenmill dedup --input PATH --output DIR [--index PATH] [--rebuild-index]``: dedup an existing dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from flows.errors import print_error
from flows.options import check_prefect_mode, id_key_option, prefect_option, text_key_option
from flows.runtime import console


def register(app: typer.Typer) -> None:
    @app.command()
    def dedup(
        input: Path = typer.Option(  # noqa: A002
            ..., "--input", "-i", help="JSONL (.jsonl, .jsonl.gz, .jsonl.zst) or Parquet file, or a folder of them"
        ),
        output: Path = typer.Option(..., "--output", "-o", help="folder to write deduped/, dropped/, stages/dedup/"),
        index: Optional[Path] = typer.Option(  # noqa: UP045
            None, "--index", help="persistent index folder: drop what earlier runs kept, then add what this one keeps"
        ),
        redis: Optional[str] = typer.Option(  # noqa: UP045
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
        recipe: Optional[Path] = typer.Option(  # noqa: UP045
            None, "--recipe", help="take stages.dedup, sources' priorities and the executor from this recipe"
        ),
        source: Optional[str] = typer.Option(  # noqa: UP045
            None, "--source", help="source name for documents without metadata.source (default: input name)"
        ),
        text_key: str = text_key_option("text"),
        id_key: str = id_key_option("id"),
        priority: Optional[list[str]] = typer.Option(  # noqa: UP045
            None, "--priority", metavar="NAME=N", help="documents of higher-priority sources survive (repeatable)"
        ),
        threshold: Optional[float] = typer.Option(  # noqa: UP045
            None, "--threshold", metavar="J", help="least estimated Jaccard (0.5)"
        ),
        bands: Optional[int] = typer.Option(  # noqa: UP045
            None, "--bands", metavar="N", help="LSH bands of the MinHash signature (32)"
        ),
        rows: Optional[int] = typer.Option(  # noqa: UP045
            None, "--rows", metavar="N", help="rows per LSH band (4); bands x rows hashes per document"
        ),
        tasks: Optional[int] = typer.Option(None, "--tasks", metavar="N", help="ranks (default: one per input file)"),  # noqa: UP045
        workers: int = typer.Option(1, "--workers", metavar="N", help="ranks run at the same time (local executor)"),
        run_name: Optional[str] = typer.Option(  # noqa: UP045
            None, "--run-name", help="name recorded in the index (default: output folder name)"
        ),
        restart: bool = typer.Option(False, "--restart", help="discard earlier dedup state in --output"),
        prefect: str = prefect_option(),
    ) -> None:
        """Exact + MinHash near-duplicate removal, writing kept documents and drop rows like a curation run."""
        from pipeline.dedup.result import DedupResult, dedup_report_md, dedup_warnings

        settings, priorities, executor = _settings(recipe, priority, workers)
        overrides = {"threshold": threshold, "bands": bands, "rows": rows, "tasks": tasks}
        settings.update({k: v for k, v in overrides.items() if v is not None})
        _index_settings(settings, index, redis, redis_basename, rebuild_index, no_index_update, run_name)
        _check(settings, input)
        check_prefect_mode(prefect)
        flow_args = {"source": source, "text_key": text_key, "id_key": id_key, "restart": restart}
        if executor["kind"] != "local":  # a Ray worker resolves relative paths against its own folder
            input, output = input.absolute(), output.absolute()
            if (settings.get("index") or {}).get("path"):
                settings["index"]["path"] = str(Path(settings["index"]["path"]).absolute())
        result = _run(input, output, settings, priorities, executor, prefect, flow_args)
        report = DedupResult.model_validate(result)
        markdown = dedup_report_md(report)
        report_path = Path(output) / "dedup_report.md"
        report_path.write_text(markdown, encoding="utf-8")
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
    from pipeline.dedup.config import recipe_dedup_settings
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
        else:
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
    from pydantic import ValidationError

    from pipeline.config import format_validation_error
    from pipeline.dedup.config import DedupConfig

    try:
        DedupConfig.model_validate(settings)
    except ValidationError as error:
        print_error(format_validation_error(error, "dedup options"))
        raise typer.Exit(2) from None
    if not input.exists():
        print_error(f"{input}: no such file or folder")
        raise typer.Exit(2)


def _run(
    input: Path,  # noqa: A002
    output: Path,
    settings: dict,
    priorities: dict[str, int],
    executor: dict,
    prefect: str,
    flow_args: dict,
) -> dict:
    """Dedup in this process (no Prefect backend) or through the ``dedup`` flow; the result as a dict."""
    from flows.runtime import prefect_backend
    from pipeline import progress
    from pipeline.dedup.cluster import DedupStateError
    from pipeline.dedup.config import DedupConfig
    from pipeline.dedup.index import DedupIndexError

    try:
        with progress.shown():  # one progress line per dedup step instead of datatrove's logs
            if prefect_backend(prefect) == "none":  # what the flow's tasks call, in this process
                from pipeline.config import ExecutorConfig
                from pipeline.dedup.run import dedup_dataset
                from pipeline.executor import executor_factory

                return dedup_dataset(
                    str(input),
                    str(output),
                    DedupConfig.model_validate(settings),
                    source_name=flow_args["source"],
                    source_priority=priorities,
                    executor_factory=executor_factory(ExecutorConfig.model_validate(executor), "dedup"),
                    text_key=flow_args["text_key"],
                    id_key=flow_args["id_key"],
                    restart=flow_args["restart"],
                ).to_dict()
            from flows.dedup import dedup as dedup_flow

            return dedup_flow(
                input=str(input),
                output=str(output),
                config=settings,
                priority=priorities,
                executor=executor,
                **flow_args,
            )
    except (DedupIndexError, DedupStateError, ValueError) as error:
        print_error(str(error))
        raise typer.Exit(2) from None


def _redis_config(value: str, basename: str) -> dict:
    host, _, rest = value.partition(":")
    port, _, db = rest.partition("/")
    if not host or not port.isdigit() or (db and not db.isdigit()):
        raise typer.BadParameter(f"expected HOST:PORT or HOST:PORT/DB, got {value!r}", param_hint="--redis")
    return {"host": host, "port": int(port), "db": int(db or 0), "basename": basename}


def print_summary(result) -> None:  # noqa: ANN001 - a pipeline.dedup.result.DedupResult
    """The dedup result as a rich table of ``dedup_source_rows`` (the rows of report.md's dedup section), then the
    index matches and any accounting problem."""
    from rich.table import Table

    from flows.runtime import console
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
