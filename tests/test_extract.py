"""The extract stage: the HTTP-200 HTML gate, extraction in the sandbox, and every failure a counted drop."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
from datatrove.data import Document

import pipeline.stages.extract as extract_module
from pipeline.stages.extract import ExtractConfig, ExtractStage

PAGE = (
    "<html><body><nav><a href='/'>Home</a> <a href='/about'>About</a></nav><article><h1>Rates</h1>"
    "<p>The central bank kept its policy rate unchanged on Thursday and said inflation was easing.</p>"
    "<p>Analysts expect the first cut early next year if wage growth keeps slowing.</p></article>"
    "<footer>© 2026 Example News</footer></body></html>"
)


def html_doc(doc_id: str, text: str = PAGE, **meta) -> Document:
    return Document(text=text, id=doc_id, metadata={"source": "web", "format": "html", "http_status": 200, **meta})


def run_stage(stage: ExtractStage, docs: list[Document]) -> list[Document]:
    return list(stage.run(iter(docs), rank=0))


def drop_rows(drops: Path) -> dict[str, dict]:
    with gzip.open(drops / "extract" / "00000.jsonl.gz", "rt") as handle:
        return {row["id"]: row for row in map(json.loads, handle)}


def test_gate_and_extraction_keep_or_drop_every_document(tmp_path: Path) -> None:
    docs = [
        html_doc("ok"),
        html_doc("moved", http_status=301),
        html_doc("image", content_type="image/png"),
        html_doc("chrome-only", text="<html><body><nav><a href='/'>Home</a></nav></body></html>"),
        Document(text="plain notes", id="notes.txt", metadata={"source": "web", "format": "text"}),
        Document(text="", id="f#9", metadata={"source": "web", "read_error": "truncated_file", "file": "f"}),
    ]
    kept = run_stage(ExtractStage(drops_dir=str(tmp_path)), docs)
    assert [d.id for d in kept] == ["ok", "notes.txt"]
    assert "central bank" in kept[0].text and "Home" not in kept[0].text
    rows = drop_rows(tmp_path)
    assert {i: (r["stage"], r["rule"]) for i, r in rows.items()} == {
        "moved": ("extract", "http_status"),
        "image": ("extract", "non_html"),
        "chrome-only": ("extract", "empty_extraction"),
        "f#9": ("read", "truncated_file"),
    }
    assert rows["moved"]["score"] == 301 and rows["f#9"]["file"] == "f"


def test_extractor_failures_are_counted_drops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fragile(html: str, *args) -> str:  # runs in the forked sandbox child
        if "RAISE" in html:
            raise ValueError("parser gave up")
        if "DIE" in html:
            os._exit(3)
        if "HANG" in html:
            while True:
                pass
        return "extracted text"

    monkeypatch.setattr(extract_module, "extract_resiliparse", fragile)
    docs = [
        html_doc("raise", "<p>RAISE</p>"),
        html_doc("die", "<p>DIE</p>"),
        html_doc("hang", "<p>HANG</p>"),
        html_doc("after", "<p>fine</p>"),
    ]
    kept = run_stage(ExtractStage(ExtractConfig(timeout_s=0.5), drops_dir=str(tmp_path)), docs)
    assert [d.text for d in kept] == ["extracted text"]  # the sandbox is replaced and the run goes on
    rows = drop_rows(tmp_path)
    assert rows["raise"]["rule"] == "extraction_error" and "parser gave up" in rows["raise"]["error"]
    assert rows["die"]["rule"] == "extraction_error"
    assert rows["hang"]["rule"] == "extraction_timeout"
