"""The ``tokenmill`` entry point: version, spellings of common flags."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from flows.cli import app


def test_version_prints_the_package_version() -> None:
    from importlib.metadata import version

    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.strip() == f"tokenmill {version('tokenmill')}"


def test_sample_takes_output_like_every_other_command(tmp_path: Path) -> None:
    args = ["sample", "--output", str(tmp_path / "s"), "--pages", "20", "--warc-files", "1", "--domain-docs", "2"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "s" / "truth.json").exists()


def test_an_unexpected_error_is_one_line_unless_debug(monkeypatch, capsys) -> None:
    import sys

    import pytest

    import flows.cli

    def broken() -> None:
        raise RuntimeError("something nobody anticipated")

    monkeypatch.setattr(flows.cli, "app", broken)
    monkeypatch.delenv("TOKENMILL_DEBUG", raising=False)
    monkeypatch.setattr(sys, "argv", ["tokenmill", "curate", "x.yaml"])
    with pytest.raises(SystemExit) as exited:
        flows.cli.main()
    assert exited.value.code == 1
    err = capsys.readouterr().err
    assert "error: RuntimeError: something nobody anticipated" in err and "--debug" in err
    assert "Traceback" not in err

    monkeypatch.setattr(sys, "argv", ["tokenmill", "--debug", "curate", "x.yaml"])
    with pytest.raises(RuntimeError, match="nobody anticipated"):
        flows.cli.main()


def test_every_project_error_is_a_tokenmill_error_and_keeps_its_builtin_base() -> None:
    from flows.end_to_end import PlanRefused
    from pipeline.accounting import AccountingError
    from pipeline.config import RecipeError
    from pipeline.errors import TokenmillError
    from pipeline.read import InputError
    from pipeline.shards.format import ShardError
    from training.preflight import GateError
    from training.units import PlanError

    for cls, builtin in (
        (RecipeError, ValueError),
        (InputError, ValueError),
        (ShardError, ValueError),
        (PlanError, ValueError),
        (GateError, ValueError),
        (AccountingError, RuntimeError),
        (PlanRefused, RuntimeError),
    ):
        assert issubclass(cls, TokenmillError) and issubclass(cls, builtin), cls


def test_a_tokenmill_error_from_any_command_is_one_error_line_and_exit_2(monkeypatch) -> None:
    """A command that lets a ``TokenmillError`` through still ends as ``error: <message>``, status 2: the root
    group catches it once (no traceback, markup in the message printed as written)."""
    import pipeline.run
    from pipeline.config import RecipeError

    def refuse(*args, **kwargs):
        raise RecipeError("recipe.yaml: stages.[bold]x[/bold]: unknown stage")

    import training.recipe

    monkeypatch.setattr(training.recipe, "load_recipe", refuse)  # the command's first step since the recipe split
    monkeypatch.setattr(pipeline.run, "resolve_run", refuse)
    result = CliRunner().invoke(app, ["curate", "recipe.yaml"])
    assert result.exit_code == 2, result.output
    assert "error: recipe.yaml: stages.[bold]x[/bold]: unknown stage" in result.output
    assert "Traceback" not in result.output
