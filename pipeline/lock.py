"""One run lock for every command that writes a folder (curate, pipeline, dedup, tokenize, train, ablate, ladder).

``hold(folder, command)`` takes an advisory ``flock`` on ``<folder>/.tokenmill.lock`` for as long as the command
writes there; a second command on the same folder is refused at once with one line naming the holder (pid,
host, command, start time): ``RunDirError``, exit 2. The kernel drops a ``flock`` when its holder dies (kill -9
included), so a lock left by a dead run is simply taken over, with a note naming it. Re-entrant within one
process: a flow that calls another on the same folder nests.

While a lock is held:

* SIGTERM raises ``SystemExit`` in the main thread (SIGINT already raises ``KeyboardInterrupt``), so the
  command unwinds through its executor: datatrove's ``LocalPipelineExecutor`` runs ranks in ``with Pool()``,
  whose exit terminates *and joins* the workers, so no rank still writes when the lock is released. Measured
  on main ``b7eca32``: with Python's default SIGTERM action the lock went at once and ranks kept writing for
  10-40 s.
* children forked from this process die with it and do not keep its lock file (``pipeline.orphans``); pool
  workers forked by datatrove's forkserver die with the forkserver (``pipeline.local_executor``).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pipeline.errors import TokenmillError
from pipeline.orphans import guard_forks

logger = logging.getLogger(__name__)

#: The lock file of a folder a command writes; it names the holder.
LOCK_NAME = ".tokenmill.lock"

#: Folders this process holds, with a depth: a flow that calls another on the same folder nests.
_held: dict[Path, list] = {}
_previous_sigterm: list = []


class RunDirError(TokenmillError, ValueError):
    """A folder cannot be written as asked: another command holds it, or tokenmill does not own it."""


@contextmanager
def hold(folder: str | Path, command: str) -> Iterator[None]:
    """Hold ``folder`` for ``command`` while the block runs; raise ``RunDirError`` naming the holder if taken."""
    root = Path(folder).resolve()
    if root in _held:
        _held[root][1] += 1
        try:
            yield
        finally:
            _held[root][1] -= 1
        return
    if root.exists() and not root.is_dir():
        raise RunDirError(f"--output {root} is a file, not a directory")
    created = not root.exists()
    root.mkdir(parents=True, exist_ok=True)
    path = root / LOCK_NAME
    _guard_forks_once()
    try:
        handle = _acquire(path, command)
    except RunDirError:
        _remove_if_empty(root, created)
        raise
    _held[root] = [handle, 1]
    _stop_on_sigterm()
    try:
        yield
    finally:
        del _held[root]
        if not _held:
            _restore_sigterm()
        path.unlink(missing_ok=True)  # before the unlock: a waiter then finds a new inode (see _acquire)
        handle.close()
        _remove_if_empty(root, created)


def _remove_if_empty(root: Path, created: bool) -> None:
    """A folder this call created for the lock and nothing else (the command failed before writing) goes again,
    so a refused or failed command leaves no trace; ``rmdir`` removes only an empty folder."""
    if created:
        with contextlib.suppress(OSError):
            root.rmdir()


def check_free(folder: str | Path) -> None:
    """Raise ``RunDirError`` naming the holder if another command holds ``folder`` now; create nothing.

    A CLI asks this before it starts any machinery, so a refused run answers at once; the command itself still
    takes ``hold()`` (this check alone would race)."""
    root = Path(folder).resolve()
    if root in _held:
        return
    try:
        handle = open(root / LOCK_NAME, encoding="utf-8")  # noqa: SIM115 - closed below
    except (FileNotFoundError, NotADirectoryError):
        return
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            raise _in_use(root, handle.read()) from None
        fcntl.flock(handle, fcntl.LOCK_UN)


def held() -> bool:
    """True while this process holds a folder (a run is in progress)."""
    return bool(_held)


def _terminated(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


def _stop_on_sigterm() -> None:
    if threading.current_thread() is not threading.main_thread() or _previous_sigterm:
        return
    with contextlib.suppress(ValueError):
        _previous_sigterm.append(signal.signal(signal.SIGTERM, _terminated))


def _restore_sigterm() -> None:
    if _previous_sigterm and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _previous_sigterm.pop())


_guarded = False


def _guard_forks_once() -> None:
    """Children forked during a run die with it and do not keep its lock (``pipeline.orphans``)."""
    global _guarded
    if not _guarded:
        guard_forks(held, _close_held_in_child)
        _guarded = True


def _close_held_in_child() -> None:
    for handle, _depth in _held.values():
        handle.close()  # this process's copy only: the parent's flock stays
    _held.clear()
    _previous_sigterm.clear()


def _acquire(path: Path, command: str):
    """Open and ``flock`` ``path`` without waiting; raise ``RunDirError`` naming the holder when it is taken."""
    while True:
        handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held until the run ends
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            error = _in_use(path.parent, handle.read())
            handle.close()
            raise error from None
        try:  # the holder may have unlinked the file between our open and our flock: lock the new one instead
            same = os.fstat(handle.fileno()).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        handle.close()
    handle.seek(0)
    previous = handle.read().strip()
    if previous:
        logger.warning("taking over the lock of %s from a run that is gone (%s)", path.parent, _describe(previous))
    handle.seek(0)
    handle.truncate()
    holder = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "command": command,
        "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }
    handle.write(json.dumps(holder) + "\n")
    handle.flush()
    return handle


def _in_use(folder: Path, lock_content: str) -> RunDirError:
    return RunDirError(
        f"{folder} is being written by {_describe(lock_content)}; wait for it to finish or choose another --output"
    )


def _describe(content: str) -> str:
    try:
        holder = json.loads(content)
        command = f"{holder['command']}, " if holder.get("command") else ""
        return f"pid {holder['pid']} on {holder['host']} ({command}started {holder['started']})"
    except (ValueError, KeyError, TypeError, AttributeError):
        return content.strip() or "another tokenmill run"


__all__ = ["LOCK_NAME", "RunDirError", "check_free", "held", "hold"]
