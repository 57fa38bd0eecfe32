"""``flows.model_options``: a command's flags generated from its config model (issue 24 item 4)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import typer
from pydantic import BaseModel, Field
from typer.testing import CliRunner

from flows.model_options import options_from


class _Settings(BaseModel):
    max_shard_tokens: int = Field(default=7, description="tokens per shard")
    mode: Literal["fast", "slow"] = Field(default="fast", description="how to go")
    label: str | None = Field(default=None, description="a name (default: the folder's)")
    keep: bool = Field(default=False, description="keep the work files")
    hidden_one: float = 1.5


def _app(seen: list[dict[str, Any]], **kwargs: Any) -> typer.Typer:
    app = typer.Typer()

    @app.command()
    @options_from(_Settings, **kwargs)
    def run(
        path: Path = typer.Argument(...),
        overrides: dict[str, Any] | None = None,
        loud: bool = typer.Option(False, "--loud"),
    ) -> None:
        seen.append({"path": path, "overrides": overrides, "loud": loud})

    return app


def test_every_field_is_a_kebab_flag_whose_value_reaches_the_command_only_when_given() -> None:
    seen: list[dict[str, Any]] = []
    app = _app(seen, exclude=["hidden_one"])
    result = CliRunner().invoke(app, ["p", "--max-shard-tokens", "12", "--mode", "slow", "--keep", "--loud"])
    assert result.exit_code == 0, result.output
    assert seen[-1] == {
        "path": Path("p"),
        "overrides": {"max_shard_tokens": 12, "mode": "slow", "keep": True},
        "loud": True,
    }
    assert CliRunner().invoke(app, ["p"]).exit_code == 0
    assert seen[-1]["overrides"] == {}  # nothing given: the recipe's values stay
    assert CliRunner().invoke(app, ["p", "--no-keep"]).exit_code == 0 and seen[-1]["overrides"] == {"keep": False}
    bad = CliRunner().invoke(app, ["p", "--max-shard-tokens", "many"])
    assert bad.exit_code == 2 and len(seen) == 3  # typer's usage error, the command never ran
    assert CliRunner().invoke(app, ["p", "--hidden-one", "2"]).exit_code == 2  # excluded: no such flag


def test_the_help_is_the_field_description_with_the_model_default() -> None:
    result = CliRunner().invoke(
        _app([], only=["max_shard_tokens", "label", "keep"]), ["--help"], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0
    assert "tokens per shard (default: 7)" in result.output
    assert "a name (default: the folder's)" in result.output  # a description that names its default keeps it
    assert "keep the work files (default: off)" in result.output
    assert "--mode" not in result.output  # only= selects


def test_a_field_added_to_the_model_is_a_new_flag() -> None:
    class Wider(_Settings):
        workers: int = Field(default=1, description="ranks at once")

    app = typer.Typer()
    seen: list[dict[str, Any]] = []

    @app.command()
    @options_from(Wider, exclude=["hidden_one"])
    def run(overrides: dict[str, Any] | None = None) -> None:
        seen.append(overrides or {})

    assert CliRunner().invoke(app, ["--workers", "3"]).exit_code == 0 and seen == [{"workers": 3}]


def test_a_bounded_field_is_checked_by_typer_before_the_command_runs() -> None:
    class Bounded(BaseModel):
        seq_len: int = Field(default=64, ge=8, description="tokens per sequence")
        steps: int = Field(default=1, ge=1, description="steps")

    app = typer.Typer()
    seen: list[dict[str, Any]] = []

    @app.command()
    @options_from(Bounded, bounded=["seq_len"])
    def run(overrides: dict[str, Any] | None = None) -> None:
        seen.append(overrides or {})

    low = CliRunner().invoke(app, ["--seq-len", "4"], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert low.exit_code == 2 and seen == [] and "--seq-len" in low.output and "8" in low.output  # never ran
    assert CliRunner().invoke(app, ["--seq-len", "8", "--steps", "0"]).exit_code == 0  # steps: not bounded here
    assert seen == [{"seq_len": 8, "steps": 0}]  # the model's ge=1 is the command's to check


def test_the_ladder_takes_its_flags_from_ladder_config() -> None:
    from flows.cli import app
    from training.ladder_config import LadderConfig

    ladder = CliRunner().invoke(app, ["scaling", "ladder", "--help"], env={"COLUMNS": "300", "NO_COLOR": "1"}).output
    assert LadderConfig.model_fields["seq_len"].description in ladder
    assert LadderConfig.model_fields["seed"].description + " (default: 1234)" in ladder
    assert "--cpu-threads" not in ladder and "--widths" not in ladder  # a --config key; --sizes
    split = LadderConfig(shards="s", output="o", tokens_per_param="4, 1,2", tasks="arc, hellaswag")
    assert split.tokens_per_param == [1.0, 2.0, 4.0] and split.tasks == ["arc", "hellaswag"]  # the flags' text


def test_dedup_and_plan_take_their_help_from_the_config_models() -> None:
    from flows.cli import app
    from pipeline.dedup.config import DedupConfig
    from training.plan.options import PlanOptions

    env = {"COLUMNS": "300", "NO_COLOR": "1"}
    dedup = CliRunner().invoke(app, ["dedup", "--help"], env=env).output
    assert DedupConfig.model_fields["threshold"].description in dedup
    plan = CliRunner().invoke(app, ["plan", "--help"], env=env).output
    assert PlanOptions.model_fields["tokens_per_param"].description + " (default: 20)" in plan


def test_a_refusal_raised_by_a_command_reads_as_before(tmp_path: Path) -> None:
    """``CommandError`` replaced ``print_error(...); raise typer.Exit(2)``: the same one line, the same status."""
    from flows.cli import app

    runner = CliRunner(env={"COLUMNS": "400"})
    missing = tmp_path / "missing.jsonl"
    result = runner.invoke(app, ["dedup", "--input", str(missing), "--output", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert result.output.strip() == f"error: {missing}: no such file or folder"
    result = runner.invoke(app, ["dedup", "--input", str(tmp_path), "--output", str(tmp_path / "o"), "--bands", "1"])
    assert result.exit_code == 2 and result.output.startswith("error: ") and "bands" in result.output
    assert not (tmp_path / "o").exists()
    result = runner.invoke(app, ["plan", "--gpus", "0", "--model", "tiny", "--tokens", "1B"])
    assert result.exit_code == 2 and result.output.startswith("error: ")
