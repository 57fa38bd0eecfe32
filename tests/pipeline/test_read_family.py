"""One accounted reader family: curate, dedup and tokenize share the suffix table, the path → source-name rule
and the placeholder of a record they cannot read (``pipeline.read.common``)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from pipeline.dedup.io import DedupInput
from pipeline.read.common import discovered_kind, input_kind, source_name_for
from pipeline.read.tabular import is_jsonl_file, is_parquet_file
from pipeline.tokenize.inputs import default_source, discover_inputs, make_reader

NAMES = ("a.jsonl", "a.ndjson.gz", "a.jsonl.zst", "a.json.gz", "a.jsonl.bz2", "a.parquet", "a.parquet.gz", "a.txt")


def test_curate_dedup_and_tokenize_take_the_same_files(tmp_path: Path) -> None:
    for name in NAMES + ("stats.json",):
        (tmp_path / name).write_bytes(b"")
    dedup = DedupInput.dataset(str(tmp_path), "x").list_files()
    tokenize = discover_inputs(tmp_path).files
    curate = {
        "jsonl": sorted(n for n in NAMES + ("stats.json",) if is_jsonl_file(n) and n != "stats.json"),
        "parquet": sorted(n for n in NAMES if is_parquet_file(n)),
    }
    assert dedup == tokenize == curate
    assert curate == {
        "jsonl": ["a.json.gz", "a.jsonl", "a.jsonl.bz2", "a.jsonl.zst", "a.ndjson.gz"],
        "parquet": ["a.parquet"],
    }
    # a plain .json is a manifest when a folder is searched, and JSON Lines when it is named
    assert discovered_kind("stats.json") is None and input_kind("stats.json") == "jsonl"
    assert DedupInput.dataset(str(tmp_path / "stats.json"), "x").list_files() == {"jsonl": ["stats.json"]}


def test_one_source_name_rule_for_a_path() -> None:
    assert source_name_for("/data/Web Crawl.jsonl.gz") == "Web_Crawl"
    assert source_name_for("/data/docs/") == "docs"
    assert default_source("docs.ndjson.zst") == source_name_for("docs.ndjson.zst") == "docs"
    assert default_source("forum/part-0.jsonl") == "forum"


def test_tokenize_placeholders_follow_the_project_rule(tmp_path: Path) -> None:
    path = tmp_path / "web.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write(json.dumps({"text": "kept"}) + "\n{not json\n" + json.dumps({"id": "n", "text": None}) + "\n")
    plan = discover_inputs(path)
    docs = list(make_reader(plan, "jsonl", paths_file=None).read_file("web.jsonl.gz"))
    assert [d.text for d in docs] == ["kept", "", ""]
    assert [d.metadata.get("read_error") for d in docs] == [None, "bad_json", "missing_text"]
    assert [d.id for d in docs[1:]] == ["web.jsonl.gz#1", "web.jsonl.gz#2"]
    assert {d.metadata["source"] for d in docs} == {"web"} and docs[1].metadata["file"] == "web.jsonl.gz"


def test_dedup_and_tokenize_read_lines_with_the_curation_loop(tmp_path: Path) -> None:
    """One row loop: an undecodable byte is replaced and its row kept, a broken line is one placeholder at the
    same id, and a cut compressed file ends in one placeholder -- in curate, dedup and tokenize alike; dedup keeps
    a curated record's metadata exactly as written (no ``format``/``file`` added)."""
    from pipeline.dedup.io import DedupJsonlReader
    from pipeline.read.tabular import JsonlReader

    record = {"text": "caf\u00e9", "id": "r1", "metadata": {"source": "web", "url": "https://a.example/", "lang": "fr"}}
    lines = [json.dumps(record).encode(), b'{"text": "bad \xff byte", "id": "r2"}', b"{not json"]
    lines += [json.dumps({"text": f"row {i}", "id": f"n{i}"}).encode() for i in range(400)]
    whole = gzip.compress(b"\n".join(lines) + b"\n")
    folder = tmp_path / "web"
    folder.mkdir()
    (folder / "part.jsonl.gz").write_bytes(whole[: len(whole) * 2 // 3])
    (tmp_path / "paths.txt").write_text("web/part.jsonl.gz\n")

    curate = list(JsonlReader(str(tmp_path), source="web").read_file("web/part.jsonl.gz"))
    dedup = list(
        DedupJsonlReader(str(tmp_path), str(tmp_path / "paths.txt"), source_from_subfolder=True).read_file(
            "web/part.jsonl.gz"
        )
    )
    tokenize = list(make_reader(discover_inputs(tmp_path), "jsonl", paths_file=None).read_file("web/part.jsonl.gz"))
    for docs in (curate, dedup, tokenize):
        assert [d.text for d in docs[:2]] == ["caf\u00e9", "bad \ufffd byte"]
        assert [d.id for d in docs if d.metadata.get("read_error")][:1] == ["web/part.jsonl.gz#2"]
        assert (
            3 < len(docs) < len(lines) and docs[-1].text == "" and docs[-1].id == f"web/part.jsonl.gz#{len(docs) - 1}"
        )
    assert [d.metadata.get("read_error") for d in (curate[2], dedup[2], tokenize[2])] == ["bad_json"] * 3
    ends = [d.metadata["read_error"] for d in (curate[-1], dedup[-1], tokenize[-1])]
    assert ends == ["truncated_file", "truncated_file", "unreadable_file"]  # tokenize's manifest name for it
    assert dedup[0].metadata == record["metadata"]
    assert curate[0].metadata["format"] == "text" and curate[0].metadata["file"] == "web/part.jsonl.gz"
    assert {d.metadata["source"] for d in dedup + tokenize} == {"web"}
