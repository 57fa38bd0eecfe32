"""`tokenmill train` / `tokenmill generate` and the Prefect `train` flow (a real subprocess, logs streamed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tests.helpers.train import SHRINK, make_shards


@pytest.fixture(scope="module")
def shards(tmp_path_factory) -> Path:
    return make_shards(tmp_path_factory.mktemp("train_flow"))


def write_config(path: Path, shards: Path, output: Path, **changes) -> Path:
    values = {
        "shards": str(shards),
        "output": str(output),
        "model": "tiny",
        "model_overrides": SHRINK,
        "seq_len": 32,
        "micro_batch": 8,
        "max_steps": 4,
        "eval_every": 0,
        "eval_batches": 1,
        "ckpt_every": 2,
        "log_every": 1,
        "cpu_threads": 1,
        "tensorboard": False,
        **changes,
    }
    path.write_text(yaml.safe_dump(values))
    return path


def test_cli_trains_resumes_and_generates(shards: Path, tmp_path: Path) -> None:
    from flows.cli import app

    runner = CliRunner()
    config = write_config(tmp_path / "train.yaml", shards, tmp_path / "run")
    first = runner.invoke(app, ["train", str(config), "--max-steps", "2"])
    assert first.exit_code == 0, first.output
    assert "completed at step 2/2" in first.output
    second = runner.invoke(app, ["train", str(config)])  # the same command, a longer run: resumes
    assert second.exit_code == 0, second.output
    assert "resumed from" in second.output and "completed at step 4/4" in second.output
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2, 3, 4]
    sample = runner.invoke(
        app, ["generate", str(tmp_path / "run" / "final"), "--prompt", "The", "--max-new-tokens", "5"]
    )
    assert sample.exit_code == 0 and sample.output.strip().splitlines()[-1].startswith("The")
    missing = runner.invoke(app, ["generate", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2 and "no config.json" in missing.output


def test_cli_gate_refuses_with_the_fix_and_names_bad_fields(shards: Path, tmp_path: Path) -> None:
    from flows.cli import app

    runner = CliRunner()
    big = write_config(tmp_path / "big.yaml", shards, tmp_path / "big", model="7b", model_overrides={}, gpu="L4")
    refused = runner.invoke(app, ["train", str(big), "--seq-len", "2048", "--micro-batch", "1"])
    assert refused.exit_code == 2
    assert "does not fit in GPU memory" in refused.output and "cheapest fix" in refused.output
    assert not (tmp_path / "big" / "checkpoints").exists()
    typo = tmp_path / "typo.yaml"
    typo.write_text("shards: s\noutput: o\nwarmup: 3\n")
    bad = runner.invoke(app, ["train", str(typo)])
    assert bad.exit_code == 2 and "train.warmup: unknown key" in bad.output


def test_train_flow_streams_a_subprocess_and_publishes_the_summary(
    shards: Path, tmp_path: Path, prefect_harness
) -> None:
    from prefect.client.orchestration import get_client

    from flows.train import train
    from training.preflight import GateError

    config = write_config(tmp_path / "train.yaml", shards, tmp_path / "run", max_steps=3)
    summary = train(str(config))
    assert summary["status"] == "completed" and summary["step"] == 3
    assert Path(summary["final"], "model.safetensors").is_file()
    assert (tmp_path / "run" / "launch_config.yaml").is_file()

    async def artifact() -> str | None:
        async with get_client() as client:
            from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

            found = await client.read_artifacts(
                artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["training-summary"]))
            )
            return found[0].data if found else None

    import asyncio

    markdown = asyncio.run(artifact())
    assert markdown is not None and "# Training report" in markdown and "| tokens/s |" in markdown
    with pytest.raises(GateError, match="fewer tokens than the recipe minimum"):
        train(str(config), overrides={"min_tokens": 1e12})  # refused before any process starts


def test_stream_logs_every_line_and_returns_the_exit_code() -> None:
    import logging
    import sys

    from training.launch import stream

    class Collect(logging.Handler):
        def __init__(self) -> None:
            super().__init__()
            self.lines: list[str] = []

        def emit(self, record: logging.LogRecord) -> None:
            self.lines.append(record.getMessage())

    logger = logging.getLogger("test-stream")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    handler = Collect()
    logger.addHandler(handler)
    code, tail = stream(
        [sys.executable, "-c", "import sys; print('a'); print('b', file=sys.stderr); sys.exit(3)"], logger
    )
    assert code == 3 and tail == ["a", "b"] and handler.lines == ["a", "b"]
