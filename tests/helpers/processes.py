"""Processes of a command under test, from Linux's /proc (the kill -9 and SIGTERM tests)."""

from __future__ import annotations

import os


def descendants(pid: int) -> set[int]:
    """Every live descendant of ``pid`` (children of all its threads, recursively)."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except FileNotFoundError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{parent}/task/{task}/children", encoding="ascii") as handle:
                    children = {int(c) for c in handle.read().split()}
            except FileNotFoundError:
                continue
            todo += sorted(children - found)
            found |= children
    return found
