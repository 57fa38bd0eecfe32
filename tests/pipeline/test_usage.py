"""Ranks on any engine: each records its CPU and peak memory (pipeline.usage), summed in report.json
``workers``; a stage with an unfinished rank stops in one line naming the rank and its log (pipeline.ranks),
also on Slurm, checked here with stand-in ``sbatch``/``squeue``/``scancel`` (the real cluster:
tests/e2e/test_slurm.py)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from pipeline.config import ExecutorConfig, SlurmOptions
from pipeline.executor import build_executor
from pipeline.ranks import RankFailed
from pipeline.usage import workers_summary


def numbers(data, rank: int = 0, world_size: int = 1):
    total = sum(i * i for i in range(200_000))  # some CPU to record
    yield from ([total] if data is None else data)


def test_each_local_rank_records_its_usage_and_the_run_sums_them(tmp_path: Path) -> None:
    logs = tmp_path / "run" / "stages" / "x" / "logs"
    build_executor(ExecutorConfig(tasks=3, workers=1), [numbers], logs).run()
    files = sorted((logs / "usage").glob("*.json"))
    assert [p.name for p in files] == ["00000.json", "00001.json", "00002.json"]
    summary = workers_summary(tmp_path / "run")
    assert summary is not None and summary.ranks == 3 and summary.peak_rss_mb > 10
    assert summary.cpu_s == pytest.approx(sum(json.loads(p.read_text())["cpu_s"] for p in files), abs=0.01)
    assert list(summary.steps) == ["stages/x/logs"]


def _stand_in(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def test_a_slurm_rank_that_never_ran_stops_the_stage_in_one_line_naming_its_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls"
    _stand_in(bin_dir, "sbatch", f'echo "sbatch $*" >> {calls}; echo "Submitted batch job 7$(wc -l < {calls})"')
    _stand_in(bin_dir, "squeue", "exit 0")  # nothing queued: the jobs have ended (here: never ran)
    _stand_in(bin_dir, "scancel", f'echo "scancel $*" >> {calls}')
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("SLURM_ARRAY_TASK_ID", raising=False)
    config = ExecutorConfig(kind="slurm", tasks=2, slurm=SlurmOptions(partition="debug", env_command="true"))
    executor = build_executor(config, [numbers], tmp_path / "logs", job_name="curate-web")

    with pytest.raises(RankFailed) as failed:
        executor.run()
    message = str(failed.value)
    assert "\n" not in message and message.startswith("slurm curate-web: rank 0 did not finish (2 of 2 ranks")
    assert "slurm_logs/71_0.out (not written: the task never started)" in message
    assert "rerun the same command to resume" in message
    log = calls.read_text().splitlines()
    assert [line.split()[0] for line in log] == ["sbatch", "sbatch", "scancel"]  # the merge job is cancelled
    assert json.loads((tmp_path / "logs" / "slurm_jobs.json").read_text()) == ["71", "72"]
    assert "#SBATCH --partition=debug" in (tmp_path / "logs" / "launch_script.slurm").read_text()
