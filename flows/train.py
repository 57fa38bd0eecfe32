"""The ``train`` Prefect flow: gate, launch the training processes, stream their logs, publish a summary.

Thin by design: the flow knows the config file, the budget gate (``training.train.preflight``) and the
command line (``training.train.launch_command``): ``accelerate launch`` with an accelerate config (one process
per GPU, multi-node ready) or ``python -m training.train`` on the CPU. Training runs in a subprocess so that
accelerate/torchrun own the GPUs and their processes, whatever the Prefect worker is; its output is streamed
line by line into the flow run's log. The ``training-summary`` artifact is the run's ``train_report.md``.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import deque
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger
from prefect.artifacts import create_markdown_artifact

import flows  # noqa: F401  (telemetry off before Prefect loads)


def stream(command: list[str], logger: Any, keep: int = 40) -> tuple[int, list[str]]:
    """Run ``command``, log each output line as it comes, return the exit code and the last ``keep`` lines."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    tail: deque[str] = deque(maxlen=keep)
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1, env=env
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            line = line.rstrip("\n")
            if line.strip():
                logger.info(line)
                tail.append(line)
    return process.returncode, list(tail)


@flow(name="train", log_prints=True)
def train(
    config: str | None = None,
    overrides: dict[str, Any] | None = None,
    accelerate_config: str | None = None,
    num_processes: int | None = None,
) -> dict[str, Any]:
    """Train from a config file and/or ``overrides`` (TrainConfig fields); returns the training summary.

    The budget gate runs here first (a refusal fails the flow before any GPU process starts; ``force: true``
    in the config or overrides trains anyway). Rerunning the flow with the same config resumes the run.
    """
    from training.config import dump_train_config, load_train_config
    from training.train import launch_command, preflight

    logger = get_run_logger()
    settings = load_train_config(config, overrides)
    checked = preflight(settings, world_size=num_processes)
    plan = checked["plan"]
    logger.info(
        "plan: %s parameters, %.3g tokens, %.3g FLOPs; %s",
        f"{plan.params:,.0f}",
        plan.tokens,
        plan.flops,
        "; ".join(plan.verdicts),
    )
    for note in checked["notes"] + [f"forced past: {p}" for p in checked["problems"]]:
        logger.warning(note)
    request = Path(settings.output) / "launch_config.yaml"
    dump_train_config(settings, request)
    command = launch_command(request, accelerate_config, num_processes)
    logger.info("launching: %s", " ".join(command))
    code, tail = stream(command, logger)
    if code != 0:
        raise RuntimeError(f"training exited with code {code}:\n" + "\n".join(tail[-15:]))
    output = Path(settings.output)
    report = json.loads((output / "train_report.json").read_text(encoding="utf-8"))
    from pipeline.report import without_images  # a relative image link does not render in the Prefect UI

    create_markdown_artifact(
        key="training-summary",
        markdown=without_images((output / "train_report.md").read_text(encoding="utf-8")),
        description=f"tokenmill training run {output}",
    )
    return report["summary"]
