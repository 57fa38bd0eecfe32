"""Find the documents to tokenize and read them with datatrove's readers, per source.

Accepted inputs:
  * a curation run directory: ``<run>/deduped/<source>/*.jsonl.gz`` if it holds files, else ``<run>/curated/...``;
  * a folder with one sub-folder per source (a ``curated/`` folder itself);
  * any JSONL (``.jsonl``, ``.jsonl.gz``, ``.jsonl.zst``, ``.ndjson``) or Parquet file, or a folder of them.
A document's source is its ``source`` field (top level or in ``metadata``); without one it is the first
folder under the input root, or, for files directly in the root, the file name without suffixes.

datatrove's readers drop a record without text and skip a line that is not JSON with only a log message;
tokenmill must count every loss, so a record without usable text, a broken line and a Parquet file pyarrow
cannot read each become a placeholder (``pipeline.read.common.placeholder``, the one rule of every
reader: ``text=""``, ``id=f"{file}#{where}"``, ``metadata.read_error``). The encoder counts these as skips
per source and the manifest reports them. Suffixes (``input_kind``) and the name of a source given by path
(``source_name_for``) are those of ``pipeline.read.common`` too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datatrove.data import Document
from datatrove.pipeline.readers import JsonlReader, ParquetReader

from pipeline.read.common import (
    COMPRESSION_SUFFIXES,
    JSONL_EXTENSIONS,
    InputError,
    discovered_kind,
    input_kind,
    placeholder,
    source_name_for,
)

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
        if any(part.startswith((".", "_")) for part in rel.parts) or not path.is_file():
            continue  # hidden folders (.work) and datatrove's _SUCCESS-style markers
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


def adapt_record(self: Any, data: dict, path: str, id_in_file: int | str) -> dict:
    """datatrove adapter: text, id and metadata (with ``source``); a record without usable text is marked."""
    metadata = data.pop("metadata", None)
    if not isinstance(metadata, dict):
        metadata = {} if metadata is None else {"metadata": metadata}
    text = data.pop(self.text_key, None)
    doc_id = data.pop(self.id_key, None)
    meta = {**metadata, **data}
    meta["source"] = clean_source_name(meta["source"]) if meta.get("source") else default_source(path)
    if not isinstance(text, str) or not text:
        meta["read_error"] = "missing_text" if text is None else ("empty_text" if text == "" else "text_not_string")
        meta["read_error_field"] = self.text_key
    return {
        "text": text,
        "id": str(doc_id) if doc_id is not None else f"{path}/{id_in_file}",
        "media": [],
        "metadata": meta,
    }


class _PlaceholderRows:
    """``get_document_from_dict`` that returns the placeholder of a record ``adapt_record`` marked, where
    datatrove's returns ``None`` for a document without text (the loss would not be counted)."""

    def get_document_from_dict(self, data: dict, source_file: str, id_in_file: int | str) -> Document:
        parsed = self.adapter(data, source_file, id_in_file)  # type: ignore[attr-defined]
        meta = parsed["metadata"]
        if meta.get("read_error"):
            field = {"read_error_field": meta["read_error_field"]}
            return placeholder(meta["source"], source_file, id_in_file, meta["read_error"], **field)
        document = Document(text=parsed["text"], id=parsed["id"], metadata=meta)
        if getattr(self, "add_file_path", False):  # what datatrove's disk readers add
            document.metadata.setdefault("file_path", self.data_folder.resolve_paths(source_file))  # type: ignore[attr-defined]
        return document


def _placeholder(filepath: str, where: int, rule: str, detail: str) -> Document:
    return placeholder(default_source(filepath), filepath, where, rule, f"{filepath}: {detail}")


class CountingJsonlReader(_PlaceholderRows, JsonlReader):
    """datatrove's JsonlReader whose broken lines become ``read_error`` placeholders instead of log lines."""

    name = "🐿 Jsonl (counted errors)"

    def read_file(self, filepath: str) -> Iterator:
        import orjson

        with self.data_folder.open(filepath, "r", compression=self.compression) as handle:
            line_number = 0
            try:
                for line_number, line in enumerate(handle):  # noqa: B007 - used after the loop on errors
                    if not line.strip():
                        continue
                    with self.track_time():
                        try:
                            record = orjson.loads(line)
                            if not isinstance(record, dict):
                                raise TypeError("a JSONL line must be an object")
                        except (orjson.JSONDecodeError, TypeError) as error:
                            yield _placeholder(filepath, line_number, "bad_json", str(error)[:200])
                            continue
                        document = self.get_document_from_dict(record, filepath, line_number)
                    if document is not None:
                        yield document
            except (UnicodeDecodeError, EOFError, OSError) as error:
                # a truncated .gz or binary garbage ends the file; what was read stays, the rest is one counted error
                yield _placeholder(filepath, line_number + 1, "unreadable_file", f"{type(error).__name__}: {error}")


class CountingParquetReader(_PlaceholderRows, ParquetReader):
    """datatrove's ParquetReader whose unreadable file becomes one counted ``read_error`` placeholder."""

    name = "📒 Parquet (counted errors)"

    def read_file(self, filepath: str) -> Iterator:
        try:
            yield from super().read_file(filepath)
        except Exception as error:  # noqa: BLE001 - pyarrow raises ArrowInvalid, OSError, … on a damaged file
            yield _placeholder(filepath, 0, "unreadable_file", f"{type(error).__name__}: {error}"[:300])


def make_reader(plan: InputPlan, kind: str, paths_file: str | None, text_key: str = "text", id_key: str = "id"):
    """The datatrove reader for one kind of file in ``plan``; ``paths_file`` lists the files (one per line)."""
    common: dict[str, Any] = {
        "data_folder": str(plan.root),
        "paths_file": paths_file,
        "adapter": adapt_record,
        "text_key": text_key,
        "id_key": id_key,
    }
    if kind == "jsonl":
        return CountingJsonlReader(add_file_path=False, **common)
    if kind == "parquet":
        return CountingParquetReader(read_metadata=True, **common)
    raise InputError(f"unknown input kind {kind!r}")


def iter_texts(plan: InputPlan, kind: str, relative_path: str) -> Iterator[tuple[str, str]]:
    """(source, text) of the readable documents of one file, read in this process (tokenizer training)."""
    reader = make_reader(plan, kind, paths_file=None)
    for doc in reader.read_file(relative_path):
        if not doc.metadata.get("read_error"):
            yield doc.metadata["source"], doc.text
