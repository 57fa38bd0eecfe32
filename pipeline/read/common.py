"""Pieces every tokenmill reader shares: read-error placeholders, decoding, opening compressed files.

A reader never loses a record silently. What it cannot turn into a document becomes a *placeholder*:
``Document(text="", id=f"{file}#{offset or index}", metadata={"source", "read_error": rule, "file",
"read_error_detail"})``; the extract stage drops it with stage ``read`` and that rule, so ``read == kept +
dropped`` still holds. The detail may quote the input, so it is redacted before it is cut to 300 characters
(``pipeline.redact.redacted_snippet``), whatever the recipe's ``pii`` section says.
Rules used by the readers:

- ``truncated_file``: the file (or its compression stream) ends inside a record; one per file.
- ``corrupt_record``: a record (WARC record, Parquet row group) that cannot be parsed; reading resumes
  after it where the format allows.
- ``corrupt_file``: the file cannot be read from this point on (bad compressed data, not a Parquet file).
- ``too_large``: a record over ``options.max_bytes``; its bytes are skipped, never turned into a string.
- ``bad_json``, ``missing_text``, ``bad_text``: a JSONL/Parquet/datasets row without usable text (``bad_text``:
  the text field is not a string, or is null).

Why a hand-written zstd reader: ``zstandard``'s ``stream_reader`` (what fsspec uses for ``.zst``) returns
EOF without an error when a file is cut inside a frame; a 1,000-line file cut by 300 bytes read as zero
lines. ``_ZstdReader`` checks the frame really ended and raises ``EOFError`` like ``gzip`` does.
"""

from __future__ import annotations

import bz2
import codecs
import datetime
import io
import lzma
import math
import os
import re
from typing import IO, TYPE_CHECKING, Any

from datatrove.data import Document

from pipeline.errors import TokenmillError

if TYPE_CHECKING:
    from datatrove.io import DataFolder
from pipeline.redact import redacted_snippet

COMPRESSION_SUFFIXES = (".gz", ".zst", ".zstd", ".bz2", ".xz")
# the one suffix table of the row readers (curate, dedup, tokenize): the extension once a compression suffix
# is stripped (``x.jsonl.zst`` → ``.jsonl``). A plain ``.json`` is read when named (a file or a recipe glob),
# but not picked up when a folder is searched (``discovered_kind``): there it is a manifest or stats file
JSONL_EXTENSIONS = (".jsonl", ".ndjson", ".json")
PARQUET_EXTENSIONS = (".parquet",)
HTML_MIME_TYPES = ("text/html", "application/xhtml+xml")
CHUNK = 1 << 20
DETAIL_CHARS = 300
# records over this are dropped as read/too_large (8 MiB: one document then costs at most ~130 MB of memory in
# the stages; docs/readers.md); the default of ``ReaderOptions.max_bytes`` and of every reader
DEFAULT_MAX_BYTES = 8 * 1024 * 1024
_NOT_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.-]")


class InputError(TokenmillError, ValueError):
    """A source that cannot be read at all: a missing path, or a folder/glob without readable files."""


def placeholder(source: str, file: str, where: int | str, rule: str, detail: str | None = None, **extra) -> Document:
    """The document that stands for a record a reader could not read (see module docstring)."""
    metadata: dict[str, Any] = {"source": source, "read_error": rule, "file": file}
    if detail:
        # redacted here, before the cut, because a detail may quote the input (a malformed JSON line)
        metadata["read_error_detail"] = redacted_snippet(detail, DETAIL_CHARS)
    metadata.update(extra)
    return Document(text="", id=f"{file}#{where}", metadata=metadata)


def skip_file(step, filepath: str) -> None:
    """Count a listed file that a reader does not read because of its extension: ``skipped_files`` and
    ``skipped_ext_<ext>`` (``none`` for a name without one). They are not documents, so they are not in ``read``;
    the report and ``SourceAccount.input_files`` show them per extension."""
    ext = extension(filepath).lstrip(".") or "none"
    step.stat_update("skipped_files", f"skipped_ext_{ext}", unit="input_file")


def count_if_empty(step, documents):
    """Yield ``documents`` (one file's); a file that yields none -- no document and no placeholder: zero bytes,
    only blank lines, a WARC without responses -- is counted as ``empty_files``."""
    produced = False
    for document in documents:
        produced = True
        yield document
    if not produced:
        step.stat_update("empty_files", unit="input_file")


def strip_compression(name: str) -> str:
    """``a/b.jsonl.gz`` → ``a/b.jsonl``: what is left once the compression suffix is removed."""
    lower = name.lower()
    for suffix in COMPRESSION_SUFFIXES:
        if lower.endswith(suffix):
            return name[: -len(suffix)]
    return name


def extension(name: str) -> str:
    """Lower-case extension after stripping a compression suffix (``x.JSONL.gz`` → ``.jsonl``)."""
    return os.path.splitext(strip_compression(os.path.basename(name)))[1].lower()


def input_kind(name: str) -> str | None:
    """``"jsonl"``, ``"parquet"`` or ``None`` for a file name, by the one suffix table (``JSONL_EXTENSIONS``)."""
    ext = extension(name)
    if ext in JSONL_EXTENSIONS:
        return "jsonl"
    if ext in PARQUET_EXTENSIONS and strip_compression(name) == name:  # a compressed Parquet file is not read
        return "parquet"
    return None


def discovered_kind(name: str) -> str | None:
    """``input_kind`` for a file found by searching a folder: a plain ``.json`` is not taken (see the table)."""
    return None if name.lower().endswith(".json") else input_kind(name)


def strip_input_suffixes(name: str) -> str:
    """``docs.jsonl.gz`` → ``docs``: the file name without its compression and row-format suffixes."""
    base = strip_compression(os.path.basename(name))
    stem, ext = os.path.splitext(base)
    return stem if ext.lower() in JSONL_EXTENSIONS + PARQUET_EXTENSIONS else base


def source_name_for(path: str, fallback: str = "input") -> str:
    """The source name of an input given by path alone (``curate --input``, ``dedup INPUT``, a file directly
    in a tokenize input folder): the file or folder name without its suffixes, with every character that is not
    a letter, digit or ``_ . -`` replaced by ``_`` (it becomes a folder name), ``fallback`` when nothing is left."""
    base = strip_input_suffixes(os.path.basename(os.path.abspath(path).rstrip(os.sep)))
    return _NOT_NAME_CHARS.sub("_", base).strip("_.-") or fallback


class _ZstdReader(io.RawIOBase):
    """Streaming zstd decompression that raises ``EOFError`` when the input stops inside a frame."""

    def __init__(self, raw: IO[bytes]):
        import zstandard

        self._raw = raw
        self._dctx = zstandard.ZstdDecompressor()
        self._dobj = self._dctx.decompressobj()
        self._in_frame = False
        self._buffer = b""

    def readable(self) -> bool:
        return True

    def readinto(self, target) -> int:
        while not self._buffer:
            chunk = self._raw.read(CHUNK)
            if not chunk:
                if self._in_frame:
                    raise EOFError("zstd stream ended before the end of a frame (truncated file)")
                return 0
            self._feed(chunk)
        size = min(len(target), len(self._buffer))
        target[:size] = self._buffer[:size]
        self._buffer = self._buffer[size:]
        return size

    def _feed(self, data: bytes) -> None:
        while data:
            self._in_frame = True
            self._buffer += self._dobj.decompress(data)
            if not self._dobj.eof:
                return
            # one frame done; concatenated frames are legal, so start a new one on the rest
            data = self._dobj.unused_data
            self._dobj = self._dctx.decompressobj()
            self._in_frame = False

    def close(self) -> None:
        self._raw.close()
        super().close()


def open_decompressed(folder: DataFolder, path: str) -> IO[bytes] | io.BufferedIOBase:
    """Open ``path`` inside a datatrove ``DataFolder`` for binary reading, decompressing by extension.

    Truncated input raises ``EOFError`` for every supported compression (gzip, zstd, bz2, xz).
    """
    raw = folder.open(path, "rb")
    lower = path.lower()
    if lower.endswith(".gz"):
        import gzip

        return gzip.GzipFile(fileobj=raw, mode="rb")
    if lower.endswith((".zst", ".zstd")):
        return io.BufferedReader(_ZstdReader(raw), buffer_size=CHUNK)
    if lower.endswith(".bz2"):
        return bz2.BZ2File(raw, "rb")
    if lower.endswith(".xz"):
        return lzma.LZMAFile(raw, "rb")
    return raw


def _latin1_for_undefined(error: UnicodeError) -> tuple[str, int]:
    """Codec error handler: a byte the codec leaves undefined becomes the code point of the same value."""
    assert isinstance(error, UnicodeDecodeError)
    return error.object[error.start : error.end].decode("latin-1"), error.end


codecs.register_error("tokenmill.latin1", _latin1_for_undefined)


def decode_windows_1252(data: bytes) -> str:
    """windows-1252 as the WHATWG Encoding Standard defines it (what browsers do): Python's ``cp1252`` plus the
    five bytes it leaves undefined (0x81, 0x8D, 0x8F, 0x90, 0x9D) as U+0081… -- i.e. Latin-1 for those bytes.
    Never raises."""
    return data.decode("cp1252", errors="tokenmill.latin1")


def _codec_name(label: str | None) -> str | None:
    if not label:
        return None
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def _is_windows_1252(label: str | None) -> bool:
    return _codec_name(label) == "cp1252"


def _mostly_utf8(data: bytes) -> bool:
    """More non-ASCII characters decode as valid UTF-8 sequences than bytes fail to: UTF-8 with a few broken
    bytes, not a single-byte text (cp1252 letters are followed by ASCII, never by 0x80-0xBF continuation
    bytes, so a cp1252 text has almost no valid multi-byte sequence)."""
    decoded = data.decode("utf-8", errors="replace")
    bad = decoded.count("\ufffd")
    good = sum(1 for ch in decoded if ch > "\x7f") - bad
    return good > bad


def decode_bytes(data: bytes, declared: str | None = None, html: bool = False) -> str:
    """Bytes → str that never raises: declared charset, then detection, then windows-1252 or replacement.

    Decoding is strict first so a correct label wins; a page whose label is wrong (cp1252 labelled UTF-8)
    is decoded with the detected encoding. A label ``iso-8859-1``/``latin1`` is read as windows-1252, as the
    WHATWG Encoding Standard says (real pages so labelled use € and curly quotes at 0x80-0x9F). When neither
    decodes strictly and one of them is windows-1252, the bytes are decoded as WHATWG windows-1252
    (``decode_windows_1252``: the five bytes cp1252 leaves undefined become Latin-1 code points) unless they
    are mostly valid UTF-8 (``_mostly_utf8``: then UTF-8 with replacement characters). Otherwise bytes that
    fit no encoding become U+FFFD, which keeps the document and lets extract's ``binary_payload`` gate see
    how much of it was not text.
    """
    from resiliparse.parse.encoding import bytes_to_str, detect_encoding

    # detect_encoding is typed Optional but falls back to utf-8 itself (it returned a name for every input tried)
    encoding = declared or detect_encoding(data, from_html_meta=html) or "utf-8"
    if _codec_name(encoding) == "iso8859-1":
        encoding = "cp1252"
    try:
        return bytes_to_str(data, encoding, errors="strict", fallback_encodings=())
    except (UnicodeError, LookupError):
        pass
    detected = detect_encoding(data)
    if _codec_name(detected) == "iso8859-1":
        detected = "cp1252"
    if detected and detected.lower() != encoding.lower():
        try:
            return bytes_to_str(data, detected, errors="strict", fallback_encodings=())
        except (UnicodeError, LookupError):
            pass
    if _is_windows_1252(encoding) or _is_windows_1252(detected):
        if not _mostly_utf8(data):
            return decode_windows_1252(data)
        encoding = "utf-8"  # UTF-8 with a few broken bytes, whatever the label said
    try:
        return bytes_to_str(data, encoding, errors="replace", fallback_encodings=())
    except LookupError:  # a charset label Python does not know
        return bytes_to_str(data, "utf-8", errors="replace", fallback_encodings=())


def looks_like_html(data: bytes) -> bool:
    """Cheap sniff for records that declare no content type."""
    head = data[:1024].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html")) or b"<html" in head or b"<head" in head


def jsonable(value: Any) -> Any:
    """Make a Parquet/Arrow value safe for the JSONL writer (bytes and unknown types cannot be written)."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (datetime.date, datetime.datetime, datetime.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<{len(value)} bytes>"
    return str(value)
