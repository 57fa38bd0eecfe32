"""Options more than one command takes, defined once (this module imports only typer: ``--help`` stays fast)."""

from __future__ import annotations

from typing import Any

import typer

# The option factories return typer.Option's own type, Any: a parameter default typer reads, so the parameter
# keeps its declared type (str, str | None) for mypy.

#: ``--prefect`` choices: where a CLI run's flow is recorded (``flows.runtime.prefect_backend``).
PREFECT_MODES = ("auto", "embedded", "off")


def prefect_option() -> Any:
    """``--prefect MODE`` (curate, dedup): auto, embedded or off."""
    return typer.Option(
        "auto",
        "--prefect",
        metavar="MODE",
        help="auto: record the run in the configured Prefect server, run without Prefect when none is "
        "configured; embedded: a temporary server for this call; off: never Prefect",
    )


def check_prefect_mode(mode: str) -> None:
    """A usage error (exit 2, typer's message) for a ``--prefect`` value that is not one of ``PREFECT_MODES``."""
    if mode not in PREFECT_MODES:
        raise typer.BadParameter(f"expected one of {', '.join(PREFECT_MODES)}, got {mode!r}", param_hint="--prefect")


def text_key_option(default: str | None = None, scope: str = "JSONL/Parquet input") -> Any:
    """``--text-key FIELD`` (curate, dedup, tokenize): the row field holding the text."""
    return typer.Option(
        default, "--text-key", metavar="FIELD", help=f"{scope}: the row field holding the text (default: text)"
    )


def id_key_option(default: str | None = None, scope: str = "JSONL/Parquet input") -> Any:
    """``--id-key FIELD`` (curate, dedup, tokenize): the row field holding the document id."""
    return typer.Option(
        default, "--id-key", metavar="FIELD", help=f"{scope}: the row field holding the document id (default: id)"
    )
