"""Reading the documents to dedup: a run's ``curated/`` folder, or any JSONL / Parquet dataset (CLI).

The readers are curation's (``pipeline.read.tabular.JsonlReader`` / ``ParquetReader``: one row loop, one
placeholder rule) with dedup's hooks (``_DedupRows``). datatrove's ``run`` does the sharding
(``files[rank::world_size]`` of a ``paths_file``, the same in the signature and the filter stage, which is what
lets the filter step line decisions up with documents by position). A record that cannot be read becomes a
placeholder (``text=""``, ``metadata.read_error`` = ``bad_json`` / ``missing_text`` / ``bad_text`` /
``truncated_file`` / ``corrupt_file``...): dedup drops it with stage ``read`` and that rule, so it is counted.
A document without ``metadata.source`` gets the name of its sub-folder (curated runs) or a default source.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass

from pipeline.atomic import write_text_atomic
from pipeline.read.common import discovered_kind, input_kind
from pipeline.read.listing import read_paths_file, write_paths_file
from pipeline.read.tabular import JsonlReader, ParquetReader, StoredDocumentRows


class _DedupRows(StoredDocumentRows):
    """Dedup's hooks on the curation row loop: the source is the row's own ``metadata.source``, else its
    sub-folder (curated runs) or the default source; an empty text is ``missing_text`` too (dedup has no extract
    stage to count an empty document as ``empty``)."""

    empty_text_rule: str | None = "missing_text"

    def __init__(self, *args, default_source: str | None = None, source_from_subfolder: bool = False, **keys):
        super().__init__(*args, **keys)  # data_folder, paths_file, text_key, id_key (StoredDocumentRows)
        self.default_source, self.source_from_subfolder = default_source, source_from_subfolder

    def _source_for(self, filepath: str) -> str:
        if self.source_from_subfolder and os.sep in filepath.strip(os.sep):
            return filepath.strip(os.sep).split(os.sep)[0]
        return self.default_source or "default"

    def row_source(self, file: str, metadata: dict | None) -> str:
        return (metadata or {}).get("source") or self._source_for(file)


class DedupJsonlReader(_DedupRows, JsonlReader):
    name = "🐿 Jsonl (dedup input)"


class DedupParquetReader(_DedupRows, ParquetReader):
    name = "📒 Parquet (dedup input)"


@dataclass
class DedupInput:
    """Where the documents come from.

    ``plan(stage_dir)`` lists the input files once and writes the lists to ``<stage_dir>/inputs/``; both
    sharded stages read those lists (datatrove ``paths_file``), so a file that appears between the signature
    and the filter stage — or before a resumed run — cannot shift which rank reads which document.
    """

    folder: str
    jsonl_glob: str | None = "**/*"
    parquet_glob: str | None = "**/*"
    text_key: str = "text"
    id_key: str = "id"
    default_source: str | None = None
    source_from_subfolder: bool = False

    @classmethod
    def curated(cls, run_dir: str) -> DedupInput:
        """A curation run's kept documents: ``<run>/curated/<source>/<rank>.jsonl.gz`` and the documents routed
        into a source, ``<run>/curated/<source>/routed-from-<origin>/<rank>.jsonl.gz``."""
        return cls(
            folder=os.path.join(run_dir, "curated"),
            jsonl_glob="*/**/*.jsonl.gz",  # with curated/<target>/routed-from-<origin>/ (pipeline.curate.routing)
            parquet_glob=None,
            source_from_subfolder=True,
        )

    @classmethod
    def dataset(cls, path: str, default_source: str, text_key: str = "text", id_key: str = "id") -> DedupInput:
        """A file or a folder (searched recursively) of JSONL (optionally compressed) and/or Parquet files."""
        path = os.path.abspath(path)
        if os.path.isfile(path):
            name = os.path.basename(path)
            is_jsonl, is_parquet = input_kind(name) == "jsonl", input_kind(name) == "parquet"
            if not (is_jsonl or is_parquet):
                raise ValueError(f"{path}: not a JSONL (.jsonl[.gz|.zst]) or Parquet (.parquet) file")
            return cls(
                folder=os.path.dirname(path),
                jsonl_glob=name if is_jsonl else None,
                parquet_glob=name if is_parquet else None,
                text_key=text_key,
                id_key=id_key,
                default_source=default_source,
            )
        if not os.path.isdir(path):
            raise ValueError(f"{path}: no such file or folder")
        return cls(folder=path, text_key=text_key, id_key=id_key, default_source=default_source)

    def list_files(self) -> dict[str, list[str]]:
        """Input files per format (sorted, relative to ``folder``)."""
        found: dict[str, list[str]] = {}
        if not os.path.isdir(self.folder):
            return found
        for fmt, pattern in (("jsonl", self.jsonl_glob), ("parquet", self.parquet_glob)):
            if pattern is None:
                continue
            names = [
                os.path.relpath(p, self.folder) for p in glob.glob(os.path.join(self.folder, pattern), recursive=True)
            ]
            # a file named on its own is read by its suffix; one found in a folder search skips a plain .json
            kind_of = input_kind if not glob.has_magic(pattern) else discovered_kind
            # a FIFO or socket stays listed: the reader skips and counts it without opening it (pipeline.read.listing)
            names = sorted(n for n in names if kind_of(n) == fmt and not os.path.isdir(os.path.join(self.folder, n)))
            if names:
                found[fmt] = names
        return found

    def plan(self, stage_dir: str) -> dict[str, list[str]]:
        """Write the file lists once; a rerun reuses them (same files, same sharding)."""
        inputs_dir = os.path.join(stage_dir, "inputs")
        listed = {}
        if os.path.isdir(inputs_dir):
            for fmt in ("jsonl", "parquet"):
                path = os.path.join(inputs_dir, f"{fmt}.txt")
                if os.path.exists(path):
                    listed[fmt] = read_paths_file(path)
            if listed or os.path.exists(os.path.join(inputs_dir, "done")):
                return listed
        listed = self.list_files()
        os.makedirs(inputs_dir, exist_ok=True)
        for fmt, names in listed.items():
            write_paths_file(os.path.join(inputs_dir, f"{fmt}.txt"), names)  # keeps a name that is not UTF-8
        write_text_atomic(os.path.join(inputs_dir, "done"), "")
        return listed

    def readers(self, stage_dir: str) -> list:
        """Reader steps over the planned file lists (call ``plan`` first)."""
        inputs_dir = os.path.join(stage_dir, "inputs")
        steps = []
        for fmt, cls in (("jsonl", DedupJsonlReader), ("parquet", DedupParquetReader)):
            paths_file = os.path.join(inputs_dir, f"{fmt}.txt")
            if os.path.exists(paths_file):
                steps.append(
                    cls(
                        self.folder,
                        paths_file=paths_file,
                        text_key=self.text_key,
                        id_key=self.id_key,
                        default_source=self.default_source,
                        source_from_subfolder=self.source_from_subfolder,
                    )
                )
        return steps
