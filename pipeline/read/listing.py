"""Which listed input files a reader may open: the one check every file reader (folder, WARC, JSONL, Parquet,
and dedup's and tokenize's row readers built on them) makes before it opens a file.

datatrove lists a folder with fsspec and hands every entry that is not a directory to ``read_file``. Opening a
FIFO named ``x.txt`` blocks for ever (no writer ever comes), and a socket or a device is no document either; a
run folder inside the input folder (its ``report.md``, ``curated/``, ``dropped/``) would be read back as input
by the next run. So before a file is opened, ``skip_reason`` looks at it without opening it (``os.lstat``, then
``os.stat`` for a symlink) and the file is skipped and counted instead:

- ``not_regular_<kind>`` (``fifo``, ``socket``, ``char_device``, ``block_device``, ``broken_symlink``,
  ``other``): not a regular file, never opened;
- ``skipped_run_output``: below a tokenmill run folder (one holding tokenmill's ``config.yaml`` or its lock
  file), including the run's own ``--output``;
- ``symlinks_followed`` (counted, then read): a symlink to a regular file;
- ``undecodable_names`` (counted, then read): a name that is not valid UTF-8. Python hands such a name over
  with surrogate escapes (PEP 383), which no UTF-8 writer accepts, so the ids and the ``file`` field of its
  documents show it escaped (``display_name``: ``b\\xff.txt``) while the file is opened by its real name.

Only local folders are checked (a remote filesystem has no FIFOs). ``pipeline.accounting.input_file_counts``
turns the counters into the report's ``Input files`` table.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from datatrove.data import Document, DocumentsPipeline

from pipeline.atomic import atomic_open
from pipeline.layout import LOCK_NAME, RUN_HEADER
from pipeline.ownership import RECORD_NAME

if TYPE_CHECKING:
    from datatrove.io import DataFolder

#: counter prefix of a listed entry that is not a regular file (``not_regular_fifo``…)
NOT_REGULAR = "not_regular_"
RUN_OUTPUT = "skipped_run_output"
SYMLINKS = "symlinks_followed"
UNDECODABLE = "undecodable_names"

_KINDS = (
    (stat.S_ISFIFO, "fifo"),
    (stat.S_ISSOCK, "socket"),
    (stat.S_ISCHR, "char_device"),
    (stat.S_ISBLK, "block_device"),
    (stat.S_ISDIR, "directory"),
)


def display_name(path: str) -> str:
    """``path`` as it can be written anywhere (JSON, Markdown, logs): bytes of a name that are not UTF-8
    (surrogate escapes, PEP 383) become ``\\xNN``; a valid name comes back unchanged."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(path).decode("utf-8", "backslashreplace")
    return path


def file_kind(full_path: str) -> tuple[str | None, bool]:
    """(``None`` for a regular file, else its kind; whether it is a symlink), from ``lstat``/``stat`` only."""
    try:
        info = os.lstat(full_path)
    except OSError:
        return "missing", False
    link = stat.S_ISLNK(info.st_mode)
    if link:
        try:
            info = os.stat(full_path)
        except OSError:
            return "broken_symlink", True
    if stat.S_ISREG(info.st_mode):
        return None, link
    return next((kind for test, kind in _KINDS if test(info.st_mode)), "other"), link


def is_run_folder(folder: str) -> bool:
    """A folder tokenmill writes a run into: it has the record of what tokenmill wrote there
    (``pipeline.ownership``), its ``config.yaml`` starts with tokenmill's header, or it holds the run lock (a first
    run holds it before it writes anything else)."""
    if os.path.lexists(os.path.join(folder, LOCK_NAME)) or os.path.lexists(os.path.join(folder, RECORD_NAME)):
        return True
    try:
        with open(os.path.join(folder, "config.yaml"), "rb") as handle:
            return handle.read(len(RUN_HEADER)) == RUN_HEADER.encode()
    except OSError:
        return False


class InputCheck:
    """``skip_reason`` for the files of one local input folder, with the run-folder answers cached per folder."""

    def __init__(self, root: str):
        self.root = os.path.abspath(root)
        self._runs: dict[str, bool] = {}

    def inside_run(self, full_path: str) -> bool:
        """Whether a folder strictly below the input root and above ``full_path`` is a run folder."""
        relative = os.path.relpath(os.path.dirname(os.path.abspath(full_path)), self.root)
        if relative == "." or relative.startswith(".."):
            return False
        folder = self.root
        for part in relative.split(os.sep):
            folder = os.path.join(folder, part)
            if folder not in self._runs:
                self._runs[folder] = is_run_folder(folder)
            if self._runs[folder]:
                return True
        return False

    def skip_reason(self, full_path: str) -> tuple[str | None, bool]:
        """(the counter of a file not to open, or ``None``; whether it is a symlink to a regular file)."""
        kind, link = file_kind(full_path)
        if kind is not None:
            return NOT_REGULAR + kind, False
        if self.inside_run(full_path):
            return RUN_OUTPUT, False
        return None, link


def _local_root(data_folder) -> str | None:
    from fsspec.implementations.local import LocalFileSystem

    fs = getattr(data_folder, "fs", None)
    return data_folder.path if isinstance(fs, LocalFileSystem) else None


def readable_files(data_folder, names: list[str]) -> list[str]:
    """The names (relative to a datatrove ``DataFolder``) a reader will open: ``names`` less the ones
    ``InputCheck`` skips. Used where a run is planned (is there any input at all, how many ranks)."""
    root = _local_root(data_folder)
    if root is None:
        return list(names)
    check = InputCheck(root)
    return [name for name in names if check.skip_reason(os.path.join(root, name))[0] is None]


def write_paths_file(path: str, names: list[str]) -> None:
    """A datatrove ``paths_file`` (one name a line) that keeps a name that is not UTF-8 as its own bytes."""
    with atomic_open(path, "w", errors="surrogateescape") as handle:
        handle.write("".join(name + "\n" for name in names))


def read_paths_file(path: str) -> list[str]:
    """The names of a ``paths_file`` written by ``write_paths_file`` (blank lines skipped)."""
    with open(path, encoding="utf-8", errors="surrogateescape") as handle:
        return [line.rstrip("\n") for line in handle if line.strip()]


class CheckedFileReader:
    """Put before datatrove's ``BaseDiskReader`` in a reader's bases: ``read_file`` checks the file (module
    docstring) and hands it to ``read_checked_file`` (what a reader implements) only if it may be opened.

    A skipped file is still one of datatrove's ``input_files`` (it was listed); it yields nothing and is not
    ``empty_files``, so ``listed = with documents + skipped + empty`` holds."""

    data_folder: DataFolder
    _input_check: InputCheck | None = None
    # datatrove's, from BaseDiskReader after this class in a reader's bases (annotations only: no attribute here)
    stat_update: Callable[..., None]
    update_doc_stats: Callable[[Document], None]
    read_files_shard: Callable[[list[str]], DocumentsPipeline]
    _log_limit_scope: Callable[[int, int], None]

    def read_checked_file(self, filepath: str) -> DocumentsPipeline:
        raise NotImplementedError

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        """datatrove's ``BaseDiskReader.run``, except that a local ``paths_file`` is read by ``read_paths_file``:
        datatrove reads it as strict UTF-8, which fails on a name that is not UTF-8 (module docstring). The
        shard is the same: the names ``listing[rank::world_size]``."""
        paths_file = getattr(self, "paths_file", None)
        if not isinstance(paths_file, str) or "://" in paths_file:
            yield from super().run(data, rank, world_size)  # type: ignore[misc]  # BaseDiskReader.run, a later base
            return
        if data:
            yield from data
        shard = read_paths_file(paths_file)[rank::world_size]
        self._log_limit_scope(rank, world_size)
        for document in self.read_files_shard(shard):
            self.update_doc_stats(document)
            yield document

    def read_file(self, filepath: str) -> DocumentsPipeline:
        root = _local_root(self.data_folder)
        if root is not None:
            if self._input_check is None or self._input_check.root != os.path.abspath(root):
                self._input_check = InputCheck(root)
            reason, link = self._input_check.skip_reason(os.path.join(root, filepath))
            if reason is not None:
                self.stat_update(reason, unit="input_file")
                return
            if link:
                self.stat_update(SYMLINKS, unit="input_file")
        shown = display_name(filepath)
        if shown == filepath:
            yield from self.read_checked_file(filepath)
            return
        self.stat_update(UNDECODABLE, unit="input_file")
        yield from _renamed(self.read_checked_file(filepath), filepath, shown)


def _renamed(documents: DocumentsPipeline, real: str, shown: str) -> Iterator[Document]:
    """The documents of a file with an undecodable name, its name escaped wherever a reader put it."""
    for document in documents:
        document.id = display_name(document.id.replace(real, shown))
        for key, value in document.metadata.items():
            if isinstance(value, str):
                document.metadata[key] = display_name(value.replace(real, shown))
        yield document
