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
