"""Row readers: JSONL (plain, .gz, .zst, .bz2, .xz), Parquet, and Hugging Face ``datasets``.

Each row becomes ``Document(text=row[text_key], id=row[id_key] or f"{file}:{row index}")`` with the other
columns (and a nested ``metadata`` object, as tokenmill's own JSONL output has) in ``metadata``, plus
``source``, ``format="text"``, ``file``, and ``url`` from ``url_key``.

Why datatrove's readers are subclassed and their ``read_file``/``run`` replaced (measured on datatrove 0.10.1):
- ``JsonlReader`` logs and skips a line that is not JSON, stops a file at its first undecodable byte with a
  warning, and drops rows with empty text: all uncounted. Here a bad line is a ``bad_json`` placeholder (its
  detail: the parser's message and the line, redacted), undecodable bytes are replaced (the row is kept),
  empty text is kept for extract to count as ``empty`` while a null text is ``bad_text``, a cut compressed
  file ends with one ``truncated_file`` placeholder, and a line over ``max_bytes`` is skipped in bounded
  reads (``too_large``) instead of being loaded.
- ``ParquetReader`` numbers rows after skipping empty ones (ids shift when a row changes) and skips empty
  rows silently; here the row index is the position in the file and oversized cells are measured with
  ``pyarrow.compute.binary_length`` and never converted to Python strings.
- ``HuggingFaceDatasetReader`` ids are ``{rank}/{index in shard}`` -- they change with the number of tasks.
  Here the id uses the row's index in the whole split (``shard(contiguous=False)`` gives rank r the rows
  r, r + W, r + 2W…), and a hub name with ``HF_DATASETS_OFFLINE=1`` fails with a message saying so.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterator
from typing import Any

import orjson
from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.readers import HuggingFaceDatasetReader
from datatrove.pipeline.readers import JsonlReader as DatatroveJsonlReader
from datatrove.pipeline.readers import ParquetReader as DatatroveParquetReader

from pipeline.read.common import (
    CHUNK,
    DEFAULT_MAX_BYTES,
    InputError,
    count_if_empty,
    decode_bytes,
    input_kind,
    jsonable,
    open_decompressed,
    placeholder,
    skip_file,
)
from pipeline.read.listing import CheckedFileReader


def is_jsonl_file(path: str) -> bool:
    return input_kind(path) == "jsonl"


def is_parquet_file(path: str) -> bool:
    return input_kind(path) == "parquet"


class RowConverter:
    """Row dict → Document, shared by the JSONL, Parquet, datasets and folder readers -- and by dedup's and
    tokenize's inputs, which differ only in the hooks below (class attributes and small methods), so that
    parsing, broken-row handling, size limits and placeholders exist once.

    Hooks (the defaults are curation's):
    - ``row_source(file, metadata)``: the source of a row (``metadata``: the row's merged metadata; ``None`` for
      a record that could not be parsed). Curation: the recipe's source name.
    - ``stamp(metadata, file, source)``: what the reader adds to a kept row's metadata. Curation: ``source``,
      ``format="text"`` and ``file``.
    - ``fallback_id(file, index)``: the id of a row without one. Curation: ``f"{file}:{index}"``.
    - ``null_text_rule`` / ``empty_text_rule``: what a null / an empty text becomes (``None`` for an empty text:
      kept, extract counts it as ``empty``).
    - ``rule_names``: the names a consumer has always reported a rule under (tokenize's manifest keys).
    - ``max_bytes=None``: no size limit (dedup and tokenize read documents curation already bounded).
    """

    source: str
    text_key: str
    id_key: str
    url_key: str | None
    max_bytes: int | None
    null_text_rule: str = "bad_text"  # a null is no text at all (a broken export), not an empty document
    empty_text_rule: str | None = None
    rule_names: dict[str, str] = {}

    def _row_options(self, source: str, text_key: str, id_key: str, url_key: str | None, max_bytes: int | None) -> None:
        self.source, self.text_key, self.id_key, self.url_key, self.max_bytes = (
            source,
            text_key,
            id_key,
            url_key,
            max_bytes,
        )

    def row_source(self, file: str, metadata: dict | None) -> str:
        return self.source

    def stamp(self, metadata: dict, file: str, source: str) -> None:
        metadata.update(source=source, format="text", file=file)

    def fallback_id(self, file: str, index: int) -> str:
        return f"{file}:{index}"

    def row_document(self, row: Any, file: str, index: int, sanitize: bool = False) -> Document:
        if not isinstance(row, dict):
            return self._bad(file, index, "bad_json", f"a row must be a JSON object, got {type(row).__name__}")
        fields = None if self.text_key in row else ", ".join(sorted(map(str, row))[:12])
        text = row.pop(self.text_key, None)
        raw_id = row.pop(self.id_key, None)
        nested = row.pop("metadata", None)
        metadata = dict(nested) if isinstance(nested, dict) else ({} if nested is None else {"metadata": nested})
        url = row.pop(self.url_key, None) if self.url_key else None
        metadata.update(row)
        if sanitize:
            metadata = jsonable(metadata)
        # the source is known before the text is judged: a placeholder is counted under its row's source
        source = self.row_source(file, metadata)
        problem = self._text_problem(text, fields)
        if problem:
            return self._bad(file, index, *problem, source=source)
        if isinstance(text, (bytes, bytearray)):
            text = decode_bytes(bytes(text), "utf-8")
        doc_id = str(raw_id) if raw_id not in (None, "") else self.fallback_id(file, index)
        if url is not None:
            metadata["url"] = url if isinstance(url, str) else str(url)
        self.stamp(metadata, file, source)
        return Document(text=text, id=doc_id, metadata=metadata)

    def _text_problem(self, text: Any, fields: str | None) -> tuple[str, str] | None:
        """(rule, detail) of a row's text that cannot be kept, ``None`` for usable text."""
        if fields is not None:
            return "missing_text", f"no {self.text_key!r} field (fields: {fields})"
        if text is None:
            return self.null_text_rule, f"{self.text_key!r} is null"
        if text == "" and self.empty_text_rule:
            return self.empty_text_rule, f"{self.text_key!r} is empty"
        if not isinstance(text, (str, bytes, bytearray)):
            return "bad_text", f"{self.text_key!r} is a {type(text).__name__}, not text"
        return None

    def _bad(self, file: str, index: int, rule: str, detail: str, source: str | None = None, **extra) -> Document:
        rule = self.rule_names.get(rule, rule)
        self.stat_update(rule)  # type: ignore[attr-defined]  # datatrove's PipelineStep's, a later base
        source = self.row_source(file, None) if source is None else source
        return placeholder(source, file, index, rule, detail, **extra)

    def batch_documents(self, batch, file: str, start: int, step: int = 1) -> Iterator[Document]:
        """Documents of one Arrow record batch/table; row ``j`` gets index ``start + j * step``."""
        import pyarrow as pa
        import pyarrow.compute as pc

        rows = batch.num_rows
        if self.text_key not in batch.schema.names:
            detail = f"no {self.text_key!r} column (columns: {', '.join(batch.schema.names[:12])})"
            for j in range(rows):
                yield self._bad(file, start + j * step, "missing_text", detail)
            return
        column = batch.column(self.text_key)
        too_big = [False] * rows
        if self.max_bytes is not None and (
            pa.types.is_string(column.type)
            or pa.types.is_large_string(column.type)
            or pa.types.is_binary(column.type)
            or pa.types.is_large_binary(column.type)
        ):
            lengths = pc.binary_length(column).to_pylist()
            too_big = [n is not None and n > self.max_bytes for n in lengths]
            if any(too_big):  # never turn an oversized cell into a Python string
                column = pc.if_else(pa.array(too_big), pa.scalar(None, column.type), column)
        texts = column.to_pylist()
        others = batch.drop_columns([self.text_key]).to_pylist()
        for j in range(rows):
            index = start + j * step
            if too_big[j]:
                yield self._bad(file, index, "too_large", f"{lengths[j]} bytes > max_bytes {self.max_bytes}")
                continue
            row = others[j]
            row[self.text_key] = texts[j]
            yield self.row_document(row, file, index, sanitize=True)


class StoredDocumentRows:
    """Hooks (``RowConverter``) for reading documents a stage already accepted -- dedup's and tokenize's inputs,
    mixed in before ``JsonlReader``/``ParquetReader``: the metadata stays as written except for ``source`` (no
    ``format``/``file``/``url`` rewriting, so ``deduped/`` holds the curated records unchanged), a null text is
    ``missing_text``, a missing id is ``f"{file}/{index}"`` as datatrove numbers it, and there is no size limit
    (curation bounded the documents; a dataset given directly is read as datatrove read it). The subclass says
    where the source comes from (``row_source``)."""

    null_text_rule = "missing_text"

    def __init__(self, data_folder: str, paths_file: str | None, text_key: str = "text", id_key: str = "id"):
        options = {"text_key": text_key, "id_key": id_key, "url_key": None, "max_bytes": None}
        # RowFileReader's __init__, a later base than mypy's view of this mixin (object) shows
        super().__init__(data_folder, source="", paths_file=paths_file, **options)  # type: ignore[call-arg]

    def stamp(self, metadata: dict, file: str, source: str) -> None:
        metadata["source"] = source

    def fallback_id(self, file: str, index: int) -> str:
        return f"{file}/{index}"


class RowFileReader(CheckedFileReader, RowConverter):
    """The options and the ``read_file`` of the file row readers (JSONL, Parquet), put before datatrove's reader
    class: a file the suffix table does not give to this reader is a counted skip, a file without a row is
    counted as empty, a file that may not be opened (a FIFO, a run's output: ``pipeline.read.listing``) is a
    counted skip, and ``read_rows`` yields the file's documents and placeholders."""

    def __init__(
        self,
        data_folder,
        source: str,
        text_key: str = "text",
        id_key: str = "id",
        url_key: str | None = "url",
        max_bytes: int | None = DEFAULT_MAX_BYTES,
        limit: int = -1,
        glob_pattern: str | None = None,
        recursive: bool = True,
        paths_file=None,
        **datatrove_options,
    ):
        listing = {"paths_file": paths_file, "limit": limit, "recursive": recursive, "glob_pattern": glob_pattern}
        keys = {"text_key": text_key, "id_key": id_key}
        # datatrove's reader __init__, a later base in a reader's bases than this mixin (object, to mypy)
        super().__init__(data_folder, **listing, **keys, **datatrove_options)  # type: ignore[call-arg]
        self.add_file_path = False
        self._row_options(source, text_key, id_key, url_key, max_bytes)

    def accepts(self, path: str) -> bool:
        raise NotImplementedError

    def read_rows(self, filepath: str) -> DocumentsPipeline:
        raise NotImplementedError

    def read_checked_file(self, filepath: str) -> DocumentsPipeline:
        if not self.accepts(filepath):
            skip_file(self, filepath)
            return
        yield from count_if_empty(self, self.read_rows(filepath))


class JsonlReader(RowFileReader, DatatroveJsonlReader):
    """JSON Lines, one document per line; compression from the extension (.gz, .zst, .bz2, .xz)."""

    name = "🐿 JSONL (accounted)"

    def accepts(self, path: str) -> bool:
        return is_jsonl_file(path)

    def read_rows(self, filepath: str) -> DocumentsPipeline:
        return self.read_lines(filepath)

    def read_lines(self, filepath: str) -> DocumentsPipeline:
        index = 0
        try:
            with open_decompressed(self.data_folder, filepath) as stream:
                while True:
                    line = stream.readline(-1 if self.max_bytes is None else self.max_bytes + 1)
                    if not line:
                        return
                    if self.max_bytes is not None and len(line) > self.max_bytes and not line.endswith(b"\n"):
                        size = len(line) + _skip_rest_of_line(stream)
                        detail = f"line of {size} bytes > max_bytes {self.max_bytes}"
                        yield self._bad(filepath, index, "too_large", detail)
                        index += 1
                        continue
                    if line.strip():
                        with self.track_time():
                            try:
                                row = orjson.loads(line)
                            except orjson.JSONDecodeError:
                                row = _loads_lenient(line)
                            if isinstance(row, _Bad):
                                # the line itself goes in, whole: placeholder() redacts it before cutting it
                                detail = f"{row.error}: {line.decode('utf-8', 'replace').strip()}"
                                doc = self._bad(filepath, index, "bad_json", detail)
                            else:
                                doc = self.row_document(row, filepath, index)
                        yield doc
                    else:
                        self.stat_update("blank_lines")
                    index += 1
        except EOFError as error:
            yield self._bad(filepath, index, "truncated_file", str(error))
        except (OSError, zlib.error) as error:
            yield self._bad(filepath, index, "corrupt_file", f"{type(error).__name__}: {error}")


class _Bad:
    """A line that is not JSON, with the parser's message."""

    def __init__(self, error: str):
        self.error = error


def _loads_lenient(line: bytes) -> Any:
    """orjson rejects invalid UTF-8: retry with the bad bytes replaced, so the row survives."""
    try:
        return orjson.loads(line.decode("utf-8", errors="replace"))
    except orjson.JSONDecodeError as error:
        return _Bad(str(error))


def _skip_rest_of_line(stream) -> int:
    skipped = 0
    while True:
        chunk = stream.readline(CHUNK)
        skipped += len(chunk)
        if not chunk or chunk.endswith(b"\n"):
            return skipped


class ParquetReader(RowFileReader, DatatroveParquetReader):
    """Parquet files, one document per row; the text column is ``text_key`` (``batch_size``: rows per batch)."""

    name = "📒 Parquet (accounted)"

    def accepts(self, path: str) -> bool:
        return is_parquet_file(path)

    def read_rows(self, filepath: str) -> DocumentsPipeline:
        return self._read_parquet(filepath)

    def _read_parquet(self, filepath: str) -> DocumentsPipeline:
        import pyarrow.parquet as pq

        with self.data_folder.open(filepath, "rb") as handle:
            try:
                parquet = pq.ParquetFile(handle)
            except Exception as error:  # noqa: BLE001 - pyarrow raises several types for a bad file
                yield self._bad(filepath, 0, "corrupt_file", f"{type(error).__name__}: {error}")
                return
            index = 0
            for group in range(parquet.num_row_groups):
                group_end = index + parquet.metadata.row_group(group).num_rows
                try:
                    for batch in parquet.iter_batches(batch_size=self.batch_size, row_groups=[group]):
                        with self.track_time("batch"):
                            documents = list(self.batch_documents(batch, filepath, index))
                        yield from documents
                        index += batch.num_rows
                except Exception as error:  # noqa: BLE001 - a damaged row group; the next one may be fine
                    yield self._bad(
                        filepath, index, "corrupt_record", f"{type(error).__name__}: {error}", rows=group_end - index
                    )
                index = group_end


def load_saved_dataset(path: str):
    """``datasets.load_from_disk(path)``; a cut or damaged file of it (an arrow file half written, a bad
    ``state.json``) raises ``InputError`` naming the folder and the cause, instead of pyarrow's bare error."""
    import pyarrow as pa
    from datasets import load_from_disk

    try:
        return load_from_disk(path)
    except (OSError, pa.ArrowException, ValueError) as error:
        raise InputError(
            f"{path}: a saved dataset that cannot be read, one of its files is cut or damaged "
            f"({type(error).__name__}: {error}); save or copy it again, then rerun"
        ) from None


def hub_offline() -> bool:
    """Whether the Hugging Face hub may not be contacted (datasets reads these variables at import)."""
    flags = (os.environ.get("HF_DATASETS_OFFLINE", ""), os.environ.get("HF_HUB_OFFLINE", ""))
    if any(flag.strip().lower() in ("1", "true", "yes", "on") for flag in flags):
        return True
    try:
        import datasets.config

        return bool(getattr(datasets.config, "HF_HUB_OFFLINE", False))
    except ImportError:  # pragma: no cover - datasets is a dependency
        return False


class HFDatasetReader(RowConverter, HuggingFaceDatasetReader):
    """A ``datasets`` split: a ``save_to_disk`` folder, local data files, or (online only) a hub name.

    ``mode``: ``"disk"`` (``load_from_disk(dataset)``), ``"files"`` (``load_dataset(builder,
    data_files=data_files or dataset)``) or ``"hub"`` (``load_dataset(dataset)``).
    """

    name = "🤗 datasets (accounted)"

    def __init__(
        self,
        dataset: str,
        source: str,
        mode: str = "disk",
        split: str = "train",
        builder: str | None = None,
        data_files: str | list[str] | None = None,
        text_key: str = "text",
        id_key: str = "id",
        url_key: str = "url",
        max_bytes: int = DEFAULT_MAX_BYTES,
        limit: int = -1,
        batch_size: int = 1000,
        cache_dir: str | None = None,
    ):
        if mode not in ("disk", "files", "hub"):
            raise ValueError(f"mode must be disk, files or hub, not {mode!r}")
        super().__init__(dataset, limit=limit, batch_size=batch_size, text_key=text_key, id_key=id_key)
        self._row_options(source, text_key, id_key, url_key, max_bytes)
        self.mode, self.split, self.builder, self.cache_dir = mode, split, builder, cache_dir
        self.data_files = data_files or dataset
        base = os.path.basename(dataset.rstrip("/")) if mode == "disk" else dataset
        self.label = f"{base}/{split}"

    def load(self):
        """The selected split as a map-style ``datasets.Dataset``."""
        from datasets import DatasetDict, load_dataset

        if self.mode == "disk":
            loaded = load_saved_dataset(self.dataset)
        elif self.mode == "files":
            loaded = load_dataset(self.builder, data_files=self.data_files, split=self.split, cache_dir=self.cache_dir)
        else:
            if hub_offline():
                raise InputError(
                    f"{self.dataset}: not a local path, and the Hugging Face hub is offline (HF_DATASETS_OFFLINE/"
                    "HF_HUB_OFFLINE is set); fetch the dataset where the network is allowed and point the source "
                    "at a save_to_disk folder or at its data files"
                )
            loaded = load_dataset(self.dataset, split=self.split, cache_dir=self.cache_dir)
        if isinstance(loaded, DatasetDict):
            if self.split not in loaded:
                raise InputError(f"{self.dataset}: no split {self.split!r}; available: {', '.join(loaded)}")
            loaded = loaded[self.split]
        return loaded

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        if data:
            yield from data
        dataset = self.load()
        if world_size > 1:
            dataset = dataset.shard(num_shards=world_size, index=rank, contiguous=False)
        self._log_limit_scope(rank, world_size)
        position, produced = 0, 0
        for table in dataset.with_format("arrow").iter(batch_size=self.batch_size):
            with self.track_time("batch"):
                documents = list(self.batch_documents(table, self.label, rank + position * world_size, world_size))
            for document in documents:
                if self.limit != -1 and produced >= self.limit:
                    return
                self.update_doc_stats(document)
                self.stat_update("documents")
                produced += 1
                yield document
            position += table.num_rows
