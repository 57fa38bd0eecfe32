"""A folder of domain documents, read recursively: one file = one document, a ``.jsonl`` = one per line.

``.txt``/``.md``/``.markdown`` → ``format="text"``; ``.html``/``.htm``/``.xhtml`` → ``format="html"`` (extract
turns it into text); ``.jsonl``/``.ndjson`` → one document per line as in the JSONL reader. A ``.gz``/``.zst``/
``.bz2``/``.xz`` suffix is decompressed first. The id is the path relative to the folder (stable while the
folder is the source path). Any other extension is not a document: counted as ``skipped_files`` (and
``skipped_ext_<ext>``), as are empty files (``empty_files``).

datatrove has no reader for loose files; the file listing, sharding across ranks and ``limit`` still come
from its ``BaseDiskReader`` (via the JSONL reader this class extends).
"""

from __future__ import annotations

import zlib

from datatrove.data import Document, DocumentsPipeline

from pipeline.read.common import count_if_empty, decode_bytes, extension, open_decompressed, skip_file
from pipeline.read.tabular import JsonlReader

TEXT_EXTENSIONS = (".txt", ".md", ".markdown")
HTML_EXTENSIONS = (".html", ".htm", ".xhtml")
LINES_EXTENSIONS = (".jsonl", ".ndjson")
FOLDER_EXTENSIONS = TEXT_EXTENSIONS + HTML_EXTENSIONS + LINES_EXTENSIONS


def is_folder_document(path: str) -> bool:
    return extension(path) in FOLDER_EXTENSIONS


class FolderReader(JsonlReader):
    """Loose ``.txt``/``.md``/``.html``/``.jsonl`` files under a folder (recursive by default)."""

    name = "🗂 Folder of documents"

    def accepts(self, path: str) -> bool:
        return is_folder_document(path)

    def read_checked_file(self, filepath: str) -> DocumentsPipeline:
        ext = extension(filepath)
        if ext in LINES_EXTENSIONS:
            yield from count_if_empty(self, self.read_lines(filepath))
            return
        if ext not in TEXT_EXTENSIONS and ext not in HTML_EXTENSIONS:
            skip_file(self, filepath)
            return
        yield from count_if_empty(self, self._read_one(filepath, ext))

    def _read_one(self, filepath: str, ext: str) -> DocumentsPipeline:
        try:
            with open_decompressed(self.data_folder, filepath) as stream:
                data = stream.read(-1 if self.max_bytes is None else self.max_bytes + 1)  # None: no limit
        except EOFError as error:
            yield self._bad(filepath, 0, "truncated_file", str(error))
            return
        except (OSError, zlib.error) as error:
            yield self._bad(filepath, 0, "corrupt_file", f"{type(error).__name__}: {error}")
            return
        if self.max_bytes is not None and len(data) > self.max_bytes:
            yield self._bad(filepath, 0, "too_large", f"more than max_bytes {self.max_bytes} bytes")
            return
        if not data:
            return  # counted as empty_files by read_file
        with self.track_time():
            if ext in HTML_EXTENSIONS:
                metadata = {"format": "html", "content_type": "text/html"}
                text = decode_bytes(data, None, html=True)
            else:
                metadata = {"format": "text"}
                text = decode_bytes(data, "utf-8")  # a strict UTF-8 success is a surer sign than detection
        metadata.update(source=self.source, file=filepath)
        yield Document(text=text, id=filepath, metadata=metadata)
