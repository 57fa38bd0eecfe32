"""WARC files written with warcio for the reader and leak tests."""

from __future__ import annotations

import io


def response(url: str, body: bytes, content_type: str = "text/html; charset=utf-8", status: str = "200 OK", **hdrs):
    return ("response", url, body, [("Content-Type", content_type), *hdrs.items()], status)


def write_warc(path, records, gzipped: bool = True) -> list[int]:
    """Write records with warcio; returns each record's start offset. Record ids are ``rec-<n>``."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    offsets = []
    with open(path, "wb") as handle:
        writer = WARCWriter(handle, gzip=gzipped)
        for n, (kind, url, payload, headers, status) in enumerate(records):
            offsets.append(handle.tell())
            record_id = f"<urn:uuid:00000000-0000-0000-0000-{n:012d}>"
            if kind == "warcinfo":
                record = writer.create_warcinfo_record("test.warc", {"software": "tests"})
            elif kind in ("response", "request"):
                http = StatusAndHeaders(status or "GET / HTTP/1.1", headers, protocol="HTTP/1.1")
                if kind == "request":
                    http = StatusAndHeaders("GET / HTTP/1.1", headers, is_http_request=True)
                record = writer.create_warc_record(
                    url,
                    kind,
                    payload=io.BytesIO(payload),
                    http_headers=http,
                    warc_headers_dict={"WARC-Record-ID": record_id},
                )
            else:  # metadata / conversion: a plain block
                record = writer.create_warc_record(
                    url,
                    kind,
                    payload=io.BytesIO(payload),
                    warc_content_type="text/plain",
                    warc_headers_dict={"WARC-Record-ID": record_id},
                )
            writer.write_record(record)
    return offsets


def write_lying_warc(path, records, liar: int, extra: int, gzipped: bool = True) -> None:
    """``write_warc`` of ``records``, then record ``liar``'s ``Content-Length`` raised by ``extra`` bytes (its
    payload unchanged): one record that lies about its length between honest ones. Gzipped, each record is its
    own gzip member, as crawlers write them."""
    import gzip
    import re
    from pathlib import Path

    plain = Path(str(path) + ".plain")
    offsets = write_warc(plain, records, gzipped=False)
    data = plain.read_bytes()
    plain.unlink()
    parts = [data[start:end] for start, end in zip(offsets, [*offsets[1:], len(data)], strict=True)]
    declared = re.search(rb"Content-Length: (\d+)", parts[liar])
    assert declared is not None
    parts[liar] = b"%s%d%s" % (
        parts[liar][: declared.start(1)],
        int(declared.group(1)) + extra,
        parts[liar][declared.end(1) :],
    )
    with open(path, "wb") as handle:
        handle.write(b"".join(gzip.compress(part) for part in parts) if gzipped else b"".join(parts))
