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
