"""The ingest ledger: which files of an input root a scheduled run has taken, so each night reads only new ones.

A scheduled crawl (``curate/nightly-crawl``, ``curate/weekly-crawl``) points at one folder that keeps growing.
Without a record, every night re-read the whole folder and relied on the dedup index to drop what it had seen,
so a night cost more the older the folder was (issue 20). The ledger, one JSON file per input root under
``<output_root>/ingest/``, records per file: path (relative to the root), size, mtime, sha256, the run that
took it and its status (``started`` while that run is going, ``done`` once its run finished).

- **Only new files are read.** A file in the ledger is skipped; a file whose size or mtime changed is hashed
  again: the same content is skipped (a ``touch``, a copy), other content is *reported* (``changed``), never
  re-read silently — its first version's documents are already in the corpus.
- **Resumable.** A night killed midway leaves its files ``started``: the next run resumes that same run
  directory with exactly those files (curation skips its finished ranks), marks them ``done``, and leaves
  files that arrived since for the run after.
- **Locked.** The whole run holds an exclusive ``fcntl`` lock on ``<ledger>.lock``; a second run on the same
  root is refused at once (a killed run's lock goes with its process).

The files a run takes are linked (symlinks) into ``<output_root>/ingest/staged/<run>/<root name>/`` and the
recipe reads that folder, so the source keeps its name and the readers are the usual ones.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import glob
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel

from pipeline.atomic import write_json_atomic
from pipeline.errors import TokenmillError
from pipeline.fingerprint import sha256_file
from pipeline.read import is_pattern, split_path

LEDGER_DIR = "ingest"


class IngestError(TokenmillError, RuntimeError):
    """The ledger is held by another run, or unreadable."""


class LedgerEntry(BaseModel):
    path: str  # relative to the input root
    size: int
    mtime: float
    sha256: str
    run: str  # the run directory that took the file
    status: str  # "started" | "done"
    taken: str  # when (UTC, ISO 8601)


class Ledger(BaseModel):
    root: str
    files: dict[str, LedgerEntry] = {}


class IngestPlan(BaseModel):
    """What this run reads: ``files`` (relative paths), into ``run`` (a resumed run's directory, or None for a new
    one); what it found already ingested, and the files changed since they were ingested (reported, not read)."""

    root: str
    pattern: str | None
    files: list[str]
    resume_run: str | None
    already: int
    changed: list[str]
    pending: list[str]  # new files left for the next run while a killed run is resumed


class IngestLedger:
    """The ledger of one input root (``input`` is a glob such as ``data/incoming/*.warc.gz`` or a folder)."""

    def __init__(self, output_root: str | Path, input: str):  # noqa: A002 - the flow's parameter name
        self.input = input
        if is_pattern(input):
            root, self.pattern, _ = split_path(input)
        else:
            root, self.pattern = input, None
        self.root = Path(root).absolute()
        name = f"{self.root.name or 'root'}-{hashlib.sha256(str(self.root).encode()).hexdigest()[:8]}"
        self.folder = Path(output_root) / LEDGER_DIR
        self.path = self.folder / f"{name}.json"

    # --------------------------------------------------------------------------------------------- state

    def load(self) -> Ledger:
        if not self.path.exists():
            return Ledger(root=str(self.root))
        try:
            return Ledger.model_validate_json(self.path.read_text(encoding="utf-8"))
        except ValueError as exc:
            message = f"{self.path}: unreadable ingest ledger ({exc.__class__.__name__}); fix or move it"
            raise IngestError(message) from exc

    def save(self, ledger: Ledger) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.path, ledger.model_dump(mode="json"), indent=2)

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the ledger for the whole run (``fcntl.flock``, exclusive, not waiting)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(f"{self.path}.lock", "a+", encoding="utf-8") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.seek(0)
                holder = handle.read().strip() or "another run"
                raise IngestError(f"{self.path} is in use by {holder}; one run per input root at a time") from None
            handle.seek(0)
            handle.truncate()
            handle.write(f"pid {os.getpid()} since {_now()}")
            handle.flush()
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    # ---------------------------------------------------------------------------------------------- plan

    def listing(self) -> list[str]:
        """The files the input names now, relative to the root, sorted."""
        if self.pattern is not None:
            paths = [Path(p) for p in glob.glob(str(self.root / self.pattern), recursive=True)]
        elif self.root.is_dir():
            paths = [p for p in self.root.rglob("*") if not any(part.startswith(".") for part in p.parts)]
        else:
            paths = []
        return sorted(str(p.relative_to(self.root)) for p in paths if p.is_file())

    def plan(self) -> IngestPlan:
        ledger = self.load()
        started = {e.run for e in ledger.files.values() if e.status == "started"}
        resume = sorted(started)[0] if started else None
        new, changed, already = [], [], 0
        for rel in self.listing():
            entry = ledger.files.get(rel)
            if entry is None:
                new.append(rel)
                continue
            if entry.status == "started":
                continue  # the killed run's files: listed below
            already += 1
            stat = (self.root / rel).stat()
            moved = (stat.st_size, stat.st_mtime) != (entry.size, entry.mtime)
            if moved and sha256_file(self.root / rel) != entry.sha256:  # a touch or a copy is not a change
                changed.append(rel)
        if resume is not None:  # finish the killed run with exactly its files first
            files = sorted(rel for rel, e in ledger.files.items() if e.status == "started" and e.run == resume)
            return IngestPlan(
                root=str(self.root), pattern=self.pattern, files=files, resume_run=resume, already=already,
                changed=changed, pending=new,
            )  # fmt: skip
        return IngestPlan(
            root=str(self.root), pattern=self.pattern, files=new, resume_run=None, already=already,
            changed=changed, pending=[],
        )  # fmt: skip

    # --------------------------------------------------------------------------------------------- a run

    def stage(self, plan: IngestPlan, run: str) -> str:
        """Link the plan's files under ``ingest/staged/<run name>/<root name>/`` and return the path to read
        (the same glob pattern under that folder, or the folder): the source keeps its name."""
        folder = self.folder / "staged" / Path(run).name / (self.root.name or "root")
        for rel in plan.files:
            link = folder / rel
            link.parent.mkdir(parents=True, exist_ok=True)
            if link.is_symlink() or link.exists():
                link.unlink()
            link.symlink_to(self.root / rel)
        return str(folder / plan.pattern) if plan.pattern is not None else str(folder)

    def mark(self, files: list[str], run: str, status: str) -> None:
        """Record ``files`` as taken by ``run`` with ``status``; a file keeps the size, mtime and hash it had when
        the run took it."""
        ledger = self.load()
        for rel in files:
            entry = ledger.files.get(rel)
            if entry is None or entry.status != "started" or entry.run != run:
                path = self.root / rel
                stat = path.stat()
                entry = LedgerEntry(
                    path=rel, size=stat.st_size, mtime=stat.st_mtime, sha256=sha256_file(path), run=run,
                    status=status, taken=_now(),
                )  # fmt: skip
            ledger.files[rel] = entry.model_copy(update={"status": status})
        self.save(ledger)


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
