"""How a command reports a user error: one line, one way, for every command.

``print_error`` is what ``flows.cli`` prints for a ``TokenmillError`` (``pipeline.errors``) that reaches it, and
what a command prints for the few errors it catches itself (a missing file, a bad flag). This module imports
nothing at the top: command modules import it when ``tokenmill`` registers them, so it must not cost
``tokenmill --help`` the ~90 ms that ``flows.runtime`` (rich's console, urllib) takes to import.
"""

from __future__ import annotations


def print_error(message: str) -> None:
    """``error: <message>`` on stderr (``error:`` in red on a terminal). The message is printed as written: no
    markup, no emoji codes, and no wrapping, so a path or a key stays on one line and can be copied."""
    from rich.markup import escape

    from flows.runtime import console  # deferred: see the module docstring

    console.print("[red]error:[/] " + escape(message), highlight=False, soft_wrap=True, emoji=False)
