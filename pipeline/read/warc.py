"""WARC and WET reader on fastwarc: every ``response``/``conversion`` record becomes a document.

Why not datatrove's ``WarcReader``: it reads with warcio (2.3x slower than fastwarc, docs/reference.md), drops every
record that is not HTML/plain text — and, for records without ``WARC-Identified-Payload-Type``, whatever
libmagic misjudges — without counting it, and drops undecodable pages. Here nothing is filtered: a response
becomes a document with ``format="html"`` (HTML content type, or HTML-looking bytes when none is declared) or
``format="binary"`` (text left empty), plus ``http_status``/``content_type``/``url``; extract drops non-200
and non-HTML records with rules, so the report accounts for them. ``request``/``metadata``/``warcinfo``/
``revisit``… records are not documents; they are counted as ``skipped_<type>``.

Why the damage handling is hand-written: fastwarc 2.0 stops *silently* when a file is cut (in a measured
sweep over every cut point of a small ``.warc.gz``, 99 % of cuts raised nothing; a record cut inside its body
is returned with a short payload), and raises ``OSError`` — ending the iteration — on one corrupt record.
So this reader
- compares each payload it reads with the record's declared length (short → ``truncated_file``);
- after the last record, checks that the file really ends there (gzip: the remaining members decompress to
  their end; plain WARC: nothing but whitespace follows the last record's declared end);
- a record whose payload is shorter than its declared ``Content-Length`` while the file goes on (the length
  lied, and fastwarc read the following records as its payload) is one ``corrupt_record``, and reading resumes
  at the next record: the next gzip member, or the next ``WARC/1.`` after a blank line in a plain WARC
  (``_after_lying_record``); at the end of the file it is ``truncated_file``;
- on ``OSError`` emits one ``corrupt_record`` placeholder at the start of the bad region, seeks to the next
  gzip member (``1f 8b 08``) or ``WARC/1.`` line and starts a new iterator there; a file with no further record
  start ends with ``truncated_file`` (the bad region runs into the end of the input) or ``corrupt_record``.
"""

from __future__ import annotations

import io
import re
import zlib
from typing import IO

from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.readers.base import BaseDiskReader
from fastwarc.stream_io import BrotliReader, ChunkedReader, GzipReader
from fastwarc.warc import ArchiveIterator, WarcRecordType

import pipeline.base  # noqa: F401 - datatrove's dependency check (fastwarc, resiliparse) with pipeline.base's lookup
from pipeline.read.common import (
    CHUNK,
    DEFAULT_MAX_BYTES,
    HTML_MIME_TYPES,
    count_if_empty,
    decode_bytes,
    looks_like_html,
    placeholder,
    skip_file,
)
from pipeline.read.listing import CheckedFileReader

WARC_SUFFIXES = (".warc", ".warc.gz", ".wet", ".wet.gz")
GZIP_MAGIC = b"\x1f\x8b\x08"
WARC_MAGIC = b"WARC/1."
_CONTENT_LENGTH = re.compile(rb"(?im)^content-length:[ \t]*(\d+)[ \t]*\r?$")
_HEADER_LIMIT = 1 << 16


def is_warc_file(path: str) -> bool:
    return path.lower().endswith(WARC_SUFFIXES)


def clean_record_id(record_id: str | None) -> str | None:
    """``<urn:uuid:1234-…>`` → ``1234-…`` (the stable id of a WARC record)."""
    if not record_id:
        return None
    value = record_id.strip().lstrip("<").rstrip(">")
    return value[len("urn:uuid:") :] if value.lower().startswith("urn:uuid:") else value


class WarcReader(CheckedFileReader, BaseDiskReader):
    """Stream WARC/WET files (``.warc``, ``.warc.gz``, ``.wet``, ``.warc.wet.gz``) with fastwarc."""

    name = "🕸 WARC/WET (fastwarc)"
    _requires_dependencies = [("fastwarc", "fastwarc"), ("resiliparse", "resiliparse")]

    def __init__(
        self,
        data_folder,
        source: str,
        max_bytes: int = DEFAULT_MAX_BYTES,
        limit: int = -1,
        glob_pattern: str | None = None,
        recursive: bool = True,
        paths_file=None,
    ):
        super().__init__(
            data_folder,
            paths_file=paths_file,
            limit=limit,
            recursive=recursive,
            glob_pattern=glob_pattern,
            add_file_path=False,
        )
        self.source = source
        self.max_bytes = max_bytes

    def accepts(self, path: str) -> bool:
        return is_warc_file(path)

    # ------------------------------------------------------------------ iteration with recovery
    def read_checked_file(self, filepath: str) -> DocumentsPipeline:
        if not self.accepts(filepath):
            skip_file(self, filepath)
            return
        size = self.data_folder.size(filepath)
        with self.data_folder.open(filepath, "rb") as handle:
            # sniff rather than trust the name: fastwarc reads a plain WARC called .gz, and so must the checks
            head = handle.read(len(WARC_MAGIC))
            is_gz = (bool(head) and GZIP_MAGIC.startswith(head[:2])) or (
                filepath.lower().endswith(".gz") and not head.startswith(b"WARC/")
            )
            yield from count_if_empty(self, self._read_stream(handle, filepath, is_gz, size))

    def _read_stream(self, f: IO[bytes], file: str, is_gz: bool, size: int) -> DocumentsPipeline:
        damaged_types = (WarcRecordType.no_type, WarcRecordType.unknown)
        pos = 0
        in_bad_region = False  # a corrupt region was reported and we are looking for the next good record
        while True:
            f.seek(pos)
            last_start: int | None = None
            current: int | None = None
            # a record whose WARC-Type is missing/unknown is a damaged header -- or the last header, cut by the
            # end of the file; which one is known only once the tail is checked, so its placeholder waits
            pending: Document | None = None
            resume: int | None = None  # where the record after one with a lying Content-Length starts
            try:
                for record in ArchiveIterator(f, parse_http=False):
                    current = record.stream_pos
                    if pending is not None:
                        yield self._count(pending)
                        pending = None
                    if record.record_type in damaged_types:
                        detail = f"WARC-Type {record.headers.get('WARC-Type')!r}"
                        pending = placeholder(self.source, file, current, "corrupt_record", detail)
                        last_start, current = current, None
                        continue
                    with self.track_time():
                        doc, truncated = self._record(record, file)
                    if truncated:
                        resume = self._after_lying_record(f, current, is_gz)
                        if resume is None:
                            yield self._count(placeholder(self.source, file, current, "truncated_file", "payload cut"))
                            return
                        detail = "the declared Content-Length runs past the record's end; read on from the next record"
                        yield self._count(placeholder(self.source, file, current, "corrupt_record", detail))
                        break
                    if doc is not None:
                        yield doc
                    in_bad_region = False
                    last_start, current = current, None
            except (OSError, ValueError, EOFError, zlib.error) as error:
                if pending is not None:  # the damaged header and the failure are one bad region
                    yield self._count(pending)
                    pending, in_bad_region = None, True
                bad = self._failure_start(f, current, last_start, pos, is_gz)
                following = self._next_start(f, bad + 1, is_gz)
                if not in_bad_region:
                    rule = "corrupt_record" if following is not None else self._classify(f, bad, is_gz, size)
                    yield self._count(placeholder(self.source, file, bad, rule, f"{type(error).__name__}: {error}"))
                if following is None:
                    return
                pos, in_bad_region = following, True
                continue
            if resume is not None:
                pos, in_bad_region = resume, False
                continue
            yield from self._at_end(f, file, pending, last_start, pos, in_bad_region, is_gz, size)
            return

    def _failure_start(self, f: IO[bytes], current: int | None, last_start: int | None, pos: int, is_gz: bool) -> int:
        """Where the bad region of a read failure starts: the record being read, else just after the last record
        read (its end; past blank lines in a plain WARC), else where this pass began."""
        if current is not None:
            return current
        if last_start is not None:
            end = self._record_end(f, last_start, is_gz)
            return last_start + 1 if end is None else end if is_gz else _skip_space(f, end)
        return pos

    def _at_end(
        self,
        f: IO[bytes],
        file: str,
        pending: Document | None,
        last_start: int | None,
        pos: int,
        in_bad_region: bool,
        is_gz: bool,
        size: int,
    ) -> DocumentsPipeline:
        """The iterator ran out: the damaged header still pending (unless it is the file's cut last record, which
        the tail check reports) and any damage after the last readable record (unless already in a bad region)."""
        problem = self._verify_tail(f, last_start, pos, is_gz, size)
        if pending is not None and problem != ("truncated_file", last_start):
            yield self._count(pending)
        if problem is not None and not (in_bad_region and last_start is None):
            rule, where = problem
            yield self._count(placeholder(self.source, file, where, rule, "damage after the last readable record"))

    def _count(self, doc: Document) -> Document:
        self.stat_update(doc.metadata["read_error"])
        return doc

    # ------------------------------------------------------------------ one record
    def _record(self, record, file: str) -> tuple[Document | None, bool]:
        """Turn one record into a document (or None for non-document types); True = the payload was cut."""
        rtype = record.record_type
        if rtype == WarcRecordType.response:
            return self._response(record, file)
        if rtype == WarcRecordType.conversion:
            return self._conversion(record, file)
        kind = str(rtype).rsplit(".", 1)[-1]
        self.stat_update("skipped_records", f"skipped_{kind}")
        return None, False

    def _base_metadata(self, record, file: str) -> dict:
        return {
            "source": self.source,
            "url": record.headers.get("WARC-Target-URI"),
            "date": record.headers.get("WARC-Date"),
            "file": file,
            "offset": record.stream_pos,
        }

    def _response(self, record, file: str) -> tuple[Document | None, bool]:
        start = record.stream_pos
        doc_id = clean_record_id(record.record_id) or f"{file}#{start}"
        meta = self._base_metadata(record, file)
        if record.is_http:
            try:
                record.parse_http(quirks_mode=True)
            except OSError as error:
                return self._error(record, file, "corrupt_record", f"HTTP header: {error}", meta)
            if record.http_headers is None:
                return self._error(record, file, "corrupt_record", "unparseable HTTP header", meta)
        http = record.http_headers
        meta["http_status"] = http.status_code if http is not None else None
        content_type = record.http_content_type or record.headers.get("WARC-Identified-Payload-Type")
        meta["content_type"] = content_type
        length = record.content_length
        if length > self.max_bytes:
            return self._error(record, file, "too_large", f"{length} bytes > max_bytes {self.max_bytes}", meta)
        is_html = None if not content_type else content_type.split(";")[0].strip().lower() in HTML_MIME_TYPES
        if is_html is False:
            return self._binary(record, doc_id, meta)
        body = record.reader.read()
        if len(body) < length:
            return None, True
        if is_html is None and not looks_like_html(body):
            meta["format"] = "binary"
            return Document(text="", id=doc_id, metadata=meta), False
        if http is not None:
            body, decode_error = self._decode_http(body, http)
            if decode_error:
                return self._error(record, file, decode_error[0], decode_error[1], meta, drained=True)
        meta["format"] = "html"
        return Document(text=decode_bytes(body, record.http_charset, html=True), id=doc_id, metadata=meta), False

    def _conversion(self, record, file: str) -> tuple[Document | None, bool]:
        start = record.stream_pos
        meta = self._base_metadata(record, file)
        meta["format"] = "text"
        meta["content_type"] = record.headers.get("Content-Type")
        length = record.content_length
        if length > self.max_bytes:
            return self._error(record, file, "too_large", f"{length} bytes > max_bytes {self.max_bytes}", meta)
        body = record.reader.read()
        if len(body) < length:
            return None, True
        doc_id = clean_record_id(record.record_id) or f"{file}#{start}"
        return Document(text=decode_bytes(body, "utf-8"), id=doc_id, metadata=meta), False

    def _binary(self, record, doc_id: str, meta: dict) -> tuple[Document | None, bool]:
        """A non-HTML response: kept as an empty ``binary`` document so extract counts it as ``non_html``."""
        expected = record.content_length  # read before draining: the property is the *remaining* length
        if _drain(record) < expected:
            return None, True
        meta["format"] = "binary"
        return Document(text="", id=doc_id, metadata=meta), False

    def _error(
        self, record, file: str, rule: str, detail: str, meta: dict, drained: bool = False
    ) -> tuple[Document | None, bool]:
        expected = record.content_length
        if not drained and _drain(record) < expected:
            return None, True
        extra = {k: meta.get(k) for k in ("url", "http_status", "content_type") if meta.get(k) is not None}
        return self._count(placeholder(self.source, file, record.stream_pos, rule, detail, **extra)), False

    def _decode_http(self, body: bytes, http) -> tuple[bytes, tuple[str, str] | None]:
        """Undo HTTP transfer/content encodings some crawlers keep in the payload (Common Crawl strips them)."""
        transfer = (http.get("Transfer-Encoding") or "").lower()
        content = (http.get("Content-Encoding") or "").strip().lower()
        if not transfer and content in ("", "identity"):
            return body, None

        try:
            if "chunked" in transfer:
                body = _read_upto(ChunkedReader(io.BytesIO(body)), self.max_bytes)
            if content in ("gzip", "x-gzip"):
                body = _read_upto(GzipReader(io.BytesIO(body)), self.max_bytes)
            elif content == "deflate":
                body = _read_upto(GzipReader(io.BytesIO(body), zlib=True), self.max_bytes)
            elif content == "br":
                body = _read_upto(BrotliReader(io.BytesIO(body)), self.max_bytes)
        except OSError:
            # a wrong label (Content-Encoding on an already decoded payload) is common: keep the bytes
            # as they are; if they are not text, extract's binary_payload gate drops them
            return body, None
        if len(body) > self.max_bytes:
            return body, ("too_large", f"decoded payload > max_bytes {self.max_bytes}")
        return body, None

    # ------------------------------------------------------------------ damage helpers
    def _record_end(self, f: IO[bytes], start: int, is_gz: bool) -> int | None:
        """Offset just past the record starting at ``start`` (gzip member end, or declared WARC length)."""
        if is_gz:
            end, status, _ = _member(f, start)
            return end if status == "ok" else None
        f.seek(start)
        head = f.read(_HEADER_LIMIT)
        split = head.find(b"\r\n\r\n")
        sep = 4
        if split < 0:
            split, sep = head.find(b"\n\n"), 2
        if split < 0:
            return None
        match = _CONTENT_LENGTH.search(head[:split])
        if match is None:
            return None
        return start + split + sep + int(match.group(1))

    def _after_lying_record(self, f: IO[bytes], start: int, is_gz: bool) -> int | None:
        """Where the next record starts after the record at ``start`` whose payload came up short of its declared
        ``Content-Length``: the record lied and the file goes on (``None``: nothing follows, the file was cut).

        fastwarc read the short payload on through what follows: in a ``.warc.gz`` of one gzip member per record
        (what crawlers write) the record's own member ends it, and the next member is the next record; in a plain
        WARC the next record is the first ``WARC/1.`` after a blank line past the record's header. A ``.warc.gz``
        that is one gzip stream cannot be entered in the middle, so there the lie still ends the file.
        """
        f.seek(start)
        if is_gz:
            if f.read(len(GZIP_MAGIC)) != GZIP_MAGIC:
                return None
            end, status, _ = _member(f, start)
            return self._next_start(f, end, is_gz) if status == "ok" else None
        head = f.read(_HEADER_LIMIT)
        split = head.find(b"\r\n\r\n")
        if split < 0:
            return None
        found = self._next_start(f, start + split + 2, is_gz, b"\r\n\r\n" + WARC_MAGIC)
        return None if found is None else found + 4

    def _next_start(self, f: IO[bytes], offset: int, is_gz: bool, magic: bytes | None = None) -> int | None:
        """First offset ≥ ``offset`` that may start a record (gzip member magic or a ``WARC/1.`` line), or of
        ``magic`` when given."""
        magic = magic or (GZIP_MAGIC if is_gz else WARC_MAGIC)
        f.seek(offset)
        carry = b""
        base = offset
        while True:
            chunk = f.read(CHUNK)
            if not chunk:
                return None
            data = carry + chunk
            found = data.find(magic)
            if found >= 0:
                return base + found
            keep = len(magic) - 1
            carry = data[-keep:]
            base += len(data) - len(carry)

    def _classify(self, f: IO[bytes], bad: int, is_gz: bool, size: int) -> str:
        """A bad region that runs to the end of the file: was the file cut, or is the region garbage?"""
        if is_gz:
            _, status, _ = _member(f, bad)
            return "truncated_file" if status == "truncated" else "corrupt_record"
        start = _skip_space(f, bad)
        f.seek(start)
        if not _cut_record_start(f.read(len(WARC_MAGIC)), WARC_MAGIC):
            return "corrupt_record"
        end = self._record_end(f, start, is_gz)
        return "truncated_file" if end is None or end > size else "corrupt_record"

    def _verify_tail(
        self, f: IO[bytes], last_start: int | None, pos: int, is_gz: bool, size: int
    ) -> tuple[str, int] | None:
        """After fastwarc stopped without an error: is there anything unread (a cut or ignored record)?"""
        if is_gz:
            offset, check_content = (pos if last_start is None else last_start), True
            f.seek(offset)
            if last_start is not None and f.read(len(GZIP_MAGIC)) != GZIP_MAGIC:
                # one gzip stream for many records (not one member per record): check the whole stream
                offset, check_content = 0, False
            first = True
            while offset < size:
                end, status, has_content = _member(f, offset)
                if status != "ok":
                    return ("truncated_file" if status == "truncated" else "corrupt_record"), offset
                explained = first and last_start is not None  # the last record's own member
                if check_content and has_content and not explained:
                    return "corrupt_record", offset  # a member fastwarc read past without a record
                first, offset = False, end
            return None
        offset = pos
        if last_start is not None:
            record_end = self._record_end(f, last_start, is_gz)
            if record_end is None or record_end > size:
                return "truncated_file", last_start
            offset = record_end
        f.seek(offset)
        rest = f.read(_HEADER_LIMIT)
        stripped = rest.lstrip()
        if not stripped:
            return None
        where = offset + len(rest) - len(stripped)
        return ("truncated_file" if _cut_record_start(stripped, WARC_MAGIC) else "corrupt_record"), where


def _skip_space(f: IO[bytes], offset: int) -> int:
    """First offset at or after ``offset`` that is not whitespace (records are separated by CRLF CRLF)."""
    f.seek(offset)
    head = f.read(_HEADER_LIMIT)
    return offset + len(head) - len(head.lstrip())


def _cut_record_start(head: bytes, magic: bytes) -> bool:
    """Whether bytes at a record boundary are a record start (possibly cut short by the end of the file)."""
    return head.startswith(magic) or (0 < len(head) < len(magic) and magic.startswith(head))


def _drain(record) -> int:
    """Read and discard a payload in chunks; returns how many bytes there really were."""
    total = 0
    while True:
        chunk = record.reader.read(CHUNK)
        if not chunk:
            return total
        total += len(chunk)


def _read_upto(reader, limit: int) -> bytes:
    """Read at most ``limit + 1`` bytes from a fastwarc stream reader (enough to tell 'too large')."""
    parts, total = [], 0
    while total <= limit:
        chunk = reader.read(min(CHUNK, limit + 1 - total))
        if not chunk:
            break
        parts.append(chunk)
        total += len(chunk)
    return b"".join(parts)


def _member(f: IO[bytes], start: int) -> tuple[int, str, bool]:
    """Decompress the gzip member at ``start``: (end offset, "ok" | "truncated" | "corrupt", has non-space data)."""
    f.seek(start)
    head = f.read(len(GZIP_MAGIC))
    if head != GZIP_MAGIC:
        return start, ("truncated" if head and GZIP_MAGIC.startswith(head) else "corrupt"), False
    f.seek(start)
    decompressor = zlib.decompressobj(wbits=31)
    consumed = 0
    has_content = False
    while True:
        chunk = f.read(CHUNK)
        if not chunk:
            return start + consumed, "truncated", has_content
        try:
            out = decompressor.decompress(chunk)
        except zlib.error:
            return start + consumed, "corrupt", has_content
        if not has_content and out.strip():
            has_content = True
        if decompressor.eof:
            return start + consumed + len(chunk) - len(decompressor.unused_data), "ok", has_content
        consumed += len(chunk)
