"""Find the documents to tokenize and read them with datatrove's readers, per source.

Accepted inputs:
  * a curation run directory: ``<run>/deduped/<source>/*.jsonl.gz`` if it holds files, else ``<run>/curated/...``;
  * a folder with one sub-folder per source (a ``curated/`` folder itself);
  * any JSONL (``.jsonl``, ``.jsonl.gz``, ``.jsonl.zst``, ``.ndjson``) or Parquet file, or a folder of them.
A document's source is its ``source`` field (top level or in ``metadata``); without one it is the first
folder under the input root, or, for files directly in the root, the file name without suffixes.

The readers are curation's (``pipeline.read.tabular``: one row loop) with tokenize's hooks
(``_TokenizeRows``): a record without usable text, a broken line and a file that cannot be read each become a
placeholder (``pipeline.read.common.placeholder``, the one rule of every reader: ``text=""``,
``id=f"{file}#{where}"``, ``metadata.read_error``). The encoder counts these as skips per source and the
manifest reports them. Suffixes (``input_kind``) and the name of a source given by path
(``source_name_for``) are those of ``pipeline.read.common`` too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.read.common import (
    COMPRESSION_SUFFIXES,
    JSONL_EXTENSIONS,
    InputError,
    discovered_kind,
    input_kind,
    source_name_for,
)
from pipeline.read.tabular import JsonlReader, ParquetReader, StoredDocumentRows

_BAD_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.-]")
__all__ = ["InputError", "InputPlan", "default_source", "discover_inputs", "iter_texts", "make_reader"]


@dataclass
class InputPlan:
    """What to read: a root folder and the files under it (relative paths) per reader kind."""

    root: Path
    origin: str  # "deduped", "curated", "folder" or "file"
    files: dict[str, list[str]] = field(default_factory=dict)  # "jsonl"/"parquet" -> relative paths
    recipe_hash: str | None = None

    def default_sources(self) -> list[str]:
        return sorted({default_source(rel) for paths in self.files.values() for rel in paths})


def clean_source_name(name: Any) -> str:
    """Source names become folder names: keep letters, digits, ``_ . -``."""
    text = _BAD_NAME_CHARS.sub("_", str(name).strip()) or "unnamed"
    return text if text[0].isalnum() else f"s{text}"


def default_source(relative_path: str) -> str:
    """Source of a file's documents when the records do not say: its top folder, else its name
    (``source_name_for``, the rule of every reader)."""
    parts = Path(relative_path).parts
    return clean_source_name(parts[0]) if len(parts) > 1 else source_name_for(parts[0], fallback="unnamed")


def _list_files(root: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part.startswith((".", "_")) for part in rel.parts) or path.is_dir():
            continue  # hidden folders (.work) and datatrove's _SUCCESS-style markers; a FIFO stays listed: the
            # reader skips and counts it without opening it (pipeline.read.listing)
        kind = discovered_kind(path.name)
        if kind:
            found.setdefault(kind, []).append(rel.as_posix())
    return found


def _recipe_hash(run_dir: Path) -> str | None:
    config = run_dir / "config.yaml"
    if not config.is_file():
        return None
    first = config.read_text(encoding="utf-8").split("\n", 1)[0]
    match = re.search(r"config_hash:\s*(\w+)", first)
    return match.group(1) if match else None


def discover_inputs(path: str | Path) -> InputPlan:
    """Resolve ``path`` (run dir, curated folder, file or folder) to an ``InputPlan``; errors name the path."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: input does not exist")
    if path.is_file():
        kind = input_kind(path.name)
        if kind is None:
            compressed = "/".join(COMPRESSION_SUFFIXES)
            raise InputError(
                f"{path}: not a JSONL or Parquet file (suffixes: {', '.join(JSONL_EXTENSIONS)}, "
                f"each also {compressed}; .parquet)"
            )
        return InputPlan(root=path.parent, origin="file", files={kind: [path.name]})
    for stage in ("top_percent", "deduped", "curated"):  # the last text pass that ran first
        files = _list_files(path / stage) if (path / stage).is_dir() else {}
        if files:
            return InputPlan(root=path / stage, origin=stage, files=files, recipe_hash=_recipe_hash(path))
    if (path / "config.yaml").is_file() and (path / "stages").is_dir():
        raise InputError(f"{path}: looks like a run directory but has no documents under deduped/ or curated/")
    files = _list_files(path)
    if not files:
        raise InputError(f"{path}: no JSONL or Parquet files found")
    return InputPlan(root=path, origin="folder", files=files)


class _TokenizeRows(StoredDocumentRows):
    """Tokenize's hooks on the curation row loop: the source is the record's own (top level or in ``metadata``,
    cleaned into a folder name) else ``default_source(file)``; an empty text is ``empty_text`` (it has no tokens);
    the rule names the manifest has always used (``text_not_string``, ``unreadable_file``)."""

    empty_text_rule: str | None = "empty_text"
    rule_names = {
        "bad_text": "text_not_string",
        "truncated_file": "unreadable_file",
        "corrupt_file": "unreadable_file",
        "corrupt_record": "unreadable_file",
    }

    def row_source(self, file: str, metadata: dict | None) -> str:
        declared = (metadata or {}).get("source")
        return clean_source_name(declared) if declared else default_source(file)


class CountingJsonlReader(_TokenizeRows, JsonlReader):
    """Curation's JSONL reader with tokenize's hooks: every broken line is a counted ``read_error`` placeholder."""

    name = "🐿 Jsonl (counted errors)"


class CountingParquetReader(_TokenizeRows, ParquetReader):
    """Curation's Parquet reader with tokenize's hooks: an unreadable file is a counted placeholder."""

    name = "📒 Parquet (counted errors)"


def make_reader(plan: InputPlan, kind: str, paths_file: str | None, text_key: str = "text", id_key: str = "id"):
    """The datatrove reader for one kind of file in ``plan``; ``paths_file`` lists the files (one per line)."""
    if kind == "jsonl":
        return CountingJsonlReader(str(plan.root), paths_file, text_key=text_key, id_key=id_key)
    if kind == "parquet":
        return CountingParquetReader(str(plan.root), paths_file, text_key=text_key, id_key=id_key)
    raise InputError(f"unknown input kind {kind!r}")


def iter_texts(
    plan: InputPlan, kind: str, relative_path: str, text_key: str = "text", id_key: str = "id"
) -> Iterator[tuple[str, str]]:
    """(source, text) of the readable documents of one file, read in this process (tokenizer training)."""
    reader = make_reader(plan, kind, None, text_key, id_key)
    for doc in reader.read_file(relative_path):
        if not doc.metadata.get("read_error"):
            yield doc.metadata["source"], doc.text
