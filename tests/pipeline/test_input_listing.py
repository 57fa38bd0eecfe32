"""Issue 19, item 4: every listed input file is read or counted, and nothing a reader lists can hang it.

A FIFO, a socket or a device in an input folder is skipped without being opened (opening a FIFO blocks for
ever); a name that is not UTF-8 is read and shown escaped; a run folder inside the input is not input.
The documents are standard-library docstrings (text others wrote), built at run time.
"""

from __future__ import annotations

import gzip
import json
import os
import socket
import stat
from pathlib import Path

import pytest

from pipeline.config import ReaderOptions, SourceConfig
from pipeline.read import build_reader
from tests.flows.test_warnings import MODULES, curate_in_process, pydoc_text
from tests.helpers.warc import response, write_warc


def reader_for(folder: Path, kind: str = "auto"):
    return build_reader(SourceConfig(name="src", kind=kind, path=str(folder), options=ReaderOptions()))


def counters(reader) -> dict[str, float]:
    return {key: value.total for key, value in reader.stats.stats.items()}


def refuse_special_opens(monkeypatch, reader) -> None:
    """Make opening anything but a regular file fail the test at once (instead of blocking on a FIFO)."""
    folder = reader.data_folder
    original = folder.open

    def guarded(path, *args, **kwargs):
        full = os.path.join(folder.path, path)
        if not stat.S_ISREG(os.stat(full).st_mode):
            raise AssertionError(f"the reader opened {path}, which is not a regular file")
        return original(path, *args, **kwargs)

    monkeypatch.setattr(folder, "open", guarded)


def special_files(folder: Path, fifo: bool = True) -> socket.socket:
    """A FIFO, a socket, a symlink to a character device, a broken symlink, all with a document's name."""
    if fifo:
        os.mkfifo(folder / "x.txt")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(folder / "s.txt"))
    (folder / "null.txt").symlink_to("/dev/null")
    (folder / "gone.txt").symlink_to(folder / "missing.txt")
    return listener


@pytest.mark.parametrize("kind", ["folder", "jsonl", "warc"])
def test_fifo_socket_and_device_are_skipped_and_counted_without_being_opened(tmp_path: Path, monkeypatch, kind):
    folder = tmp_path / "in"
    folder.mkdir()
    name = {"folder": "a.txt", "jsonl": "a.jsonl", "warc": "a.warc.gz"}[kind]
    if kind == "folder":
        (folder / name).write_text(pydoc_text("json"), encoding="utf-8")
    elif kind == "jsonl":
        (folder / name).write_text(json.dumps({"text": pydoc_text("json")}) + "\n", encoding="utf-8")
    else:
        write_warc(folder / name, [response("http://example.com/", b"<html><body><p>json</p></body></html>")])
    special = {"folder": "", "jsonl": ".jsonl", "warc": ".warc.gz"}[kind]
    listener = special_files(folder) if kind == "folder" else None
    if kind != "folder":
        os.mkfifo(folder / f"x{special}")
        (folder / f"null{special}").symlink_to("/dev/null")
    (folder / f"link{special or '.txt'}").symlink_to(folder / name)
    try:
        reader = reader_for(folder, kind)
        refuse_special_opens(monkeypatch, reader)
        docs = list(reader.run())
    finally:
        if listener is not None:
            listener.close()
    assert len(docs) == 2 and not any(d.metadata.get("read_error") for d in docs)  # the file and its symlink
    got = counters(reader)
    assert got["not_regular_fifo"] == 1 and got["not_regular_char_device"] == 1 and got["symlinks_followed"] == 1
    if kind == "folder":
        assert got["not_regular_socket"] == 1 and got["not_regular_broken_symlink"] == 1


def test_non_regular_files_reach_the_report_with_a_reason(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in MODULES[:3]:
        (docs / f"{name}.txt").write_text(pydoc_text(name), encoding="utf-8")
    # no FIFO here: before the fix a curation blocked for ever opening it (the reader test above covers it)
    listener = special_files(docs, fifo=False)
    try:
        summary, run = curate_in_process(docs, tmp_path / "run")
    finally:
        listener.close()
    source = summary.sources[0]
    files = source["input_files"]
    reasons = {"socket": 1, "char_device": 1, "broken_symlink": 1}
    assert files["skipped_by_reason"] == reasons and files["listed"] == 6 and files["with_documents"] == 3
    assert source["read"] == 3 and source["balanced"]
    assert any("3 input files skipped without being opened" in w and "socket 1" in w for w in summary.warnings)
    report = (run / "report.md").read_text(encoding="utf-8")
    assert "| docs | 6 | 3 | 0 | — | broken symlink 1, char device 1, socket 1 | 0 | 0 |" in report


def test_undecodable_file_name_is_read_counted_and_shown_escaped(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "json.txt").write_text(pydoc_text("json"), encoding="utf-8")
    raw = os.path.join(os.fsencode(docs), b"caf\xe9-\xff.txt")
    with open(raw, "wb") as handle:
        handle.write(pydoc_text("textwrap").encode("utf-8"))
    summary, run = curate_in_process(docs, tmp_path / "run")
    source = summary.sources[0]
    assert source["read"] == 2 and source["balanced"]
    assert source["input_files"]["undecodable_names"] == 1
    ids = {
        json.loads(line)["id"] for p in run.rglob("*.jsonl.gz") for line in gzip.decompress(p.read_bytes()).splitlines()
    }
    assert "caf\\xe9-\\xff.txt" in ids and "json.txt" in ids
    from pipeline.read.listing import display_name

    assert display_name(os.fsdecode(b"caf\xe9-\xff.txt")) == "caf\\xe9-\\xff.txt"


def test_run_output_inside_the_input_folder_is_not_read_back(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in MODULES[:3]:
        (docs / f"{name}.txt").write_text(pydoc_text(name), encoding="utf-8")
    first, run = curate_in_process(docs, docs / "run")
    assert (run / "report.md").is_file()
    second, _ = curate_in_process(docs, docs / "run")
    source = second.sources[0]
    assert source["read"] == first.sources[0]["read"] == 3  # report.md and curated/ were not read as input
    files = source["input_files"]
    assert files["with_documents"] == 3 and files["skipped_by_reason"]["run_output"] >= 1


def rows_folder(tmp_path: Path) -> Path:
    """JSONL files of stdlib docstrings: one with a name that is not UTF-8, and a FIFO named like a JSONL file."""
    folder = tmp_path / "rows"
    folder.mkdir()
    for number, raw in enumerate([b"plain.jsonl", b"caf\xe9.jsonl"]):
        lines = [json.dumps({"id": f"{number}-{i}", "text": pydoc_text(name)}) for i, name in enumerate(MODULES[:4])]
        with open(os.path.join(os.fsencode(folder), raw), "wb") as handle:
            handle.write(("\n".join(lines) + "\n").encode("utf-8"))
    os.mkfifo(folder / "x.jsonl")
    return folder


@pytest.mark.parametrize("command", ["dedup", "tokenize"])
def test_dedup_and_tokenize_read_a_non_utf8_name_and_skip_a_fifo(tmp_path: Path, command: str) -> None:
    from typer.testing import CliRunner

    from flows.cli import app

    folder = rows_folder(tmp_path)
    out = tmp_path / "out"
    args = [command, "--input", str(folder), "--output", str(out)]
    args += ["--prefect", "off"] if command == "dedup" else ["--vocab-size", "300"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    if command == "dedup":
        stats = json.loads(next((out / "stages" / "dedup" / "logs" / "signatures").glob("stats.json")).read_text())
        reader = next(step for step in stats if "READER" in step["name"])["stats"]
        assert reader["not_regular_fifo"]["total"] == 1 and reader["undecodable_names"]["total"] == 1
    else:
        sources = json.loads((out / "manifest.json").read_text(encoding="utf-8"))["sources"]
        assert set(sources) == {"plain", "caf"}  # the FIFO is no source; the non-UTF-8 name is read
        assert all(s["documents"]["train"] + s["documents"]["heldout"] == 4 for s in sources.values())


def test_a_folder_with_a_run_record_inside_the_input_is_not_input(tmp_path: Path) -> None:
    from pipeline.ownership import RECORD_NAME

    docs = tmp_path / "docs"
    (docs / "shards").mkdir(parents=True)
    (docs / "json.txt").write_text(pydoc_text("json"), encoding="utf-8")
    (docs / "shards" / RECORD_NAME).write_text("{}", encoding="utf-8")
    (docs / "shards" / "notes.txt").write_text(pydoc_text("textwrap"), encoding="utf-8")
    reader = reader_for(docs, "folder")
    docs_read = list(reader.run())
    # the record and notes.txt: both below the run folder
    assert [d.id for d in docs_read] == ["json.txt"] and counters(reader)["skipped_run_output"] == 2
