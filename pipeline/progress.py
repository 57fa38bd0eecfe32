"""Progress of a datatrove stage (curate, dedup, tokenize): documents, documents/s, ETA, on one line.

datatrove's ``LocalPipelineExecutor`` prints a block of log lines per rank (pipeline, stats) and nothing while a
rank works. ``ProgressExecutor`` replaces that, for the command line only:

- every rank passes its documents through a ``ProgressCounter`` (inserted after the reader steps) that writes
  ``<logging_dir>/progress/<rank>.json`` -- documents so far, the input file and byte offset it is at -- at
  most once a second. Files, not a shared counter: ranks are separate processes (a forkserver pool), and a
  file per rank stays honest however many run at once, survives a killed rank and needs no extra process;
- the main process polls those files (``ProgressMonitor``) and draws one line: a ``rich`` progress bar when
  stderr is a terminal, a log line every ``LOG_EVERY_S`` (30) seconds otherwise (and a closing line when it printed
  any). The ETA comes from the share of the input bytes read (a WARC document carries its record's offset;
  other readers advance per file) or, when the caller knows it, from the number of documents;
- datatrove's console output is lowered to warnings (its per-rank logs still go to ``logs/task_*.log``).

Off unless a command turns it on (``enable``/``shown``), so library calls and tests stay quiet. ``TOKENMILL_PROGRESS``
overrides what the command asks: ``off``, ``bar`` or ``log``.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import datatrove.executor.base as base
from datatrove.pipeline.readers.base import BaseReader
from datatrove.utils.logging import DATATROVE_COLORIZE_LOG_FILES, DATATROVE_COLORIZE_LOGS, logger, setup_default_logger
from loguru._better_exceptions import ExceptionFormatter

from pipeline.atomic import write_json_atomic
from pipeline.local_executor import GuardedLocalExecutor
from pipeline.redact import redact_name, save_executor_json

#: Seconds between progress lines when stderr is not a terminal (a log file, CI); ``TOKENMILL_PROGRESS_EVERY``
#: overrides it.
LOG_EVERY_S = 30.0


def log_every_s_default() -> float:
    value = os.environ.get("TOKENMILL_PROGRESS_EVERY")
    if value is None:
        return LOG_EVERY_S
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise ValueError(f"TOKENMILL_PROGRESS_EVERY: expected seconds > 0, got {value!r}")
    return seconds


#: Seconds between a rank's progress writes (a small JSON file each time).
WRITE_EVERY_S = 1.0

_mode: str = "off"


def enable(mode: str = "auto") -> str:
    """Turn progress on for this process: ``auto`` (bar on a terminal, log lines otherwise), ``bar``, ``log``
    or ``off``. ``TOKENMILL_PROGRESS`` wins when set. Returns the mode in force."""
    global _mode
    mode = os.environ.get("TOKENMILL_PROGRESS", mode)
    if mode == "auto":
        mode = "bar" if sys.stderr.isatty() else "log"
    if mode not in ("off", "bar", "log"):
        raise ValueError(f"progress mode: expected auto, off, bar or log, got {mode!r}")
    _mode = mode
    return mode


def mode() -> str:
    return _mode


@contextlib.contextmanager
def shown(requested: str = "auto") -> Iterator[str]:
    """``enable(requested)`` for the duration, then the mode before (a command turns progress on for its run
    only: a test that invokes the CLI leaves no global switch behind)."""
    global _mode
    saved = _mode
    try:
        yield enable(requested)
    finally:
        _mode = saved


class ProgressCounter:
    """Pipeline element that passes documents on and records how far its rank got (see module docstring).

    A plain callable, not a ``PipelineStep``: datatrove's stats (``stats.json``) only list steps, so the
    counter leaves them as they were.
    """

    def __init__(self, folder: str, every_s: float = WRITE_EVERY_S, clock: Callable[[], float] = time.monotonic):
        self.folder, self.every_s, self.clock = folder, every_s, clock

    def __repr__(self) -> str:
        return "📈 progress counter"

    def __call__(self, data: Any, rank: int = 0, world_size: int = 1) -> Iterator[Any]:
        state: dict[str, Any] = {"docs": 0, "files": 0, "file": None, "offset": 0, "done": False}
        last = self.clock()
        self._write(rank, state)
        for document in data or ():
            metadata = getattr(document, "metadata", None) or {}
            file = metadata.get("file")
            if file is not None and file != state["file"]:
                if state["file"] is not None:
                    state["files"] += 1
                state["file"], state["offset"] = file, 0
            offset = metadata.get("offset")
            if isinstance(offset, int):
                state["offset"] = offset
            state["docs"] += 1
            now = self.clock()
            if now - last >= self.every_s:
                self._write(rank, state)
                last = now
            yield document
        state["done"] = True
        self._write(rank, state)

    def _write(self, rank: int, state: dict[str, Any]) -> None:
        os.makedirs(self.folder, exist_ok=True)
        path = os.path.join(self.folder, f"{rank:05d}.json")
        # the file name as every file a run writes shows it: a component holding a value hashed (docs/pii.md)
        write_json_atomic(path, {**state, "file": redact_name(state["file"]) if state["file"] else state["file"]})


@dataclass
class Snapshot:
    """What the ranks' progress files say at one moment."""

    docs: int = 0
    ranks_done: int = 0
    ranks: int = 0
    fraction: float | None = None  # share of the input read, when the input bytes are known


def read_progress(folder: str, ranks: int, rank_files: list[list[tuple[str, int]]] | None = None) -> Snapshot:
    """Sum the ranks' progress files; ``rank_files[rank]``: (file name, size) of that rank's input, in order."""
    snapshot = Snapshot(ranks=ranks)
    total_bytes = sum(size for files in rank_files or [] for _, size in files)
    done_bytes = 0
    for rank in range(ranks):
        try:
            with open(os.path.join(folder, f"{rank:05d}.json"), encoding="utf-8") as handle:
                state = json.load(handle)
        except (OSError, ValueError):
            continue
        snapshot.docs += int(state.get("docs", 0))
        files = rank_files[rank] if rank_files and rank < len(rank_files) else []
        if state.get("done"):
            snapshot.ranks_done += 1
            done_bytes += sum(size for _, size in files)
            continue
        passed = int(state.get("files", 0))
        done_bytes += sum(size for _, size in files[:passed])
        if passed < len(files):
            done_bytes += min(int(state.get("offset", 0)), files[passed][1])
    if total_bytes:
        snapshot.fraction = min(1.0, done_bytes / total_bytes)
    return snapshot


def eta_seconds(snapshot: Snapshot, start: Snapshot, elapsed: float, total_docs: int | None) -> float | None:
    """Seconds left at the rate of this run so far (earlier runs' ranks, resumed, do not count as speed)."""
    if elapsed <= 0:
        return None
    if total_docs:
        rate = (snapshot.docs - start.docs) / elapsed
        return max(0.0, (total_docs - snapshot.docs) / rate) if rate > 0 else None
    if snapshot.fraction is not None and start.fraction is not None and snapshot.fraction > start.fraction:
        speed = (snapshot.fraction - start.fraction) / elapsed
        return max(0.0, (1.0 - snapshot.fraction) / speed)
    return None


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "--:--"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60:02d}:{rest % 60:02d}"


def progress_line(label: str, snapshot: Snapshot, start: Snapshot, elapsed: float, total_docs: int | None) -> str:
    """One log line: ``curate web: 12,345 docs, 410 docs/s, 2/4 ranks done, 61% of input, ETA 00:42``."""
    rate = (snapshot.docs - start.docs) / elapsed if elapsed > 0 else 0.0
    parts = [f"{label}: {snapshot.docs:,} docs" + (f" of {total_docs:,}" if total_docs else "")]
    parts.append(f"{rate:,.0f} docs/s")
    parts.append(f"{snapshot.ranks_done}/{snapshot.ranks} ranks done")
    if snapshot.fraction is not None and not total_docs:
        parts.append(f"{snapshot.fraction:.0%} of input")
    parts.append(f"ETA {_clock(eta_seconds(snapshot, start, elapsed, total_docs))}")
    return ", ".join(parts)


def _to_stderr(line: str) -> None:
    # not print(): inside a flow with log_prints, Prefect turns print() into an INFO log record, which the
    # console contract keeps off the console (flows.cli.quiet_console): the stage's one line would vanish
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


class ProgressMonitor:
    """Poll a stage's progress files from the main process and show them (bar or log lines)."""

    def __init__(
        self,
        label: str,
        folder: str,
        ranks: int,
        rank_files: list[list[tuple[str, int]]] | None = None,
        total_docs: int | None = None,
        display: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        emit: Callable[[str], None] | None = None,
        log_every_s: float | None = None,
    ):
        self.label, self.folder, self.ranks = label, folder, ranks
        self.rank_files, self.total_docs = rank_files, total_docs
        self.display = display or _mode
        self.clock, self.log_every_s = clock, log_every_s or log_every_s_default()
        self.emit = emit or _to_stderr
        self.start = read_progress(folder, ranks, rank_files)
        self.started = clock()
        self.last_log = self.started
        self.lines = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._bar: Any = None

    def poll(self) -> Snapshot:
        """Read the files once and update the display (the log line only when its interval has passed)."""
        snapshot = read_progress(self.folder, self.ranks, self.rank_files)
        now = self.clock()
        elapsed = now - self.started
        if self.display == "bar" and self._bar is not None:
            progress, task = self._bar
            total = self.total_docs or (snapshot.docs / snapshot.fraction if snapshot.fraction else None)
            rate = (snapshot.docs - self.start.docs) / elapsed if elapsed > 0 else 0.0
            eta = _clock(eta_seconds(snapshot, self.start, elapsed, self.total_docs))
            progress.update(
                task,
                completed=snapshot.docs,
                total=total,
                rate=f"{rate:,.0f} docs/s",
                ranks=f"{snapshot.ranks_done}/{snapshot.ranks} ranks",
                eta=f"ETA {eta}",
            )
        elif self.display == "log" and now - self.last_log >= self.log_every_s:
            self.emit(progress_line(self.label, snapshot, self.start, elapsed, self.total_docs))
            self.last_log = now
            self.lines += 1
        return snapshot

    def finish(self) -> Snapshot:
        snapshot = self.poll()
        if self.display == "log":  # the console contract: every stage ends with one line, however short
            elapsed = self.clock() - self.started
            rate = (snapshot.docs - self.start.docs) / elapsed if elapsed > 0 else 0.0
            self.emit(f"{self.label}: {snapshot.docs:,} docs in {_clock(elapsed)} ({rate:,.0f} docs/s), done")
        return snapshot

    def __enter__(self) -> ProgressMonitor:
        if self.display == "off":
            return self
        if self.display == "bar":
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            from pipeline.console import make_console

            progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                TextColumn("{task.fields[ranks]}"),
                TextColumn("{task.fields[eta]}"),
                console=make_console(),
                transient=False,
            )
            task = progress.add_task(self.label, total=self.total_docs, rate="", ranks="", eta="")
            progress.start()
            self._bar = (progress, task)
        self._thread = threading.Thread(target=self._loop, name="tokenmill-progress", daemon=True)
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.wait(0.5 if self.display == "bar" else 1.0):
            with contextlib.suppress(Exception):  # a display problem never stops the stage
                self.poll()

    def __exit__(self, *exc: object) -> None:
        if self.display == "off":
            return
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with contextlib.suppress(Exception):
            self.finish()
        if self._bar is not None:
            self._bar[0].stop()


# --- datatrove's console output, lowered while progress shows -------------------------------------------------


def _quiet_add_task_logger(logging_dir, rank: int, local_rank: int = 0, node_rank: int = -1):
    """datatrove's ``add_task_logger`` with the console sink at WARNING (ERROR for other local ranks) instead of
    INFO: the per-rank pipeline and stats blocks still go to ``logs/task_<rank>.log``. The console line of a
    rank's error carries no traceback (the log file keeps it): the command prints the error once, as one line
    (``flows.cli``), and a full disk is no reason for a page of frames."""
    logger.remove()
    # backslashreplace: datatrove logs each input file's name, and one that is not UTF-8 must not break the log
    logfile = logging_dir.open(f"logs/task_{rank:05d}.log", "w", errors="backslashreplace")
    node_prefix = f"[NODE {node_rank}] " if node_rank != -1 else ""
    fmt = (
        f"{node_prefix}{{time:YYYY-MM-DD HH:mm:ss.SSS}} | <level>{{level: <8}}</level> | "
        "{name}:{function}:{line} - <level>{message}</level>"
    )
    level = "WARNING" if local_rank == 0 else "ERROR"
    # diagnose off whatever LOGURU_DIAGNOSE says: it would print the failing document's text (docs/pii.md);
    # a callable format on the console: loguru then appends no "{exception}" (a string format always does)
    logger.add(
        sys.stderr, colorize=DATATROVE_COLORIZE_LOGS, level=level, format=lambda _record: fmt + "\n", diagnose=False
    )
    logger.add(logfile, colorize=DATATROVE_COLORIZE_LOG_FILES, level="DEBUG", format=fmt, diagnose=False)
    logger.info(f"Launching pipeline for {rank=}")
    return logfile


def _quiet_close_task_logger(logfile) -> None:
    logger.complete()
    _quiet_default_logger()
    logfile.close()


def _quiet_default_logger() -> None:
    logger.remove()
    logger.add(sys.stderr, colorize=DATATROVE_COLORIZE_LOGS, level="WARNING", diagnose=False)


def _cache_loguru_lib_dirs() -> None:
    """Compute loguru's list of library folders once per process instead of once per sink.

    loguru builds an ``ExceptionFormatter`` for every ``logger.add``, and each asks ``sysconfig`` for the paths
    of every install scheme (``_get_lib_dirs``: 3.6 ms); datatrove and the quiet loggers here add three to
    five sinks per rank and per executor run, ~0.12 CPU-s of a 20-document ``tokenmill curate`` (py-spy). The
    list depends only on ``sys.path`` and the interpreter, which a run does not change."""
    original = ExceptionFormatter.__dict__.get("_get_lib_dirs")
    if isinstance(original, staticmethod) and not getattr(original.__func__, "_tokenmill_cached", False):
        cached = functools.cache(original.__func__)
        # a marker on the function and a patched private method of loguru's: neither has a typed way
        cached._tokenmill_cached = True  # type: ignore[attr-defined]
        ExceptionFormatter._get_lib_dirs = staticmethod(cached)  # type: ignore[method-assign]


_quiet_depth = 0


@contextlib.contextmanager
def quiet_datatrove() -> Iterator[None]:
    """Lower datatrove's console logging to warnings for the duration (its log files keep everything).

    datatrove has no setting for this: ``_run_for_rank`` calls ``add_task_logger``/``close_task_logger``
    (module globals of ``datatrove.executor.base``), which add an INFO console sink. Those two names are
    swapped for quiet copies and restored when the outermost of nested uses ends (ranks run in this process
    when ``workers`` is 1, inside the executor's own use).
    """
    global _quiet_depth

    if _quiet_depth:
        _quiet_depth += 1
        try:
            yield
        finally:
            _quiet_depth -= 1
        return
    _cache_loguru_lib_dirs()
    saved = base.add_task_logger, base.close_task_logger
    base.add_task_logger, base.close_task_logger = _quiet_add_task_logger, _quiet_close_task_logger
    _quiet_default_logger()
    _quiet_depth = 1
    try:
        yield
    finally:
        _quiet_depth = 0
        base.add_task_logger, base.close_task_logger = saved
        setup_default_logger()


def _is_reader(step: Any) -> bool:
    return isinstance(step, BaseReader)


def with_counter(pipeline: list, folder: str) -> list:
    """``pipeline`` with a ``ProgressCounter`` after its leading reader steps (none if it has no reader)."""
    position = 0
    while position < len(pipeline) and _is_reader(pipeline[position]):
        position += 1
    if position == 0:
        return list(pipeline)
    return [*pipeline[:position], ProgressCounter(folder), *pipeline[position:]]


def rank_files(pipeline: list, ranks: int) -> list[list[tuple[str, int]]] | None:
    """(name, size) of each rank's input files, as datatrove shards them (``listing[rank::ranks]``), for a
    pipeline whose first step is a file reader; ``None`` when that cannot be known (rows sharding, paths files)."""
    reader = pipeline[0] if pipeline else None
    folder = getattr(reader, "data_folder", None)
    if reader is None or folder is None or getattr(reader, "paths_file", None):
        return None
    try:
        listing = folder.list_files(recursive=reader.recursive, glob_pattern=reader.glob_pattern)
        sizes = [(name, int(folder.size(name))) for name in listing]
    except Exception:  # noqa: BLE001 - progress is best effort; the run itself reports real input problems
        return None
    return [sizes[rank::ranks] for rank in range(ranks)]


class ProgressExecutor(GuardedLocalExecutor):
    """datatrove's local executor with a progress line instead of per-rank console logs (module docstring)."""

    pipeline: list[Any]  # datatrove's executor attribute, replaced in __init__

    def __init__(self, *args: Any, label: str = "run", total_docs: int | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.label, self.total_docs, self.display = label, total_docs, _mode
        self.progress_dir = os.path.join(self.logging_dir.path, "progress")
        # names hashed where they hold a value: this list is written to executor.json with the executor
        listing = rank_files(self.pipeline, self.world_size)
        self.input_files = listing and [[(redact_name(name), size) for name, size in files] for files in listing]
        self.pipeline = with_counter(self.pipeline, self.progress_dir)

    def run(self):
        # a rank that will run again starts from zero; a finished (skipped) rank's file stays: its documents count
        for rank in self.get_incomplete_ranks(range(self.world_size)):
            with contextlib.suppress(OSError):
                os.remove(os.path.join(self.progress_dir, f"{rank:05d}.json"))
        monitor = ProgressMonitor(
            self.label, self.progress_dir, self.world_size, self.input_files, self.total_docs, self.display
        )
        with quiet_datatrove(), monitor:
            return super().run()

    def save_executor_as_json(self, indent: int = 4) -> None:
        save_executor_json(self, indent)

    def _run_for_rank(self, rank: int, local_rank: int = 0, node_rank: int = -1):
        with quiet_datatrove():  # in a pool worker (a fresh process) as much as in this one
            return super()._run_for_rank(rank, local_rank, node_rank)

    def _launch_run_for_rank(self, rank: int, ranks_q, completed=None, completed_lock=None):
        # without the shared counter: its "N/M tasks completed" lines are what the progress line shows
        return super()._launch_run_for_rank(rank, ranks_q)
