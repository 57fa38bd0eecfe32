"""Readers: turn a source (WARC/WET, JSONL, Parquet, datasets, folder of files) into datatrove Documents.

``build_reader(source)`` returns the datatrove reader step for a ``SourceConfig``; ``detect_kind(path)``
guesses the kind for ``kind: auto``. Paths may be a file, a folder or a glob (``data/crawl/*.warc.gz``):
a glob is split into its fixed folder and the pattern, so ids (relative paths) stay the same as long as the
folder does. Problems found before any work starts -- a missing path, a folder or glob without a single
readable file, a Parquet/datasets source without the text column, a hub dataset while offline -- raise
``InputError`` naming the path; problems inside files become counted placeholders (``pipeline.read.common``).
"""

from __future__ import annotations

import posixpath
from glob import escape, has_magic
from typing import TYPE_CHECKING, Any

from pipeline.read.common import InputError
from pipeline.read.listing import readable_files

if TYPE_CHECKING:
    from datatrove.pipeline.base import PipelineStep
    from fsspec import AbstractFileSystem

    from pipeline.config import ReaderOptions, SourceConfig

__all__ = ["InputError", "build_reader", "detect_kind", "split_path"]

HF_MARKERS = ("dataset_info.json", "state.json", "dataset_dict.json")
LOOKED_FOR = {
    "warc": "WARC/WET files (.warc, .warc.gz, .wet, .warc.wet.gz)",
    "jsonl": "JSON Lines files (.jsonl, .ndjson, .json, optionally .gz/.zst/.bz2/.xz)",
    "parquet": "Parquet files (.parquet)",
    "folder": "documents (.txt, .md, .html, .htm, .jsonl, optionally .gz/.zst/.bz2/.xz)",
}


def _kind_of_file(path: str) -> str:
    from pipeline.read.tabular import is_jsonl_file, is_parquet_file
    from pipeline.read.warc import is_warc_file

    if is_warc_file(path):
        return "warc"
    if is_parquet_file(path):
        return "parquet"
    if is_jsonl_file(path):
        return "jsonl"
    return "folder"


def _kind_of_files(paths: list[str]) -> str:
    kinds = {_kind_of_file(p) for p in paths if not posixpath.basename(p).startswith(".")}
    if "warc" in kinds:
        return "warc"
    if kinds == {"jsonl"}:
        return "jsonl"
    if kinds == {"parquet"}:
        return "parquet"
    return "folder"


def _fs(path: str) -> tuple[AbstractFileSystem, str]:
    from fsspec.core import url_to_fs

    return url_to_fs(path)


def is_pattern(path: str) -> bool:
    """A glob, unless a file or folder has exactly that name (``a[1].jsonl``)."""
    if not has_magic(path):
        return False
    fs, fs_path = _fs(path)
    return not fs.exists(fs_path)


def _exists(path: str) -> tuple[AbstractFileSystem, str]:
    fs, fs_path = _fs(path)
    if not fs.exists(fs_path):
        raise InputError(f"{path}: input path does not exist")
    return fs, fs_path


def detect_kind(path: str) -> str:
    """``"warc" | "jsonl" | "parquet" | "hf" | "folder"`` for a file, folder or glob (see module docstring).

    A folder holding any WARC/WET file is ``warc``; only JSONL files → ``jsonl``; only Parquet → ``parquet``;
    a ``save_to_disk`` folder (``dataset_info.json``/``state.json``/``dataset_dict.json``) → ``hf``; anything
    else → ``folder``.
    """
    if is_pattern(path):
        fs, fs_path = _fs(path)
        files = [p for p in fs.glob(fs_path, recursive=True) if fs.isfile(p)]
        if not files:
            raise InputError(f"{path}: the pattern matches no file")
        return _kind_of_files(files)
    fs, fs_path = _exists(path)
    if fs.isfile(fs_path):
        return _kind_of_file(fs_path)
    names = {posixpath.basename(p) for p in fs.ls(fs_path, detail=False)}
    if names & set(HF_MARKERS):
        return "hf"
    files = fs.find(fs_path)
    if not files:
        raise InputError(f"{path}: the folder holds no files")
    return _kind_of_files(files)


def split_path(path: str, options_glob: str | None = None, recursive: bool = True) -> tuple[str, str | None, bool]:
    """``(folder, glob pattern, recursive)`` for a datatrove ``DataFolder``: the reader lists files itself.

    - glob path ``data/crawl/*.warc.gz`` → ``("data/crawl", "*.warc.gz", True)``;
    - a file ``data/x.jsonl`` → ``("data", "[x].jsonl", False)`` (the brackets stop datatrove from turning a
      plain name into ``*x.jsonl``, which would also match ``ax.jsonl``);
    - a folder → ``(folder, options.glob, options.recursive)``.
    """
    if is_pattern(path):
        if options_glob:
            raise InputError(f"{path}: the path is already a pattern; remove options.glob ({options_glob!r})")
        parts = path.split("/")
        first = next(i for i, part in enumerate(parts) if has_magic(part))
        folder = "/".join(parts[:first]) or ("/" if path.startswith("/") else ".")
        return folder, "/".join(parts[first:]), True
    fs, fs_path = _exists(path)
    if fs.isfile(fs_path):
        folder, name = posixpath.split(path.rstrip("/"))
        exact = escape(name) if has_magic(escape(name)) else f"[{name[0]}]{name[1:]}"
        return folder or ".", exact, False
    return path, options_glob, recursive


def _reader_kwargs(source: SourceConfig, options: ReaderOptions) -> dict[str, Any]:
    return {
        "source": source.name,
        "max_bytes": options.max_bytes,
        "limit": options.limit,
    }


def build_reader(source: SourceConfig, path: str | None = None) -> PipelineStep:
    """The datatrove reader step for ``source``; ``path`` overrides ``source.path``.

    Raises ``InputError`` when nothing could be read (see module docstring).
    """
    path = path or source.path
    if path is None:  # SourceConfig requires a path of every kind but routed, which has no reader
        raise InputError(f"source {source.name!r}: no path to read")
    options = source.options
    kind = detect_kind(path) if source.kind == "auto" else source.kind
    if kind == "hf":
        return _build_hf(source, path)
    folder, pattern, recursive = split_path(path, options.glob, options.recursive)
    common = _reader_kwargs(source, options) | {"glob_pattern": pattern, "recursive": recursive}
    if kind == "warc":
        from pipeline.read.warc import WarcReader

        reader = WarcReader(folder, **common)
    else:
        if kind == "jsonl":
            from pipeline.read.tabular import JsonlReader as reader_class
        elif kind == "parquet":
            from pipeline.read.tabular import ParquetReader as reader_class
        elif kind == "folder":
            from pipeline.read.folder import FolderReader as reader_class
        else:  # pragma: no cover - SourceConfig validates the kind
            raise InputError(f"{path}: unknown source kind {kind!r}")
        reader = reader_class(
            folder, **common, text_key=options.text_key, id_key=options.id_key, url_key=options.url_key
        )
    listed = reader.data_folder.list_files(recursive=recursive, glob_pattern=pattern)
    files = readable_files(reader.data_folder, [f for f in listed if reader.accepts(f)])
    if not files:
        where = f"{path} (pattern {pattern!r})" if options.glob else path
        raise InputError(f"{where}: no readable input; looked for {LOOKED_FOR[kind]}")
    if kind == "parquet":
        _check_parquet_column(reader, files[0], options.text_key)
    return reader


def _check_parquet_column(reader, first: str, text_key: str) -> None:
    """Fail before the run when the text column is not there (a typo in options.text_key)."""
    import pyarrow.parquet as pq

    try:
        with reader.data_folder.open(first, "rb") as handle:
            names = pq.ParquetFile(handle).schema_arrow.names
    except Exception:  # noqa: BLE001 - a damaged file is reported per file when read (corrupt_file)
        return
    if text_key not in names:
        raise InputError(
            f"{reader.data_folder.resolve_paths(first)}: no column {text_key!r} (options.text_key); "
            f"columns: {', '.join(names)}"
        )


def _build_hf(source: SourceConfig, path: str) -> PipelineStep:
    from pipeline.read.tabular import HFDatasetReader, hub_offline

    options = source.options
    keys = {"text_key": options.text_key, "id_key": options.id_key, "url_key": options.url_key}
    common = _reader_kwargs(source, options) | keys | {"split": options.split}
    fs, fs_path = _fs(path)
    pattern = is_pattern(path)
    if pattern or fs.exists(fs_path):
        if not pattern and fs.isdir(fs_path):
            names = {posixpath.basename(p) for p in fs.ls(fs_path, detail=False)}
            if names & set(HF_MARKERS):
                reader = HFDatasetReader(path, mode="disk", **common)
                _check_hf_column(reader, options.text_key)
                return reader
            files = [p for p in fs.find(fs_path)]
        else:
            files = [p for p in fs.glob(fs_path, recursive=True) if fs.isfile(p)] if pattern else [fs_path]
        kinds = {_kind_of_file(p) for p in files}
        builders = {"jsonl": "json", "parquet": "parquet"}
        if len(kinds) != 1 or next(iter(kinds)) not in builders:
            raise InputError(
                f"{path}: a datasets source must be a save_to_disk folder, or JSONL or Parquet data files "
                f"(found {len(files)} files of kinds {sorted(kinds) or 'none'})"
            )
        data_files = sorted(files) if fs.isdir(fs_path) else path
        return HFDatasetReader(path, mode="files", builder=builders[kinds.pop()], data_files=data_files, **common)
    if "://" in path or path.startswith((".", "/")) or path.count("/") > 1:
        raise InputError(f"{path}: input path does not exist")
    if hub_offline():
        raise InputError(
            f"{path}: not a local path, and the Hugging Face hub is offline (HF_DATASETS_OFFLINE/HF_HUB_OFFLINE "
            "is set); fetch the dataset where the network is allowed and point the source at a save_to_disk "
            "folder or at its data files"
        )
    return HFDatasetReader(path, mode="hub", **common)


def _check_hf_column(reader, text_key: str) -> None:
    from datasets import DatasetDict

    from pipeline.read.tabular import load_saved_dataset

    loaded = load_saved_dataset(reader.dataset)
    if isinstance(loaded, DatasetDict):
        if reader.split not in loaded:
            available = ", ".join(loaded)
            raise InputError(f"{reader.dataset}: no split {reader.split!r} (options.split); available: {available}")
        loaded = loaded[reader.split]
    if text_key not in loaded.column_names:
        raise InputError(
            f"{reader.dataset}: no column {text_key!r} (options.text_key); columns: {', '.join(loaded.column_names)}"
        )
