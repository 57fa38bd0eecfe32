"""Writing pages as gzipped WARC/1.0 files with warcio: warcinfo, request and response records.

warcio writes one gzip member per record (what warcio's and datatrove's readers need; FastWARC 2's
writer emits WARC/1.1 in a single gzip stream, which warcio cannot iterate) and its gzip headers carry
no timestamp, so with dates and record ids drawn from the seed the files are byte-identical per seed.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from pathlib import Path
from typing import Any

from sample.article import Article

SAMPLE_VERSION = 1
REQUEST_SHARE = 0.35
_EPOCH = datetime(2024, 1, 1, tzinfo=timezone.utc)


@dataclass
class Page:
    """One crawled URL: what the server sent, and the truth entry that describes it."""

    url: str
    status: int
    reason: str
    content_type: str
    body: bytes
    truth: dict[str, Any]
    article: Article | None = None
    site: str = ""
    layout: str = "news"
    extra_headers: list[tuple[str, str]] = field(default_factory=list)


def _warc_date(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _urn(rng: random.Random) -> str:
    return f"<urn:uuid:{uuid.UUID(int=rng.getrandbits(128), version=4)}>"


def write_warcs(pages: list[Page], paths: list[Path], rng: random.Random, seed: int) -> int:
    """Write ``pages`` round-robin into ``paths``; fills each page's truth id/warc_file. Returns records."""
    from io import BytesIO

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    clock = _EPOCH + timedelta(seconds=rng.randrange(365 * 86400))
    records = 0
    for index, path in enumerate(paths):
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as handle:
            writer = WARCWriter(handle, gzip=True)
            info_id = _urn(rng)
            fields = (
                f"software: tokenmill sample/{SAMPLE_VERSION}\r\n"
                "format: WARC File Format 1.0\r\n"
                f"isPartOf: tokenmill-sample-seed-{seed}\r\n"
                f"description: synthetic crawl for tests and the demo (seed {seed}, file {index})\r\n"
                "robots: obey\r\n"
            ).encode()
            writer.write_record(
                writer.create_warc_record(
                    "",
                    "warcinfo",
                    payload=BytesIO(fields),
                    length=len(fields),
                    warc_content_type="application/warc-fields",
                    warc_headers_dict={
                        "WARC-Date": _warc_date(clock),
                        "WARC-Record-ID": info_id,
                        "WARC-Filename": path.name,
                    },
                )
            )
            records += 1
            for page in pages[index :: len(paths)]:
                clock += timedelta(seconds=rng.randint(1, 20))
                record_id = _urn(rng)
                page.truth["id"], page.truth["warc_file"] = record_id, path.name
                page.truth["doc_id"] = record_id[len("<urn:uuid:") : -1]
                host = page.url.split("/", 3)[2]
                target = "/" + page.url.split("/", 3)[3]
                if rng.random() < REQUEST_SHARE:
                    page.truth["has_request"] = True
                    request = StatusAndHeaders(
                        f"GET {target} HTTP/1.1",
                        [
                            ("Host", host),
                            ("User-Agent", "tokenmill-sample-crawler/1.0 (+https://example.org/bot)"),
                            ("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"),
                            ("Accept-Encoding", "identity"),
                        ],
                        is_http_request=True,
                    )
                    writer.write_record(
                        writer.create_warc_record(
                            page.url,
                            "request",
                            payload=BytesIO(b""),
                            length=0,
                            http_headers=request,
                            warc_headers_dict={
                                "WARC-Date": _warc_date(clock),
                                "WARC-Record-ID": _urn(rng),
                                "WARC-Concurrent-To": record_id,
                                "WARC-Warcinfo-ID": info_id,
                            },
                        )
                    )
                    records += 1
                headers = [
                    ("Date", format_datetime(clock, usegmt=True)),
                    ("Server", rng.choice(("nginx", "Apache", "cloudflare", "Microsoft-IIS/10.0"))),
                    ("Content-Type", page.content_type),
                    ("Content-Length", str(len(page.body))),
                    ("Cache-Control", "max-age=600"),
                    *page.extra_headers,
                ]
                http = StatusAndHeaders(f"{page.status} {page.reason}", headers, protocol="HTTP/1.1")
                writer.write_record(
                    writer.create_warc_record(
                        page.url,
                        "response",
                        payload=BytesIO(page.body),
                        length=len(page.body),
                        http_headers=http,
                        warc_headers_dict={
                            "WARC-Date": _warc_date(clock),
                            "WARC-Record-ID": record_id,
                            "WARC-Warcinfo-ID": info_id,
                            "WARC-Identified-Payload-Type": page.content_type.split(";")[0],
                        },
                    )
                )
                records += 1
    return records
