"""Atomic file writes: a reader sees the old file or the whole new one, never half of it.

Every file tokenmill writes that another step, a rerun or a person reads back (fingerprints, progress, plans,
results, counts, decisions, manifests, the corpus list) goes through ``atomic_open``: the bytes go to a
temporary file next to the target, which then replaces it with ``os.replace`` (atomic on POSIX and Windows
within one file system). A crash or an exception leaves the target as it was; the temporary file is removed
on an exception, and after a hard crash it is recognisable by its name.

One temporary-file convention: ``<name>.<pid>.partial``. The pid keeps two processes that write the same file
(two dedup launches preparing one input list) from sharing a temporary file; the ``.partial`` ending is what
``pipeline.tokenize.shards.remove_shards`` and a person look for.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

PARTIAL_SUFFIX = ".partial"


def partial_path(path: str | os.PathLike[str]) -> str:
    """The temporary name ``atomic_open`` writes ``path`` under: ``<path>.<pid>.partial``."""
    return f"{os.fspath(path)}.{os.getpid()}{PARTIAL_SUFFIX}"


@contextmanager
def atomic_open(
    path: str | os.PathLike[str],
    mode: str = "w",
    opener: Callable[..., IO[Any]] | None = None,
    **kwargs: Any,
) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path`` for writing; on a clean exit it replaces ``path``.

    ``mode`` is ``"w"`` (text, UTF-8 unless ``encoding`` is given) or ``"wb"``/``"wt"``; ``opener`` is
    ``open`` by default, ``gzip.open`` for a compressed file (extra ``kwargs`` go to it). The parent
    folder must exist (callers create it where they always did, so no folder appears that did not before).
    """
    target = os.fspath(path)
    tmp = partial_path(target)
    if "b" not in mode:
        kwargs.setdefault("encoding", "utf-8")
    try:
        with (opener or open)(tmp, mode, **kwargs) as handle:
            yield handle
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    with atomic_open(path, "w") as handle:
        handle.write(text)


def write_json_atomic(path: str | os.PathLike[str], payload: Any, end: str = "", **dumps: Any) -> None:
    """Write ``json.dumps(payload, **dumps) + end`` to ``path`` atomically (callers keep their own indent,
    ``ensure_ascii`` and trailing newline, so every file reads byte for byte as before)."""
    write_text_atomic(path, json.dumps(payload, **dumps) + end)


__all__ = ["PARTIAL_SUFFIX", "atomic_open", "partial_path", "write_json_atomic", "write_text_atomic"]
