"""Processes a run forks must not outlive it: a SIGKILLed CLI otherwise leaves them running.

Measured (``tests/flows/test_run_safety.py::test_kill_9_of_a_curate_run_leaves_no_process_behind``): after
``kill -9`` of ``tokenmill curate`` the ``multiprocess`` manager that datatrove's local executor forks kept
serving on its socket, re-parented to init — and, forked while the run held its directory's lock, it kept
that lock's file open, so the next run on the folder was refused as "in use". Processes started by
exec (the forkserver, the resource tracker) already exit when their pipe to the parent closes.

A ``fork`` during a run therefore gives the child (``os.register_at_fork``) a watcher thread that ends it
when its parent is gone, and closes the lock files the parent holds (closing a duplicate never releases
the parent's ``flock``). Linux's ``PR_SET_PDEATHSIG`` is not used: it fires when the forking *thread*
exits, and datatrove forks from worker threads.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable

POLL_S = 1.0
GRACE_S = 5.0

_installed = False
_active: list[Callable[[], bool]] = []  # "is a run in progress?" checks; the child hook acts only then
_close_in_child: list[Callable[[], None]] = []


def exit_with_parent(parent: int | None = None, poll_s: float = POLL_S, grace_s: float = GRACE_S) -> threading.Thread:
    """Start a daemon thread that sends this process SIGTERM once ``parent`` (default: its parent now) is no
    longer its parent, i.e. has died, and exits hard after ``grace_s`` if that did not end it."""
    parent = os.getppid() if parent is None else parent

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(grace_s)
        os._exit(1)

    thread = threading.Thread(target=watch, daemon=True, name="exit-with-parent")
    thread.start()
    return thread


def _after_fork_in_child() -> None:
    if not any(check() for check in _active):
        return
    for close in _close_in_child:
        close()
    exit_with_parent()


def guard_forks(active: Callable[[], bool], close_in_child: Callable[[], None]) -> None:
    """From now on, a child forked while ``active()`` is true runs ``close_in_child`` and dies with its parent."""
    global _installed
    _active.append(active)
    _close_in_child.append(close_in_child)
    if not _installed:
        os.register_at_fork(after_in_child=_after_fork_in_child)
        _installed = True
