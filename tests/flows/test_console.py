"""The console contract (README): one line per stage, the rest to the run's logs, ``-v`` brings it back, and
tables print whole when the output is not a terminal."""

from __future__ import annotations

import io
import os

import pytest
import yaml
from rich.table import Table
from typer.testing import CliRunner

from flows.cli import app, quiet_console
from pipeline import progress
from pipeline.console import make_console


def test_tables_print_whole_outside_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr("sys.stderr", io.StringIO())
    console = make_console()
    table = Table("source", "tokens", "rules")
    table.add_row("web", "1,010,579,123", "exact_duplicate near_duplicate " * 4)
    console.print(table)
    text = console.file.getvalue()
    assert "1,010,579,123" in text and "…" not in text
    assert max(len(line) for line in text.splitlines()) > 80  # Rich's default width would have cut the cells


def test_verbose_brings_datatrove_and_prefect_lines_back(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TOKENMILL_PROGRESS", "PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL"):
        monkeypatch.setenv(name, "set")  # recorded, so what quiet_console sets is undone after the test
        monkeypatch.delenv(name)
    quiet_console(verbose=False)
    assert os.environ["PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL"] == "WARNING"
    assert "TOKENMILL_PROGRESS" not in os.environ
    monkeypatch.delenv("PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL")
    quiet_console(verbose=True)
    assert os.environ["PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL"] == "INFO"
    with progress.shown():  # off: datatrove's plain executor and its per-rank logs
        assert progress.mode() == "off"


def test_pipeline_command_runs_its_flow_with_progress_lines(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.delenv("TOKENMILL_PROGRESS", raising=False)
    seen: list[str] = []

    def fake_pipeline(recipe: str, output=None, force=False) -> dict:
        seen.append(progress.mode())
        raise FileNotFoundError("stop here")  # the command maps it to one line, exit 2

    monkeypatch.setattr("flows.end_to_end.pipeline", fake_pipeline)
    monkeypatch.setattr("flows.runtime.ensure_prefect_backend", lambda: "embedded")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("A note someone wrote about the weather, long enough to be a document.\n")
    recipe = tmp_path / "r.yaml"
    source = {"name": "a", "kind": "folder", "path": str(docs)}
    recipe.write_text(yaml.safe_dump({"name": "r", "output_dir": str(tmp_path / "run"), "sources": [source]}))
    result = CliRunner().invoke(app, ["pipeline", str(recipe)])
    assert result.exit_code == 2, result.output
    assert seen == ["log"]  # not "off": the flow's stages show one line each instead of datatrove's rank blocks


def test_stage_lines_bypass_print_so_a_log_prints_flow_does_not_swallow_them(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    # Prefect's log_prints turns print() into an INFO record, which the console contract keeps off the console
    printed: list[str] = []
    monkeypatch.setattr("builtins.print", lambda *args, **kwargs: printed.append(" ".join(map(str, args))))
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    monitor = progress.ProgressMonitor("curate web", str(tmp_path), 1, display="log")
    monitor.finish()
    assert printed == [] and err.getvalue().startswith("curate web: 0 docs in ")
