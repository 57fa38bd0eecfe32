"""The run directory: every stage reads and writes here, so a rerun finds what is already done.

```
runs/<name>/
  config.yaml                      resolved recipe + hash
  stages/<stage>/<source>/logs/    datatrove logs, completions (resume = rerun), stats
  curated/<source>/                kept after read → extract → language → quality → pii
  deduped/<source>/                kept after dedup (when the recipe dedups)
  top_percent/<source>/            kept after classify's top_percent pass (pipeline.classify.top_percent)
  dropped/<source>/<stage>/        one JSON row per dropped document
  shards/                          token shards + manifest.json
  report.md, report.json, plots/
```
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import shutil
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pipeline.errors import TokenmillError
from pipeline.orphans import guard_forks

logger = logging.getLogger(__name__)

#: The lock file of a run directory (``RunLayout.lock``); it names the holder.
LOCK_NAME = ".tokenmill.lock"

#: Run directories this process holds, with a depth: a flow that calls another on the same folder nests.
_held: dict[Path, list] = {}

#: The first line of every ``config.yaml`` a run writes: what marks a folder as a tokenmill run directory.
RUN_HEADER = "# resolved by tokenmill"

#: The top-level entries a run (curation, dedup, tokenize, plan, train) writes; ``--overwrite`` removes these
#: and nothing else, so files a user keeps beside them survive.
RUN_ENTRIES = (
    "config.yaml",
    "stages",
    "curated",
    "deduped",
    "top_percent",
    "dropped",
    "shards",
    "plots",
    "train",
    "report.md",
    "report.json",
    "plan.md",
    "plan.json",
)


class RunDirError(TokenmillError, ValueError):
    """A run directory cannot be used as asked (e.g. ``--overwrite`` on a folder tokenmill did not create)."""


@dataclass(frozen=True)
class RunLayout:
    root: Path

    @classmethod
    def at(cls, root: str | Path) -> RunLayout:
        return cls(Path(root).resolve())

    @property
    def config(self) -> Path:
        return self.root / "config.yaml"

    def stage_dir(self, stage: str, source: str | None = None) -> Path:
        base = self.root / "stages" / stage
        return base / source if source else base

    def logs(self, stage: str, source: str | None = None) -> Path:
        return self.stage_dir(stage, source) / "logs"

    def curated(self, source: str | None = None) -> Path:
        return self.root / "curated" / source if source else self.root / "curated"

    def deduped(self, source: str | None = None) -> Path:
        return self.root / "deduped" / source if source else self.root / "deduped"

    def dropped(self, source: str | None = None) -> Path:
        return self.root / "dropped" / source if source else self.root / "dropped"

    @property
    def shards(self) -> Path:
        return self.root / "shards"

    @property
    def plots(self) -> Path:
        return self.root / "plots"

    @property
    def report_md(self) -> Path:
        return self.root / "report.md"

    @property
    def report_json(self) -> Path:
        return self.root / "report.json"

    def is_run(self) -> bool:
        """True when the folder holds a run: its ``config.yaml`` was written by tokenmill."""
        try:
            with open(self.config, encoding="utf-8") as handle:
                return handle.readline().startswith(RUN_HEADER)
        except (OSError, UnicodeDecodeError):
            return False

    def check_clearable(self) -> None:
        """Raise ``RunDirError`` unless ``clear`` may run here: a missing or empty folder, or a run directory."""
        if not self.root.exists():
            return
        if not self.root.is_dir():
            raise RunDirError(f"--output {self.root} is a file, not a directory")
        if not self.is_run() and any(p.name != LOCK_NAME for p in self.root.iterdir()):
            raise RunDirError(
                f"refusing to overwrite {self.root}: it is not a tokenmill run directory (no config.yaml written "
                "by tokenmill) and it is not empty; choose a new or empty --output"
            )

    def clear(self) -> None:
        """Remove what earlier runs wrote here (``RUN_ENTRIES``), and nothing else.

        A folder that exists, is not empty and is not a run directory is refused: ``--overwrite`` must
        never delete a user's files because they were given as ``--output`` by mistake.
        """
        if not self.root.exists():
            return
        self.check_clearable()
        for name in RUN_ENTRIES:
            path = self.root / name
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif path.exists() or path.is_symlink():
                path.unlink()

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold this run directory for the duration of a run; a second run on it is refused at once.

        An advisory ``flock`` on ``LOCK_NAME``: the kernel drops it when the holder dies (kill -9 included),
        so a lock left by a dead run is simply taken over (with a note naming it). The file records pid, host
        and start time for the refusal message. Re-entrant within one process.
        """
        if self.root in _held:
            _held[self.root][1] += 1
            try:
                yield
            finally:
                _held[self.root][1] -= 1
            return
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.root / LOCK_NAME
        _guard_forks_once()
        handle = _acquire(path)
        _held[self.root] = [handle, 1]
        try:
            yield
        finally:
            del _held[self.root]
            path.unlink(missing_ok=True)  # before the unlock: a waiter then finds a new inode (see _acquire)
            handle.close()

    def check_unlocked(self) -> None:
        """Raise ``RunDirError`` naming the holder if another run holds this folder now; create nothing.

        The CLI asks this before it starts any machinery, so a refused run answers at once; the run itself
        still takes ``lock()`` (this check alone would race)."""
        try:
            handle = open(self.root / LOCK_NAME, encoding="utf-8")  # noqa: SIM115 - closed below
        except (FileNotFoundError, NotADirectoryError):
            return
        with handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                raise _in_use(self.root, handle.read()) from None
            fcntl.flock(handle, fcntl.LOCK_UN)

    def top_percent(self, source: str | None = None) -> Path:
        return self.root / "top_percent" / source if source else self.root / "top_percent"

    def final_documents(self, source: str) -> Path:
        """Where a source's kept documents are after the last text stage that ran."""
        selected = self.top_percent(source)
        if selected.is_dir():  # the top_percent pass runs after dedup: the last one
            return selected
        deduped = self.deduped(source)
        return deduped if deduped.is_dir() else self.curated(source)


_guarded = False


def _guard_forks_once() -> None:
    """Children forked during a run die with it and do not keep its lock (``pipeline.orphans``)."""
    global _guarded
    if not _guarded:
        guard_forks(lambda: bool(_held), _close_held_in_child)
        _guarded = True


def _close_held_in_child() -> None:
    for handle, _depth in _held.values():
        handle.close()  # this process's copy only: the parent's flock stays
    _held.clear()


def _acquire(path: Path):
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
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    handle.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "started": started}) + "\n")
    handle.flush()
    return handle


def _in_use(folder: Path, lock_content: str) -> RunDirError:
    return RunDirError(
        f"{folder} is in use by another tokenmill run ({_describe(lock_content)}); wait for it to finish or "
        "choose another --output"
    )


def _describe(content: str) -> str:
    try:
        holder = json.loads(content)
        return f"pid {holder['pid']} on {holder['host']}, started {holder['started']}"
    except (ValueError, KeyError, TypeError):
        return content.strip() or "holder unknown"
