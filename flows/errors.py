"""How a command reports a user error: one line, one way, for every command.

``print_error`` is what ``flows.cli`` prints for a ``TokenmillError`` (``pipeline.errors``) that reaches it, and
what a command prints for the few errors that end with another status. ``CommandError`` is the ``TokenmillError``
a command raises for what it refuses itself (a missing file, a bad flag): exit 2 through that one handler.
``os_error_message`` is the line for an ``OSError`` of the machine (a full disk, ``--output`` that is a file),
which ``flows.cli`` treats as a user error too. This module imports only ``pipeline.errors`` at the top: command
modules import it when ``tokenmill`` registers them, so it must not cost ``tokenmill --help`` the import of
``flows.runtime`` (rich's console, urllib): 0.1–1 s by machine and load (benchmarks/micro_timings.py).
"""

from __future__ import annotations

import errno as errno_names

from pipeline.errors import TokenmillError


class CommandError(TokenmillError):
    """What a command refuses on its own (a missing input, flags its config model rejects). Raised, not printed:
    ``flows.cli`` prints it as every ``TokenmillError`` (``print_error``: one ``error:`` line) and exits 2."""


def print_error(message: str) -> None:
    """``error: <message>`` on stderr (``error:`` in red on a terminal). The message is printed as written: no
    markup, no emoji codes, and no wrapping, so a path or a key stays on one line and can be copied."""
    from rich.markup import escape

    from flows.runtime import console  # deferred: see the module docstring

    console.print("[red]error:[/] " + escape(message), highlight=False, soft_wrap=True, emoji=False)


#: what to do about an ``OSError`` a command did not expect, by errno name; the default covers the rest
_OS_HINTS = {
    "ENOSPC": "free space there (or choose another --output)",
    "EDQUOT": "free space there (or choose another --output)",
    "EROFS": "choose a writable --output",
    "EACCES": "fix the permissions or choose another path",
    "EPERM": "fix the permissions or choose another path",
    "EEXIST": "a file is in the way where a folder is needed: choose another --output",
    "ENOTDIR": "a file is in the way where a folder is needed: choose another --output",
    "EISDIR": "a folder is where a file is needed",
}


def os_error_message(error: OSError, output: str | None = None) -> str:
    """One line for an ``OSError`` that reached the command line (a full disk, ``--output`` that is a file, a
    read-only or unreadable path): the path and the cause, what to do, and that a rerun resumes.

    The path is the error's own (``filename``), else the command's ``--output`` (a full disk in the middle of a
    write names no file). Work already finished is kept by every command (completed ranks, stage fingerprints),
    so once the cause is gone the same command resumes."""
    name = errno_names.errorcode.get(error.errno or -1, "")
    cause = error.strerror or str(error) or type(error).__name__
    cause = f"{cause} ({name})" if name else cause
    where = error.filename if error.filename is not None else (f"--output {output}" if output else None)
    if error.filename2 is not None:
        where = f"{where} -> {error.filename2}"
    hint = _OS_HINTS.get(name, "fix the cause")
    head = f"{where}: {cause}" if where else cause
    return f"{head}; {hint}, and run the command again: finished work is kept and it resumes"
