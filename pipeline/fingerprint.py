"""Fingerprints that decide whether a stage's output in the run directory is still valid.

A stage's fingerprint covers its resolved config, its inputs and the code version. It is written to
``stages/<stage>/.../fingerprint.json`` before the stage runs: a rerun with the same fingerprint resumes
(datatrove skips finished ranks); a different fingerprint clears that stage's outputs first, so a changed
threshold never mixes with results computed under the old one. The Prefect flows use the same values as
task cache keys.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from pipeline.atomic import write_json_atomic

PACKAGE_ROOT = Path(__file__).resolve().parents[1]


def digest(*parts: Any) -> str:
    """A short stable hash of JSON-serialisable parts."""
    payload = json.dumps(parts, sort_keys=True, default=str, ensure_ascii=False)
    # surrogateescape: a file name that is not UTF-8 (surrogate escapes, PEP 383) hashes as its own bytes
    return hashlib.sha256(payload.encode("utf-8", "surrogateescape")).hexdigest()[:20]


@lru_cache(maxsize=8)
def code_version(*packages: str) -> str:
    """Hash of the Python sources of the given top-level packages (default: all of tokenmill's)."""
    hasher = hashlib.sha256()
    for package in packages or ("pipeline", "training", "flows"):
        for path in sorted((PACKAGE_ROOT / package).rglob("*.py")):
            hasher.update(str(path.relative_to(PACKAGE_ROOT)).encode())
            hasher.update(path.read_bytes())
    return hasher.hexdigest()[:16]


def input_listing(path: str) -> list[tuple[str, int, int]]:
    """(path, size, mtime_ns) of every file an input path names: a file, a folder (recursive) or a glob."""
    if any(ch in path for ch in "*?["):
        candidates = sorted(glob.glob(path, recursive=True))
    elif os.path.isdir(path):
        candidates = sorted(_files_outside_runs(path))
    else:
        candidates = [path]
    listing = []
    for candidate in candidates:
        try:
            stat = os.stat(candidate)
        except OSError:
            continue
        if os.path.isfile(candidate):
            listing.append((candidate, stat.st_size, stat.st_mtime_ns))
    return listing


def _files_outside_runs(folder: str) -> Iterator[str]:
    """Every path under ``folder`` except those inside a tokenmill run folder below it (a run's ``--output``
    inside its input is not input: ``pipeline.read.listing``), so a rerun there still resumes."""
    from pipeline.read.listing import is_run_folder

    for parent, folders, files in os.walk(folder):
        folders[:] = [name for name in folders if not is_run_folder(os.path.join(parent, name))]
        yield from (os.path.join(parent, name) for name in folders + files)


def folder_fingerprint(folder: str | Path) -> str:
    """Fingerprint of the files under a folder (names, sizes, mtimes): cheap, for stage outputs."""
    return digest(input_listing(str(folder)))


def read_fingerprint(path: Path) -> str | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))["fingerprint"]
    except (OSError, ValueError, KeyError):
        return None


def write_fingerprint(path: Path, fingerprint: str, details: dict[str, Any] | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, {"fingerprint": fingerprint, **(details or {})}, indent=2, default=str)


def sha256_file(path: str | Path) -> str:
    """The SHA-256 of a file's bytes, read in 1 MiB blocks (tokenizer, checked arrays, ingest ledger)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
