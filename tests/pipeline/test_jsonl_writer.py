"""``DocumentWriter`` writes the bytes datatrove's ``JsonlWriter`` writes, once decompressed (pipeline.jsonl_writer)."""

from __future__ import annotations

import dataclasses
import gzip
from collections import OrderedDict
from pathlib import Path

import numpy as np
from datatrove.data import Document, Media
from datatrove.pipeline.writers import JsonlWriter

from pipeline.jsonl_writer import GZIP3, DocumentWriter


@dataclasses.dataclass
class _Span:
    start: int
    _private: str = "left out by orjson, kept by asdict"


def _documents() -> list[Document]:
    nested = {"quality": {"words": 412, "alpha_ratio": 0.9312}, "pii": {"email": 2, "phone": 1}, "t": (1, [2.5])}
    return [
        Document(text="plain text", id="a", metadata={"source": "web", "url": "https://x.example/", **nested}),
        Document(text="ünïcödé ✓ 中文\n\tnext line", id="b", metadata={"scores": (0.5, 1), "tags": ["x", ["y"]]}),
        Document(text="numpy values", id="c", metadata={"score": np.float32(0.25), "n": np.int64(3), "ok": np.True_}),
        Document(text="", id="", metadata={}),  # every falsy field left out
        Document(text="no id", id="", metadata={"empty": {}, "none": None, "zero": 0, "false": False}),
        Document(text="a dataclass inside", id="d", metadata={"spans": [_Span(3)]}),
        Document(text="a dict subclass", id="f", metadata={"ordered": OrderedDict(b=1, a=2)}),
        Document(text="with media", id="e", media=[Media(id="m", type=0, url="u", media_bytes=b"\x00")]),
    ]


def _rows(writer_cls: type[JsonlWriter], folder: Path, compression: str | None) -> bytes:
    name = "${rank}.jsonl.gz" if compression else "${rank}.jsonl"
    with writer_cls(str(folder), output_filename=name, compression=compression) as writer:
        for document in _documents():
            writer.write(document, rank=0)
    data = (folder / name.replace("${rank}", "00000")).read_bytes()
    return gzip.decompress(data) if compression else data


def test_rows_are_datatroves_bytes(tmp_path: Path) -> None:
    ours = _rows(DocumentWriter, tmp_path / "ours", None)
    assert ours == _rows(JsonlWriter, tmp_path / "datatrove", None)
    assert b"_private" in ours  # the dataclass went through datatrove's adapter, every field kept
    assert ours.count(b"\n") == len(_documents())


def test_level_3_gzip_holds_the_same_rows(tmp_path: Path) -> None:
    assert _rows(DocumentWriter, tmp_path / "ours", GZIP3) == _rows(JsonlWriter, tmp_path / "datatrove", "gzip")


def test_the_row_shares_plain_metadata_and_copies_the_rest() -> None:
    writer = DocumentWriter("/nonexistent")
    by_id = {document.id: document for document in _documents()}
    assert writer._default_adapter(by_id["a"])["metadata"] is by_id["a"].metadata  # the deep copy it saves
    for other in ("c", "d", "f"):  # numpy values, a dataclass, a dict subclass: datatrove's adapter, a copy
        assert writer._default_adapter(by_id[other])["metadata"] is not by_id[other].metadata
