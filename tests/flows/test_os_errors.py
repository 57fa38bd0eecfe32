"""Issue 19, item 4: what the machine refuses (a full disk, ``--output`` that is a file, a cut arrow file) is one
line naming the path and the cause, exit 2 -- never "an unexpected error" -- and the same command resumes once
the cause is gone. The documents are standard-library docstrings, built at run time."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from flows.cli import app
from tests.flows.test_warnings import DOMAIN, MODULES, pydoc_text


def docs_folder(tmp_path: Path, count: int = 4) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in MODULES[:count]:
        (docs / f"{name}.txt").write_text(pydoc_text(name), encoding="utf-8")
    return docs


def curate(docs: Path, output: Path):
    """``tokenmill curate`` of configs/domain.yaml with its ranks in this process (``workers: 1``), so that a
    monkeypatched write reaches them (pool workers come from a forkserver, which does not see the patch)."""
    recipe = docs.parent / "recipe.yaml"
    if not recipe.exists():
        data = yaml.safe_load(DOMAIN.read_text(encoding="utf-8"))
        data["executor"] = {**data["executor"], "tasks": 1, "workers": 1}
        recipe.write_text(yaml.safe_dump(data), encoding="utf-8")
    args = ["curate", str(recipe), "--input", str(docs), "--output", str(output), "--prefect", "off"]
    return CliRunner().invoke(app, args)


def one_error_line(result) -> str:
    assert result.exit_code == 2, result.output
    assert "unexpected error" not in result.output and "Traceback" not in result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("error:")]
    return line


def test_output_that_is_a_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    docs = docs_folder(tmp_path, 2)
    blocker = tmp_path / "taken"
    blocker.write_text("a user's file\n", encoding="utf-8")
    line = one_error_line(curate(docs, blocker))
    assert str(blocker) in line
    assert blocker.read_text(encoding="utf-8") == "a user's file\n"  # touched nothing
    line = one_error_line(curate(docs, blocker / "run"))
    assert str(blocker) in line and "Not a directory" in line
    blocker.unlink()  # the cause is gone: the same command now runs
    assert curate(docs, blocker / "run").exit_code == 0


def test_full_disk_is_one_line_naming_the_output_and_the_run_resumes(tmp_path: Path, monkeypatch) -> None:
    from datatrove.pipeline.writers.jsonl import JsonlWriter

    docs = docs_folder(tmp_path)
    run = tmp_path / "run"
    original = JsonlWriter._write

    def full_disk(self, document, file_handler, filename):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(JsonlWriter, "_write", full_disk)
    line = one_error_line(curate(docs, run))
    assert "No space left on device (ENOSPC)" in line and str(run) in line and "free space" in line
    monkeypatch.setattr(JsonlWriter, "_write", original)  # space freed
    result = curate(docs, run)
    assert result.exit_code == 0, result.output
    report = json.loads((run / "report.json").read_text(encoding="utf-8"))
    (source,) = report["curation"]["sources"]
    assert source["read"] == 4 and source["balanced"]


def test_truncated_arrow_file_of_a_saved_dataset_is_one_line_and_the_run_resumes(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    saved = tmp_path / "saved"
    rows = {"text": [pydoc_text(name) for name in MODULES[:4]], "id": [f"m{i}" for i in range(4)]}
    datasets.Dataset.from_dict(rows).save_to_disk(str(saved))
    (arrow,) = saved.glob("*.arrow")
    whole = arrow.read_bytes()
    arrow.write_bytes(whole[: len(whole) // 2])
    run = tmp_path / "run"
    line = one_error_line(curate(saved, run))
    assert str(arrow) in line or str(saved) in line
    arrow.write_bytes(whole)  # the file is whole again
    result = curate(saved, run)
    assert result.exit_code == 0, result.output
