"""Issue 12, item 5: loud warnings at the end of a run, ``--text-key``/``--id-key``, input files counted.

The documents are text others wrote, generated at run time: the docstrings of standard-library modules (prose,
so that some survive the quality filters).
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.accounting import SourceAccount
from pipeline.config import RecipeError, load_recipe, parse_recipe
from pipeline.curate.build import curate_source
from pipeline.curate.report.warn import curation_warnings
from pipeline.run import CurationSummary, prepare_run_dir, resolve_run, write_curation_report

REPO = Path(__file__).resolve().parents[2]
DOMAIN = REPO / "configs" / "domain.yaml"
MODULES = ["json", "textwrap", "difflib", "calendar", "gzip", "csv", "argparse", "logging", "tarfile", "sched"]


def pydoc_text(name: str) -> str:
    """The prose paragraphs of a module's docstring and its public members' docstrings (code examples and
    indented blocks left out, so the quality filters see prose)."""
    module = __import__(name)
    docs = [inspect.getdoc(module) or ""]
    members = [obj for key, obj in vars(module).items() if not key.startswith("_")]
    docs += [inspect.getdoc(obj) or "" for obj in members if getattr(obj, "__module__", None) == name]
    paragraphs = [p for d in docs for p in d.split("\n\n")]
    prose = [p for p in paragraphs if len(p) > 60 and ">>>" not in p and "\n " not in p and p[0].isalpha()]
    return "\n\n".join(prose)


def write_rows(path: Path, text_field: str) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for i, name in enumerate(MODULES):
            handle.write(json.dumps({"doc_no": f"m{i}", text_field: pydoc_text(name), "topic": name}) + "\n")


def curate_in_process(input_path: Path, output: Path, **keys) -> tuple[CurationSummary, Path]:
    recipe = resolve_run(load_recipe(DOMAIN), str(input_path), str(output), **keys)
    recipe = recipe.model_copy(update={"executor": recipe.executor.model_copy(update={"tasks": 1, "workers": 1})})
    layout = prepare_run_dir(recipe)
    for source in recipe.sources:
        curate_source(recipe, source, layout)
    return write_curation_report(recipe, layout), layout.root


def test_every_row_without_the_text_field_is_named_with_the_fields_and_the_key(tmp_path: Path) -> None:
    rows = tmp_path / "articles.jsonl"
    write_rows(rows, "body")
    summary, run = curate_in_process(rows, tmp_path / "run")
    source = summary.sources[0]
    assert source["read"] == len(MODULES) and source["kept_final"] == 0
    assert source["dropped"] == {"read": {"missing_text": len(MODULES)}}
    assert set(source["missing_text_fields"]) == {"body", "doc_no", "topic"}
    (warning,) = [w for w in summary.warnings if "missing_text" in w]
    assert "every document" in warning and "'text'" in warning
    assert "body, doc_no, topic" in warning and "options.text_key" in warning and "--text-key" in warning
    assert any("nothing kept" in w for w in summary.warnings)
    report = (run / "report.md").read_text(encoding="utf-8")
    assert "### Warnings" in report and "--text-key FIELD" in report
    assert json.loads((run / "report.json").read_text())["curation"]["warnings"] == summary.warnings


def test_text_key_and_id_key_reach_the_reader(tmp_path: Path) -> None:
    rows = tmp_path / "articles.jsonl"
    write_rows(rows, "body")
    summary, run = curate_in_process(rows, tmp_path / "run", text_key="body", id_key="doc_no")
    source = summary.sources[0]
    assert "read" not in source["dropped"]  # every row has its text now
    assert source["read"] == source["kept_final"] + source["dropped_total"] and source["kept_final"] > 0
    assert not [w for w in summary.warnings if "missing_text" in w]
    config = load_recipe(run / "config.yaml")
    assert (config.sources[0].options.text_key, config.sources[0].options.id_key) == ("body", "doc_no")
    import gzip

    ids = set()
    for path in (run / "curated").glob("*/*.jsonl.gz"):
        with gzip.open(path, "rt") as handle:
            ids |= {json.loads(line)["id"] for line in handle}
    assert ids and ids <= {f"m{i}" for i in range(len(MODULES))}  # ids come from --id-key


def test_text_key_without_input_is_a_user_error(tmp_path: Path) -> None:
    from flows.cli import app

    with pytest.raises(RecipeError, match="--input"):
        resolve_run(load_recipe(DOMAIN), None, str(tmp_path / "run"), text_key="body")
    result = CliRunner().invoke(app, ["curate", str(DOMAIN), "--text-key", "body", "--output", str(tmp_path / "r")])
    assert result.exit_code == 2 and "--text-key/--id-key apply to --input" in result.output
    assert "Traceback" not in result.output
    assert "--text-key" in CliRunner().invoke(app, ["curate", "--help"]).output


def test_skipped_and_empty_input_files_are_counted_per_extension(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    for name in MODULES[:4]:
        (docs / f"{name}.txt").write_text(pydoc_text(name), encoding="utf-8")
    (docs / "README").write_text(pydoc_text("heapq"), encoding="utf-8")
    (docs / "notes.rst").write_text(pydoc_text("bisect"), encoding="utf-8")
    (docs / "sub" / "paper.pdf").write_bytes(b"%PDF-1.4\n")
    (docs / "sub" / "other.pdf").write_bytes(b"%PDF-1.4\n")
    (docs / "empty.txt").write_bytes(b"")
    (docs / "blank.jsonl").write_text("\n\n", encoding="utf-8")
    summary, run = curate_in_process(docs, tmp_path / "run")
    source = summary.sources[0]
    files = source["input_files"]
    assert files["skipped_by_extension"] == {"none": 1, "rst": 1, "pdf": 2}
    assert files["empty"] == 2 and files["listed"] == 10 and files["with_documents"] == 4
    assert source["read"] == 4 and source["balanced"]  # files are not documents: read counts documents only
    warnings = summary.warnings
    assert any("4 input files skipped by extension (.pdf 2, (no extension) 1, .rst 1)" in w for w in warnings)
    assert any("2 input files are empty" in w for w in warnings)
    report = (run / "report.md").read_text(encoding="utf-8")
    assert "### Input files" in report and "| docs | 10 | 4 | 2 | .pdf 2, (no extension) 1, .rst 1 |" in report


def account(read: int, dropped: dict[str, dict[str, int]], kept: int | None = None) -> SourceAccount:
    total = sum(sum(r.values()) for r in dropped.values())
    return SourceAccount(source="web", read=read, kept_final=read - total if kept is None else kept, dropped=dropped)


def test_a_rule_over_the_threshold_is_named_with_its_share() -> None:
    web = account(200, {"quality": {"gopher_short_doc": 120, "c4_too_few_sentences": 30}})
    (warning,) = curation_warnings([web])
    assert "quality/gopher_short_doc dropped 120 of 200 documents (60.0 %)" in warning
    assert "report.warn_drop_share 0.5" in warning
    assert curation_warnings([web], warn_drop_share=0.6) == []  # exactly 60 % is not more than 60 %
    assert len(curation_warnings([web], warn_drop_share=0.1)) == 2
    assert curation_warnings([account(200, {"quality": {"gopher_short_doc": 100}})]) == []  # half is not more


def test_report_section_is_strictly_validated_and_reaches_the_report() -> None:
    base = {"name": "x", "output_dir": "runs/x", "sources": [{"name": "a", "path": "data"}]}
    assert parse_recipe(base).report.warn_drop_share == 0.5
    assert parse_recipe(base | {"report": {"warn_drop_share": 0.2}}).report.warn_drop_share == 0.2
    with pytest.raises(RecipeError, match="report.warn_share"):
        parse_recipe(base | {"report": {"warn_share": 0.2}})
    with pytest.raises(RecipeError, match="report.warn_drop_share"):
        parse_recipe(base | {"report": {"warn_drop_share": 1.5}})


def test_the_cli_prints_the_warnings_and_logs_them(tmp_path: Path) -> None:
    """One real CLI run (embedded Prefect): the warning is in the CLI output and in the flow log."""
    rows = tmp_path / "articles.jsonl"
    write_rows(rows, "body")
    env = {**os.environ, "PREFECT_HOME": str(tmp_path / "prefect")}
    env.pop("PREFECT_API_URL", None)
    command = [sys.executable, "-m", "flows.cli", "curate", str(DOMAIN), "--input", str(rows), "--prefect", "embedded"]
    done = subprocess.run(
        [*command, "--output", str(tmp_path / "run")], capture_output=True, text=True, env=env, check=False, cwd=REPO
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "warning:" in output and "set options.text_key" in output
    assert "WARNING" in output  # the flow logger's line (Prefect's console handler)
    assert "Traceback" not in output


def test_every_reader_counts_skipped_and_empty_files(tmp_path: Path) -> None:
    """WARC, JSONL and Parquet readers count skipped files per extension and empty files like the folder reader."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pipeline.config import ReaderOptions, SourceConfig
    from pipeline.read import build_reader

    def stats(kind: str, path: Path, pattern: str | None = None) -> dict:
        options = ReaderOptions(glob=pattern) if pattern else ReaderOptions()
        reader = build_reader(SourceConfig(name="s", kind=kind, path=str(path), options=options))
        docs = list(reader.run(None, 0, 1))
        return {k: v.total for k, v in reader.stats.stats.items()} | {"docs": len(docs)}

    rows = tmp_path / "rows"
    rows.mkdir()
    write_rows(rows / "a.jsonl", "text")
    (rows / "empty.jsonl").write_bytes(b"")
    (rows / "blank.jsonl").write_text("\n \n")
    (rows / "notes.md").write_text("not a JSONL file")
    got = stats("jsonl", rows)
    assert got["empty_files"] == 2 and got["skipped_files"] == 1 and got["skipped_ext_md"] == 1
    assert got["docs"] == len(MODULES) and got["input_files"] == 4

    tables = tmp_path / "tables"
    tables.mkdir()
    pq.write_table(pa.table({"text": [pydoc_text("json")]}), tables / "one.parquet")
    pq.write_table(pa.table({"text": pa.array([], pa.string())}), tables / "none.parquet")
    (tables / "README").write_text("about these tables")
    got = stats("parquet", tables)
    assert got["docs"] == 1 and got["empty_files"] == 1 and got["skipped_ext_none"] == 1

    crawl = tmp_path / "crawl"
    crawl.mkdir()
    (crawl / "empty.warc.gz").write_bytes(b"")
    (crawl / "index.csv").write_text("url,status\n")
    got = stats("warc", crawl, "*")
    assert got["empty_files"] == 1 and got["skipped_ext_csv"] == 1 and got["docs"] == 0


def test_input_file_counts_from_reader_stats() -> None:
    from collections import Counter

    from pipeline.accounting import input_file_counts

    reader = "📖 - READER: 🗂 Folder of documents"
    steps = {reader: Counter(input_files=7, skipped_files=3, skipped_ext_pdf=2, empty_files=1, documents=9)}
    assert input_file_counts(steps) == {
        "listed": 7,
        "with_documents": 3,
        "skipped_by_extension": {"pdf": 2, "unknown": 1},  # a skip counted without its extension is still shown
        "skipped_by_reason": {},
        "empty": 1,
        "symlinks_followed": 0,
        "undecodable_names": 0,
    }
    assert input_file_counts({"📖 - READER: 🤗 datasets (accounted)": Counter(documents=5)}) == {}


def test_dedup_and_tokenize_warn_of_a_wrong_text_key_as_curate_does(tmp_path: Path) -> None:
    from flows.cli import app

    rows = tmp_path / "in" / "articles.jsonl"
    rows.parent.mkdir()
    write_rows(rows, "body")
    run = CliRunner().invoke(
        app, ["dedup", "--input", str(rows.parent), "--output", str(tmp_path / "d"), "--prefect", "off"]
    )
    assert run.exit_code == 0, run.output
    output = " ".join(run.output.split())
    assert "every document read had no text field 'text' (read/missing_text)" in output, output
    assert "fields seen in those rows: body, doc_no, topic; pass --text-key FIELD" in output
    keyed = [
        "dedup",
        "--input",
        str(rows.parent),
        "--output",
        str(tmp_path / "d2"),
        "--prefect",
        "off",
        "--text-key",
        "body",
    ]
    right = CliRunner().invoke(app, keyed)
    assert right.exit_code == 0 and "missing_text" not in right.output, right.output
    # tokenize names the key to pass, and takes it
    wrong = CliRunner().invoke(
        app, ["tokenize", "-i", str(rows.parent), "-o", str(tmp_path / "t"), "--vocab-size", "300"]
    )
    assert wrong.exit_code != 0 and "pass --text-key FIELD" in " ".join(wrong.output.split()), wrong.output
    tokens = [
        "tokenize",
        "-i",
        str(rows.parent),
        "-o",
        str(tmp_path / "t2"),
        "--vocab-size",
        "300",
        "--text-key",
        "body",
    ]
    fixed = CliRunner().invoke(app, tokens)
    assert fixed.exit_code == 0, fixed.output
    manifest = json.loads((tmp_path / "t2" / "manifest.json").read_text())
    assert sum(s["documents"]["train"] + s["documents"]["heldout"] for s in manifest["sources"].values()) == len(
        MODULES
    )


def test_nothing_kept_because_of_the_index_names_the_index_and_the_way_out(tmp_path: Path) -> None:
    from flows.cli import app

    rows = tmp_path / "in" / "articles.jsonl"
    rows.parent.mkdir()
    write_rows(rows, "text")
    args = ["dedup", "--input", str(rows.parent), "--index", str(tmp_path / "index"), "--prefect", "off"]
    first = CliRunner().invoke(app, [*args, "--output", str(tmp_path / "week1")])
    assert first.exit_code == 0 and "nothing kept" not in first.output, first.output
    again = CliRunner().invoke(app, [*args, "--output", str(tmp_path / "week2")])  # the same crawl, a new output
    said = " ".join(again.output.split())
    assert again.exit_code == 0 and f"nothing kept: all {len(MODULES)} documents were dropped" in said, said
    assert f"persistent index {tmp_path / 'index'}" in said and "leave out --index" in said
    # curate says the same when its recipe's index is why a source kept nothing
    web = account(10, {"dedup": {"exact_duplicate": 10}})
    warning = next(w for w in curation_warnings([web], index="runs/index/web") if "nothing kept" in w)
    assert "nothing kept: all 10 documents read were dropped (10 as duplicates)" in warning
    assert "persistent index runs/index/web" in warning and "{dedup: {index: null}}" in warning
    assert not any("persistent index" in w for w in curation_warnings([web]))  # no index: no index hint
