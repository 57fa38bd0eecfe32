"""No command deletes or overwrites what it did not write: the run record and the one function that deletes.

Every command that writes a folder (curate, pipeline, dedup, tokenize, train, ablate, scaling ladder) first
``claim``\\ s it: a folder that does not exist or is empty gets a record, ``.tokenmill-run.json``, naming the
folder's kind, the commands that wrote it, when, and the entries (relative paths or ``*`` patterns) they write.
A folder that exists, is not empty and has no record -- a user's folder given as ``--output`` by mistake, or
one with a forged ``config.yaml`` -- is refused, as is a record of another kind (token shards are not a
curation run): ``RunDirError``, one line, exit 2, nothing touched.

``remove_owned(path, record)`` is the only function that deletes anything under a run folder: it refuses a
path the record does not list. A user's file kept beside a run (``notes.txt``) therefore survives
``--overwrite``; one put *inside* an entry the run writes (``deduped/``) is the run's to replace.

Seen on main ``b7eca32`` (issue 19, D1/D2): ``tokenmill curate --output F`` into a user's folder deleted its
``deduped/``, ``top_percent/``, ``stages/dedup/``, ``dropped/*/dedup/`` and overwrote ``config.yaml``, and
``tokenmill tokenize --output F`` deleted every ``*.ds`` under ``train/`` and ``heldout/``.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath

from pipeline.atomic import write_json_atomic
from pipeline.lock import LOCK_NAME, RunDirError

#: The record at the root of every folder a tokenmill command writes.
RECORD_NAME = ".tokenmill-run.json"
RECORD_VERSION = 1

#: Folder kind of each command: commands of one kind share a folder (``pipeline`` curates, ``dedup`` dedups a run).
KINDS = {
    "curate": "run",
    "pipeline": "run",
    "dedup": "run",
    "demo": "run",
    "tokenize": "shards",
    "train": "train",
    "ladder": "ladder",
    "ablate": "ablate",
}

#: The top-level entries ``--overwrite`` removes (each through ``pipeline.ownership.remove_owned``), and nothing
#: else, so files a user keeps beside them survive.
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

#: What each kind writes (and may delete or overwrite), relative to its folder; ``*`` matches one path part.
WRITES: dict[str, tuple[str, ...]] = {
    "run": (*RUN_ENTRIES, "dedup_report.md", "generated_sample.txt"),
    "shards": ("tokenizer", "train", "heldout", "manifest.json", "logs", ".work"),
    "train": (
        "checkpoints",
        "final",
        "final.partial",
        "metrics.jsonl",
        "eval.jsonl",
        "train_config.yaml",
        "train_report.md",
        "train_report.json",
        "plots",
        "logs",
        "result.json",
        "launch_config.yaml",
        ".pipeline-key",
    ),
    "ladder": ("size-*", "runs.csv", "fit.json", "fit.png", "ladder.json", "ladder_report.md", "ladder_report.json"),
    "ablate": ("raw", "curated", "probe", "reference", "ablation_report.md", "ablation_report.json", "*.png"),
}


@dataclass
class RunRecord:
    """``<root>/.tokenmill-run.json``: who wrote this folder and what they write in it."""

    root: Path
    kind: str
    commands: list[str] = field(default_factory=list)
    created: str = ""
    writes: list[str] = field(default_factory=list)

    def owns(self, path: str | Path) -> bool:
        """True when ``path`` (under ``root``) is, or lies inside, an entry this folder's commands write."""
        try:
            relative = _real(path).relative_to(os.path.realpath(self.root))
        except ValueError:
            return False
        parts = PurePosixPath(relative.as_posix()).parts
        if not parts:
            return False
        for pattern in self.writes:
            wanted = PurePosixPath(pattern).parts
            if len(wanted) <= len(parts) and all(fnmatchcase(p, w) for p, w in zip(parts, wanted, strict=False)):
                return True
        return False

    def to_json(self) -> dict:
        return {
            "tokenmill_run": RECORD_VERSION,
            "kind": self.kind,
            "commands": self.commands,
            "created": self.created,
            "writes": self.writes,
        }

    def save(self) -> None:
        write_json_atomic(self.root / RECORD_NAME, self.to_json(), indent=1)


def _real(path: str | Path) -> Path:
    """``path`` with its parents' links resolved but not its last part (a link is removed, not its target)."""
    path = Path(os.path.abspath(path))
    return Path(os.path.realpath(path.parent)) / path.name


def read_record(folder: str | Path) -> RunRecord | None:
    """The record of ``folder``, or ``None`` when it has none (or an unreadable one: then it is not ours)."""
    root = Path(os.path.abspath(folder))
    try:
        data = json.loads((root / RECORD_NAME).read_text(encoding="utf-8"))
        return RunRecord(
            root=root,
            kind=str(data["kind"]),
            commands=[str(c) for c in data.get("commands") or []],
            created=str(data.get("created", "")),
            writes=[str(w) for w in data.get("writes") or []],
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def owned(folder: str | Path) -> bool:
    return read_record(folder) is not None


def _kind(command: str) -> str:
    if command not in KINDS:
        raise ValueError(f"unknown command kind {command!r}")
    return KINDS[command]


def check_claim(folder: str | Path, command: str) -> RunRecord | None:
    """Raise ``RunDirError`` unless ``command`` may write ``folder``; create and change nothing.

    Returns the existing record, or ``None`` when the folder is missing or empty (``claim`` will record it)."""
    root = Path(os.path.abspath(folder))
    kind = _kind(command)
    if not root.exists() and not root.is_symlink():
        return None
    if not root.is_dir():
        raise RunDirError(f"--output {root} is a file, not a directory")
    record = read_record(root)
    if record is None:
        if any(entry.name != LOCK_NAME for entry in root.iterdir()):
            raise RunDirError(
                f"refusing to write into {root}: it is not empty and tokenmill did not create it (no {RECORD_NAME}); "
                "nothing was changed: choose a new or empty --output"
            )
        return None
    if record.kind != kind:
        raise RunDirError(
            f"refusing to write into {root}: it holds a tokenmill {record.kind} folder (written by "
            f"{', '.join(record.commands) or 'tokenmill'}), not a {kind} folder for {command}; nothing was changed: "
            "choose another --output"
        )
    return record


def claim(folder: str | Path, command: str) -> RunRecord:
    """Create ``folder`` (or adopt an empty one) with ``command``'s record, or return its record; refuse a folder
    tokenmill did not create (``check_claim``)."""
    root = Path(os.path.abspath(folder))
    record = check_claim(root, command)
    kind = KINDS[command]
    if record is None:
        root.mkdir(parents=True, exist_ok=True)
        record = RunRecord(root=root, kind=kind, created=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    changed = command not in record.commands or any(w not in record.writes for w in WRITES[kind])
    if changed or not (root / RECORD_NAME).is_file():
        record.commands = [*record.commands, *([command] if command not in record.commands else [])]
        record.writes = [*record.writes, *(w for w in WRITES[kind] if w not in record.writes)]
        record.save()
    return record


def record_of(folder: str | Path) -> RunRecord:
    """The record of a folder a command is about to delete in; ``RunDirError`` when it has none."""
    record = read_record(folder)
    if record is None:
        raise RunDirError(f"refusing to delete anything in {folder}: tokenmill did not create it (no {RECORD_NAME})")
    return record


def remove_owned(path: str | Path, record: RunRecord) -> bool:
    """Delete ``path`` (a file, a link or a whole folder) if ``record`` says its run writes it; the one function
    that deletes anything in a run folder. Returns whether something was removed; ``RunDirError`` (nothing
    deleted) when the record does not list ``path``."""
    path = _real(path)
    if not record.owns(path):
        raise RunDirError(
            f"refusing to delete {path}: {record.root / RECORD_NAME} does not record it as written by tokenmill"
        )
    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
        return True
    if path.is_dir():
        shutil.rmtree(path)
        return True
    return False


__all__ = [
    "KINDS",
    "RECORD_NAME",
    "WRITES",
    "RunRecord",
    "check_claim",
    "claim",
    "owned",
    "read_record",
    "record_of",
    "remove_owned",
]
