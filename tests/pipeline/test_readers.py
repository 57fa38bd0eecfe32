"""Readers: WARC/WET, JSONL, Parquet, datasets, folders; bad input becomes counted placeholders or InputError."""

from __future__ import annotations

import gzip
import json
import random

import pytest

from pipeline.config import ReaderOptions, SourceConfig
from pipeline.read import InputError, build_reader, detect_kind, split_path
from pipeline.read.warc import WarcReader
from tests.helpers.warc import response, write_lying_warc, write_warc

# ---------------------------------------------------------------------------------------------- helpers


def html_page(i: int) -> bytes:
    return f"<html><body><h1>Page {i}</h1><p>Some text about topic {i}, café.</p></body></html>".encode()


def read_all(reader) -> list:
    return list(reader.run())


def stat(reader, key: str) -> float:
    stats = reader.stats.stats
    return stats[key].total if key in stats else 0


def source(path, kind: str = "auto", **options) -> SourceConfig:
    return SourceConfig(name="src", kind=kind, path=str(path), options=ReaderOptions(**options))


def good(docs):
    return [d for d in docs if not d.metadata.get("read_error")]


def errors(docs):
    return [d.metadata["read_error"] for d in docs if d.metadata.get("read_error")]


def crawl(n: int = 5):
    return [("warcinfo", None, b"", [], None)] + [response(f"http://example.com/{i}", html_page(i)) for i in range(n)]


# ---------------------------------------------------------------------------------------------- WARC / WET


def test_warc_records_become_documents_with_metadata(tmp_path):
    records = [
        ("warcinfo", None, b"", [], None),
        ("request", "http://example.com/a", b"", [("Host", "example.com")], None),
        response("http://example.com/a", html_page(1)),
        ("metadata", "http://example.com/a", b"fetchTimeMs: 12\n", [], None),
        response("http://example.com/missing", b"<html>gone</html>", status="404 Not Found"),
        response("http://example.com/logo.png", b"\x89PNG\r\n\x1a\n" + bytes(200), content_type="image/png"),
    ]
    write_warc(tmp_path / "crawl.warc.gz", records)
    reader = build_reader(source(tmp_path / "crawl.warc.gz"))
    assert isinstance(reader, WarcReader)
    docs = read_all(reader)
    assert [d.metadata["format"] for d in docs] == ["html", "html", "binary"]
    page = docs[0]
    assert page.id == "00000000-0000-0000-0000-000000000002"
    assert page.metadata["url"] == "http://example.com/a"
    assert page.metadata["http_status"] == 200 and page.metadata["content_type"] == "text/html"
    assert page.metadata["source"] == "src" and "café" in page.text
    assert docs[1].metadata["http_status"] == 404  # not filtered here: extract drops it as http_status
    assert docs[2].text == "" and docs[2].metadata["content_type"] == "image/png"
    assert stat(reader, "skipped_request") == 1 and stat(reader, "skipped_metadata") == 1
    assert stat(reader, "skipped_warcinfo") == 1
    assert stat(reader, "documents") == 3


def test_ids_are_stable_across_reads_and_glob_paths(tmp_path):
    (tmp_path / "crawl").mkdir()
    write_warc(tmp_path / "crawl" / "a.warc.gz", crawl(3))
    write_warc(tmp_path / "crawl" / "b.warc", crawl(2), gzipped=False)
    (tmp_path / "crawl" / "notes.txt").write_text("not a warc")
    first = read_all(build_reader(source(tmp_path / "crawl" / "*.warc*")))
    second = read_all(build_reader(source(tmp_path / "crawl" / "*.warc*")))
    assert [d.id for d in first] == [d.id for d in second]
    assert len(first) == 5
    assert detect_kind(str(tmp_path / "crawl")) == "warc"
    folder_reader = build_reader(source(tmp_path / "crawl"))
    assert len(read_all(folder_reader)) == 5
    assert stat(folder_reader, "skipped_files") == 1  # notes.txt: listed, not a WARC, counted


def test_ranks_split_files_and_limit_applies(tmp_path):
    for name in "abc":
        write_warc(tmp_path / f"{name}.warc.gz", crawl(2))
    reader = build_reader(source(tmp_path))
    ids = [d.id + d.metadata["file"] for rank in range(2) for d in reader.run(rank=rank, world_size=2)]
    assert len(ids) == len(set(ids)) == 6
    limited = build_reader(source(tmp_path, limit=3))
    assert len(read_all(limited)) == 3


def test_wet_conversion_records_are_text(tmp_path):
    records = [
        ("warcinfo", None, b"", [], None),
        ("conversion", "http://example.com/1", "Plain text, naïve.\nSecond line.".encode(), [], None),
        ("conversion", "http://example.com/2", b"Another page", [], None),
    ]
    write_warc(tmp_path / "x.warc.wet.gz", records)
    docs = read_all(build_reader(source(tmp_path / "x.warc.wet.gz")))
    assert [d.metadata["format"] for d in docs] == ["text", "text"]
    assert docs[0].text.startswith("Plain text, naïve.") and docs[0].metadata["url"] == "http://example.com/1"
    assert docs[1].id == "00000000-0000-0000-0000-000000000002"


def test_truncated_gzip_warc_yields_records_before_the_cut_then_one_error(tmp_path):
    path = tmp_path / "cut.warc.gz"
    offsets = write_warc(path, crawl(5))
    data = path.read_bytes()
    path.write_bytes(data[: offsets[4] + 40])  # cut inside the 4th response's gzip member
    docs = read_all(build_reader(source(path)))
    assert [d.metadata.get("url") for d in good(docs)] == [f"http://example.com/{i}" for i in range(3)]
    assert errors(docs) == ["truncated_file"]
    placeholder = docs[-1]
    assert placeholder.text == "" and placeholder.id == f"cut.warc.gz#{offsets[4]}"
    assert placeholder.metadata["source"] == "src" and placeholder.metadata["file"] == "cut.warc.gz"


@pytest.mark.parametrize("gzipped", [True, False])
def test_corrupt_record_among_good_ones(tmp_path, gzipped):
    path = tmp_path / ("bad.warc.gz" if gzipped else "bad.warc")
    offsets = write_warc(path, crawl(5), gzipped=gzipped)
    data = bytearray(path.read_bytes())
    middle = offsets[3]  # response 2 of 0..4
    at = middle + 20 if gzipped else middle  # inside its deflate data / over its "WARC/1.0" line
    data[at : at + 40] = b"\x00" * 40
    path.write_bytes(bytes(data))
    docs = read_all(build_reader(source(path)))
    urls = [d.metadata["url"] for d in good(docs)]
    assert urls == [f"http://example.com/{i}" for i in (0, 1, 3, 4)]  # reading went on after the bad record
    assert errors(docs) == ["corrupt_record"]


@pytest.mark.parametrize("gzipped", [True, False])
def test_lying_content_length_is_one_damaged_record_and_the_records_after_it_are_read(tmp_path, gzipped):
    """Issue 19 item 4: a record declaring more bytes than the file holds no longer ends the file as
    ``truncated_file``; it is one ``corrupt_record`` and the reader resynchronises on the next record."""
    path = tmp_path / ("lie.warc.gz" if gzipped else "lie.warc")
    records = [response(f"http://example.com/{i}", html_page(i)) for i in range(5)]
    write_lying_warc(path, records, liar=2, extra=100_000, gzipped=gzipped)
    reader = WarcReader(str(tmp_path), source="s")
    docs = read_all(reader)
    assert [d.metadata["url"] for d in good(docs)] == [f"http://example.com/{i}" for i in (0, 1, 3, 4)]
    assert errors(docs) == ["corrupt_record"] and stat(reader, "corrupt_record") == 1
    assert stat(reader, "truncated_file") == 0


def test_undecodable_bytes_are_replaced_and_document_kept(tmp_path):
    bad_utf8 = "<html><body><p>café crème brûlée</p>".encode() + b"\xff\xfe broken \x81" + b"</body></html>"
    cp1252 = "<html><body><p>" + "déjà vu, naïve café. " * 20 + "</p></body></html>"
    records = [
        response("http://example.com/bad", bad_utf8),
        response("http://example.com/cp", cp1252.encode("cp1252")),  # labelled utf-8, really cp1252
        response("http://example.com/weird", html_page(3), content_type="text/html; charset=no-such-charset"),
    ]
    write_warc(tmp_path / "enc.warc.gz", records)
    docs = read_all(build_reader(source(tmp_path / "enc.warc.gz")))
    assert len(docs) == 3 and not errors(docs)
    assert "café crème brûlée" in docs[0].text and "\ufffd" in docs[0].text
    assert "déjà vu, naïve café." in docs[1].text
    assert "Page 3" in docs[2].text


UNDEFINED_IN_CP1252 = b"\x81\x8d\x8f\x90\x9d"


def test_cp1252_with_bytes_cp1252_leaves_undefined_decodes_as_latin1_there(tmp_path):
    """Issue 11: such a file decoded as UTF-8 with U+FFFD everywhere; now it is WHATWG windows-1252 (the five
    undefined bytes are their Latin-1 code points), in a folder text file and in a WARC page labelled so."""
    import textwrap

    text = textwrap.__doc__ + " Le café « déjà vu » coûte 5 € — naïve “quotes”.\n"  # real text plus cp1252 letters
    data = text.encode("cp1252") + b"odd bytes " + UNDEFINED_IN_CP1252 + b" end\n"
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "note.txt").write_bytes(data)
    html = b"<html><body><p>" + data + b"</p></body></html>"
    records = [
        response("http://example.com/labelled", html, content_type="text/html; charset=windows-1252"),
        response("http://example.com/unlabelled", html, content_type="text/html"),
        response("http://example.com/latin1", b"<p>5 \x80 caf\xe9</p>", content_type="text/html; charset=iso-8859-1"),
    ]
    write_warc(tmp_path / "enc.warc.gz", records)
    expected = text + "odd bytes \x81\x8d\x8f\x90\x9d end\n"
    (doc,) = read_all(build_reader(source(tmp_path / "docs")))
    assert doc.text == expected and "\ufffd" not in doc.text
    labelled, unlabelled, latin1 = read_all(build_reader(source(tmp_path / "enc.warc.gz")))
    for page in (labelled, unlabelled):
        assert expected in page.text and "\ufffd" not in page.text
    assert latin1.text == "<p>5 € café</p>"  # WHATWG: the iso-8859-1 label means windows-1252


def test_mostly_utf8_with_a_few_bad_bytes_stays_utf8(tmp_path):
    from pipeline.read.common import decode_bytes

    data = "naïve café déjà vu, Grüße ".encode() * 3 + UNDEFINED_IN_CP1252
    decoded = decode_bytes(data, "windows-1252")
    assert decoded.startswith("naïve café déjà vu, Grüße") and decoded.count("\ufffd") == 5


def test_empty_files_give_no_documents(tmp_path):
    (tmp_path / "empty.warc.gz").write_bytes(b"")
    (tmp_path / "empty.warc").write_bytes(b"")
    (tmp_path / "empty.jsonl").write_bytes(b"")
    assert read_all(build_reader(source(tmp_path / "empty.warc.gz"))) == []
    assert read_all(build_reader(source(tmp_path / "empty.warc"))) == []
    assert read_all(build_reader(source(tmp_path / "empty.jsonl"))) == []


def test_empty_folder_and_missing_path_raise_input_error(tmp_path):
    empty = tmp_path / "nothing_here"
    empty.mkdir()
    with pytest.raises(InputError, match="nothing_here"):
        build_reader(source(empty))
    with pytest.raises(InputError, match="nothing_here"):
        build_reader(source(empty, kind="folder"))
    (empty / "readme.pdf").write_bytes(b"%PDF")
    with pytest.raises(InputError, match=r"nothing_here.*looked for documents"):
        build_reader(source(empty, kind="folder"))
    missing = tmp_path / "no" / "such.warc.gz"
    with pytest.raises(InputError, match="no/such.warc.gz"):
        build_reader(source(missing))
    with pytest.raises(InputError, match="no/such.warc.gz"):
        build_reader(source(missing, kind="warc"))
    with pytest.raises(InputError, match=r"\*\.warc\.gz.*matches no file"):
        build_reader(source(tmp_path / "*.warc.gz"))


def test_fifty_megabyte_document_and_max_bytes(tmp_path):
    big = b"<html><body><p>" + b"lorem ipsum dolor sit amet " * (50 * 1024 * 1024 // 27) + b"</p></body></html>"
    records = [response("http://example.com/small", html_page(1)), response("http://example.com/big", big)]
    write_warc(tmp_path / "big.warc", records, gzipped=False)
    ids = [[d.id for d in read_all(build_reader(source(tmp_path / "big.warc")))] for _ in range(2)]
    assert ids[0] == ids[1] and len(ids[0]) == 2
    capped = read_all(build_reader(source(tmp_path / "big.warc", max_bytes=10 * 1024 * 1024)))
    assert errors(capped) == ["too_large"] and capped[1].text == ""
    assert capped[1].metadata["url"] == "http://example.com/big"
    # the same through JSONL: a 50 MB line is read whole, or skipped in bounded reads when over max_bytes
    text = "word " * (10 * 1024 * 1024)
    with open(tmp_path / "big.jsonl", "w") as handle:
        handle.write(json.dumps({"text": "short"}) + "\n" + json.dumps({"text": text}) + "\n")
        handle.write(json.dumps({"text": "after"}) + "\n")
    # read whole when max_bytes allows it (the default, 8 MiB since issue 12, drops it as too_large)
    docs = read_all(build_reader(source(tmp_path / "big.jsonl", max_bytes=64 * 1024 * 1024)))
    assert [len(d.text) for d in docs] == [5, len(text), 5]
    assert errors(read_all(build_reader(source(tmp_path / "big.jsonl")))) == ["too_large"]
    capped = read_all(build_reader(source(tmp_path / "big.jsonl", max_bytes=1024 * 1024)))
    assert errors(capped) == ["too_large"] and [d.text for d in good(capped)] == ["short", "after"]
    assert capped[1].id == "big.jsonl#1"


def test_binary_payload_labelled_html_is_yielded_then_gated_by_extract(tmp_path):
    from pipeline.curate.extract import ExtractStage

    noise = random.Random(0).randbytes(4000)
    write_warc(tmp_path / "bin.warc.gz", [response("http://example.com/x.html", noise)])
    (doc,) = read_all(build_reader(source(tmp_path / "bin.warc.gz")))
    assert doc.metadata["format"] == "html"
    verdict = ExtractStage().gate(doc)
    assert verdict is not None and verdict.rule == "binary_payload"


def test_http_content_encoding_is_decoded(tmp_path):
    page = html_page(7)
    records = [response("http://example.com/gz", gzip.compress(page), **{"Content-Encoding": "gzip"})]
    write_warc(tmp_path / "enc.warc", records, gzipped=False)
    (doc,) = read_all(build_reader(source(tmp_path / "enc.warc")))
    assert "Page 7" in doc.text


# ---------------------------------------------------------------------------------------------- JSONL


def jsonl_lines(n: int = 3) -> bytes:
    rows = [{"text": f"document {i}", "url": f"http://x/{i}", "lang": "en"} for i in range(n)]
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def test_jsonl_gz_and_zst(tmp_path):
    import zstandard

    (tmp_path / "a.jsonl.gz").write_bytes(gzip.compress(jsonl_lines(3)))
    (tmp_path / "b.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(jsonl_lines(2)))
    assert detect_kind(str(tmp_path)) == "jsonl"
    docs = read_all(build_reader(source(tmp_path)))
    assert [d.id for d in docs] == ["a.jsonl.gz:0", "a.jsonl.gz:1", "a.jsonl.gz:2", "b.jsonl.zst:0", "b.jsonl.zst:1"]
    assert docs[0].text == "document 0" and docs[0].metadata["url"] == "http://x/0"
    assert docs[0].metadata["lang"] == "en" and docs[0].metadata["format"] == "text"


@pytest.mark.parametrize("suffix", [".jsonl.gz", ".jsonl.zst"])
def test_truncated_compressed_jsonl(tmp_path, suffix):
    import zstandard

    lines = b"".join(json.dumps({"text": f"line {i} " + "x" * 200, "n": i}).encode() + b"\n" for i in range(2000))
    compressed = gzip.compress(lines) if suffix == ".jsonl.gz" else zstandard.ZstdCompressor().compress(lines)
    path = tmp_path / f"cut{suffix}"
    path.write_bytes(compressed[: len(compressed) // 2])
    docs = read_all(build_reader(source(path)))
    assert errors(docs) == ["truncated_file"] and docs[-1].metadata.get("read_error")
    kept = good(docs)
    assert 0 < len(kept) < 2000 and [d.metadata["n"] for d in kept] == list(range(len(kept)))


def test_jsonl_bad_rows_are_counted_placeholders(tmp_path):
    lines = [
        b'{"text": "fine", "id": "doc-1"}',
        b"{not json",
        b'{"body": "wrong key"}',
        b'{"text": 42}',
        b'{"text": ""}',
        b"",
        b'{"text": "bad bytes \\u00e9 ' + b"\xff\xfe" + b'"}',
        b"[1, 2]",
    ]
    (tmp_path / "rows.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    reader = build_reader(source(tmp_path / "rows.jsonl"))
    docs = read_all(reader)
    assert [d.id for d in docs] == [
        "doc-1",
        "rows.jsonl#1",
        "rows.jsonl#2",
        "rows.jsonl#3",
        "rows.jsonl:4",
        "rows.jsonl:6",
        "rows.jsonl#7",
    ]
    assert errors(docs) == ["bad_json", "missing_text", "bad_text", "bad_json"]
    assert docs[4].text == ""  # empty text is kept: extract counts it as "empty"
    assert docs[5].text.startswith("bad bytes é") and "\ufffd" in docs[5].text
    assert stat(reader, "blank_lines") == 1 and stat(reader, "bad_json") == 2


def test_jsonl_null_text_is_bad_text(tmp_path):
    (tmp_path / "n.jsonl").write_bytes(b'{"text": null, "id": "a"}\n{"text": "", "id": "b"}\n')
    reader = build_reader(source(tmp_path / "n.jsonl"))
    null, empty = read_all(reader)
    assert null.id == "n.jsonl#0" and null.metadata["read_error"] == "bad_text"
    assert "null" in null.metadata["read_error_detail"]
    assert empty.id == "b" and empty.text == "" and not empty.metadata.get("read_error")  # extract counts it
    assert stat(reader, "bad_text") == 1


def test_jsonl_bad_line_detail_is_redacted(tmp_path):
    """A malformed line used to be copied, unredacted, into read_error_detail (issue 11)."""
    planted = ["jane.doe@example.com", "4111 1111 1111 1111", "q9w8e7r6t5y4"]
    line = f'{{"text": "write to {planted[0]}, card {planted[1]}", api_key = "{planted[2]}" broken'
    (tmp_path / "b.jsonl").write_text(line + "\n", encoding="utf-8")
    (doc,) = read_all(build_reader(source(tmp_path / "b.jsonl")))
    detail = doc.metadata["read_error_detail"]
    assert doc.metadata["read_error"] == "bad_json" and "write to" in detail and len(detail) <= 300
    assert not any(value in detail for value in planted)
    assert "1111" not in detail and "q9w8" not in detail  # no part of a value either


def test_jsonl_reads_own_curated_output_and_custom_keys(tmp_path):
    row = {"body": "hello", "uid": 7, "link": "http://y", "metadata": {"language": "en", "format": "html"}}
    (tmp_path / "c.jsonl").write_text(json.dumps(row) + "\n")
    (doc,) = read_all(build_reader(source(tmp_path / "c.jsonl", text_key="body", id_key="uid", url_key="link")))
    assert doc.id == "7" and doc.text == "hello" and doc.metadata["url"] == "http://y"
    assert doc.metadata["language"] == "en" and doc.metadata["format"] == "text"


# ---------------------------------------------------------------------------------------------- Parquet / datasets


def test_parquet_custom_text_column(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table(
        {
            "content": ["first", None, "x" * 5000, "fourth"],
            "stamp": pa.array([1, 2, 3, 4], pa.timestamp("s")),
            "blob": [b"\x00\x01", b"", b"", b""],
        }
    )
    pq.write_table(table, tmp_path / "t.parquet", row_group_size=2)
    assert detect_kind(str(tmp_path / "t.parquet")) == "parquet"
    docs = read_all(build_reader(source(tmp_path / "t.parquet", text_key="content", max_bytes=1000)))
    assert [d.id for d in docs] == ["t.parquet:0", "t.parquet#1", "t.parquet#2", "t.parquet:3"]
    assert docs[0].text == "first" and docs[3].text == "fourth"
    assert errors(docs) == ["bad_text", "too_large"]  # a null cell is no text (issue 11), not an empty document
    json.dumps(docs[0].metadata)  # timestamps/bytes were made writable
    with pytest.raises(InputError, match=r"t.parquet: no column 'text'.*content"):
        build_reader(source(tmp_path / "t.parquet"))


def test_corrupt_parquet_file_is_a_placeholder(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"text": ["a", "b"]}), tmp_path / "ok.parquet")
    (tmp_path / "zz.parquet").write_bytes(b"PAR1 not really parquet")
    docs = read_all(build_reader(source(tmp_path)))
    assert [d.text for d in good(docs)] == ["a", "b"] and errors(docs) == ["corrupt_file"]


def test_hf_save_to_disk_ids_do_not_depend_on_task_count(tmp_path):
    from datasets import Dataset, DatasetDict

    rows = {"text": [f"row {i}" for i in range(7)], "url": [f"http://h/{i}" for i in range(7)]}
    DatasetDict({"train": Dataset.from_dict(rows)}).save_to_disk(str(tmp_path / "ds"))
    assert detect_kind(str(tmp_path / "ds")) == "hf"
    reader = build_reader(source(tmp_path / "ds"))
    one = {d.id: d.text for d in reader.run()}
    two = {d.id: d.text for rank in range(2) for d in reader.run(rank=rank, world_size=2)}
    assert one == two and len(one) == 7 and one["ds/train:3"] == "row 3"
    with pytest.raises(InputError, match="no split 'test'"):
        build_reader(source(tmp_path / "ds", kind="hf", split="test"))
    with pytest.raises(InputError, match="no column 'body'"):
        build_reader(source(tmp_path / "ds", text_key="body"))


def test_hf_data_files_and_offline_hub_name(tmp_path, monkeypatch):
    (tmp_path / "d.jsonl").write_bytes(jsonl_lines(4))
    reader = build_reader(source(tmp_path / "d.jsonl", kind="hf"))
    reader.cache_dir = str(tmp_path / "cache")
    docs = read_all(reader)
    assert [d.text for d in docs] == [f"document {i}" for i in range(4)]
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    with pytest.raises(InputError, match=r"someone/some-dataset.*offline"):
        build_reader(source("someone/some-dataset", kind="hf"))


# ---------------------------------------------------------------------------------------------- folder


def test_folder_of_nested_documents(tmp_path):
    root = tmp_path / "docs"
    (root / "a" / "b").mkdir(parents=True)
    (root / "intro.txt").write_text("Plain text document.")
    (root / "a" / "guide.md").write_text("# Guide\n\nMarkdown body.")
    (root / "a" / "b" / "page.html").write_bytes(b"<html><body><p>Hello HTML</p></body></html>")
    (root / "a" / "b" / "more.jsonl").write_bytes(jsonl_lines(2))
    (root / "a" / "image.png").write_bytes(b"\x89PNG")
    (root / "a" / "empty.txt").write_bytes(b"")
    assert detect_kind(str(root)) == "folder"
    reader = build_reader(source(root))
    docs = {d.id: d for d in read_all(reader)}
    assert sorted(docs) == ["a/b/more.jsonl:0", "a/b/more.jsonl:1", "a/b/page.html", "a/guide.md", "intro.txt"]
    assert docs["a/b/page.html"].metadata["format"] == "html"
    assert docs["a/guide.md"].metadata["format"] == "text" and docs["intro.txt"].text == "Plain text document."
    assert all(d.metadata["source"] == "src" for d in docs.values())
    assert stat(reader, "skipped_files") == 1 and stat(reader, "skipped_ext_png") == 1
    assert stat(reader, "empty_files") == 1
    flat = build_reader(source(root, recursive=False))
    assert [d.id for d in read_all(flat)] == ["intro.txt"]


def test_single_file_paths_match_exactly(tmp_path):
    (tmp_path / "abc.txt").write_text("one")
    (tmp_path / "xabc.txt").write_text("two")
    (tmp_path / "a[1].jsonl").write_bytes(jsonl_lines(1))
    assert split_path(str(tmp_path / "abc.txt")) == (str(tmp_path), "[a]bc.txt", False)
    assert [d.text for d in read_all(build_reader(source(tmp_path / "abc.txt")))] == ["one"]
    assert [d.id for d in read_all(build_reader(source(tmp_path / "a[1].jsonl")))] == ["a[1].jsonl:0"]
