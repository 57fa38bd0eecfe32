"""The ``tokenmill`` command line.

Each module in ``flows/commands/`` defines ``register(app)`` and adds its own commands, so a new
command is one new file. Command modules import heavy libraries inside the command functions only,
which keeps ``tokenmill --help`` fast.
"""

from __future__ import annotations

import importlib
import pkgutil

import typer

import flows  # noqa: F401  (sets telemetry off before anything imports Prefect)

app = typer.Typer(
    name="tokenmill",
    help="Raw crawls and domain documents → curated, deduplicated, PII-free token shards → a budget-checked LLM.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register_commands() -> None:
    import flows.commands as commands

    for module_info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if module_info.name.startswith("_"):
            continue
        module = importlib.import_module(f"flows.commands.{module_info.name}")
        module.register(app)


def _version(show: bool) -> None:
    if show:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"tokenmill {version('tokenmill')}")
        except PackageNotFoundError:  # a checkout used without installing it
            typer.echo("tokenmill (not installed)")
        raise typer.Exit()


@app.callback()
def _main(
    show_version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="print the version and exit"
    ),
) -> None:
    """Raw crawls and domain documents → curated, deduplicated, PII-free token shards → a budget-checked LLM."""


_register_commands()


def main() -> None:
    app()


if __name__ == "__main__":
    main()
