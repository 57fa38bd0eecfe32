"""The ``tokenmill`` command line.

Each module in ``flows/commands/`` defines ``register(app)`` and adds its own commands, so a new
command is one new file. Command modules import heavy libraries (datatrove, torch, Prefect) inside the
command functions only, which keeps ``tokenmill --help`` fast; the config models whose fields are flags
(``flows.model_options``: dedup, tokenize, plan, train) are imported at registration, since typer reads every
command's options when it builds the CLI: pydantic and those models cost ``--help`` about 0.2 CPU-s
(0.30 → 0.50 CPU-s on the 2-core VM, ``/usr/bin/time tokenmill --help``, 2026-12-03).
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import re
import sys
from importlib.metadata import PackageNotFoundError, version

import typer
from typer.core import TyperArgument, TyperGroup, TyperOption

import flows  # noqa: F401  (sets telemetry off before anything imports Prefect)
import flows.commands as commands
from flows.errors import os_error_message, print_error
from flows.runtime import console
from pipeline.errors import TokenmillError


class _TokenmillGroup(TyperGroup):
    """The root command group: a ``TokenmillError`` from any command (a bad recipe, unreadable input, a refused
    plan) is caught here, once, printed by ``print_error`` and ends the command with exit status 2. Commands
    catch only what is not a ``TokenmillError`` (a missing file, a pydantic error of their flags) or what
    ends with another status.

    An ``OSError`` is the machine's answer, not a bug of tokenmill (a full disk, ``--output`` that is a file, a
    permission): it is a user error too, one line naming the path and the cause (``os_error_message``), exit 2;
    the same command resumes once the cause is gone. ``--debug`` shows its traceback."""

    def invoke(self, ctx):  # click's signature
        args = [*getattr(ctx, "_protected_args", []), *ctx.args]  # consumed by the call: read --output first
        try:
            return super().invoke(ctx)
        except TokenmillError as error:
            print_error(str(error))
            raise typer.Exit(2) from None
        except OSError as error:
            if os.environ.get("TOKENMILL_DEBUG") == "1":
                raise
            print_error(os_error_message(error, _output_of(args)))
            raise typer.Exit(2) from None


def _output_of(args: list[str]) -> str | None:
    """The value of ``--output``/``-o`` in a command's arguments, ``None`` without one."""
    for i, arg in enumerate(args):
        if arg.startswith("--output="):
            return arg.split("=", 1)[1]
        if arg in ("--output", "-o") and i + 1 < len(args):
            return args[i + 1]
    return None


app = typer.Typer(
    cls=_TokenmillGroup,
    name="tokenmill",
    help="Raw crawls and domain documents → curated, deduplicated, PII-free token shards → a budget-checked LLM.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


_PLAIN = {"str": "TEXT", "int": "INTEGER", "float": "FLOAT", "bool": "BOOLEAN", "path": "PATH", "directory": "DIR"}


def _plain_metavars() -> None:
    """Show click's plain metavars in ``--help``: nothing after a flag, else the option's own ``metavar``, else
    ``TEXT``/``INTEGER``/``FLOAT``/``PATH``.

    typer 0.29 prints each parameter's Python type instead (``<str>``, ``<path>``, and ``<bool>`` after flags such
    as ``--overwrite`` that take no value) and has no setting for it, so the one method that makes that label is
    wrapped; everything else about the help screen is typer's.
    """

    def plain(label: str | None) -> str | None:
        if label is None:
            return None
        many = label.endswith("...") or label.startswith("<list[")
        bare = re.sub(r"^list\[(.*)\]$", r"\1", label.removesuffix("...").strip("<>"))
        return _PLAIN.get(bare.lower(), bare.upper()) + ("..." if many else "")

    for cls in (TyperOption, TyperArgument):
        original = cls.display_type_rich
        if getattr(original, "_tokenmill_plain", False):
            continue

        def display_type_rich(self, ctx, _original=original):  # typer's signature
            if self.metavar is not None:
                return self.metavar
            if getattr(self, "is_flag", False):
                return None
            return plain(_original(self, ctx))

        display_type_rich._tokenmill_plain = True  # type: ignore[attr-defined]  # a marker: patched once per class
        cls.display_type_rich = display_type_rich  # type: ignore[method-assign]  # typer/click have no metavar hook


def _register_commands() -> None:
    for module_info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if module_info.name.startswith("_"):
            continue
        module = importlib.import_module(f"flows.commands.{module_info.name}")
        module.register(app)


def _version(show: bool) -> None:
    if show:
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
    debug: bool = typer.Option(
        False, "--debug", help="show the full traceback of an unexpected error (default: one line and exit 1)"
    ),
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="print datatrove's per-rank logs and Prefect's INFO lines too"
    ),
) -> None:
    """Raw crawls and domain documents → curated, deduplicated, PII-free token shards → a budget-checked LLM."""
    if debug:
        os.environ["TOKENMILL_DEBUG"] = "1"
    quiet_console(verbose)


def quiet_console(verbose: bool) -> None:
    """The console contract: a line per stage, warnings and the report path; the rest goes to the run's logs.

    datatrove's per-rank blocks are replaced by progress lines (``pipeline.progress``; ``-v`` turns that off, so
    they print again). Prefect's console handler drops to WARNING through the variable its logging.yml reads
    (``PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL``): the flow and task run logs still reach the Prefect API, and its
    UI shows them. Set before any command imports Prefect; a value the user set wins.
    """
    if verbose:
        os.environ["TOKENMILL_PROGRESS"] = "off"
        os.environ.setdefault("PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", "INFO")
    else:
        os.environ.setdefault("PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", "WARNING")


_plain_metavars()
_register_commands()


def main() -> None:
    """The console entry point. User errors (``TokenmillError``) end in ``_TokenmillGroup`` (one ``error:`` line,
    exit 2); an error nobody anticipated is one ``error:`` line and exit 1, with its traceback behind ``--debug``."""
    try:
        app()
    except Exception as error:  # the last line of defence of the console entry point
        if os.environ.get("TOKENMILL_DEBUG") == "1" or "--debug" in sys.argv[1:]:
            raise
        from pipeline.redact import default_redactor

        # the message may quote a document (a stage's error on its text): redacted like everything written
        print_error(f"{type(error).__name__}: {default_redactor().redact(str(error))[0]}")
        console.print("(an unexpected error: run again with --debug for the traceback, and please report it)")
        sys.exit(1)


if __name__ == "__main__":
    main()
