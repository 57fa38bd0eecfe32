"""The one launch path for training: ``tokenmill train``, the ``train`` flow and the ``pipeline`` flow all call
``launch_training``.

One process (no accelerate config, at most one process asked for) trains in-process: ``run_training`` itself,
as fast as the demo needs. Otherwise the gate runs here first (``preflight``: a refusal stops before any GPU
process starts), the config is dumped to ``<output>/launch_config.yaml`` and ``accelerate launch`` runs
``python -m training.train`` on every process; its output is streamed line by line (Prefect) or left on the
terminal (the CLI). The summary is then read back from the run's ``train_report.json``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipeline.errors import TokenmillError
from training.config import TrainConfig, dump_train_config
from training.preflight import preflight
from training.report import TrainSummary
from training.train import holding_output, run_training

LAUNCH_CONFIG = "launch_config.yaml"


class LaunchFailed(TokenmillError, RuntimeError):
    """The launched training processes exited with an error; ``code`` is their exit status."""

    def __init__(self, code: int, tail: list[str]) -> None:
        super().__init__(f"training exited with code {code}:\n" + "\n".join(tail[-15:]))
        self.code, self.tail = code, tail


def launch_command(
    config_file: str | Path, accelerate_config: str | None = None, num_processes: int | None = None, force: bool = False
) -> list[str]:
    """``accelerate launch … -m training.train CONFIG`` (multi-GPU) or ``python -m training.train CONFIG``."""
    tail = ["-m", "training.train", str(config_file)] + (["--force"] if force else [])
    if accelerate_config is None and not num_processes:
        return [sys.executable, *tail]
    command = [sys.executable, "-m", "accelerate.commands.launch"]
    if accelerate_config:
        command += ["--config_file", str(accelerate_config)]
    if num_processes:
        command += ["--num_processes", str(num_processes)]
    return command + tail


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


def launch_training(
    settings: TrainConfig,
    *,
    accelerate_config: str | None = None,
    num_processes: int | None = None,
    in_process: bool | None = None,
    logger: Any = None,
    on_event: Callable[[str, Any], None] | None = None,
) -> TrainSummary:
    """Train ``settings``: in-process, or preflight → dump config → ``accelerate launch`` → run; the summary.

    ``in_process``: None decides by the launch (one process and no accelerate config: in-process).
    ``logger`` (with ``.info``): stream the processes' output into it; None leaves it on the terminal.
    ``on_event(kind, value)`` sees the launch's steps, for the caller to word: ``"preflight"`` (the preflight
    result: resolved config, plan, problems, notes) and ``"launch"`` (the command).
    Raises the gate's and the config's errors, and LaunchFailed when the processes fail.
    """
    if in_process is None:
        in_process = accelerate_config is None and (num_processes or 1) <= 1
    if in_process:
        return run_training(settings)
    with holding_output(settings.output):  # for every process accelerate starts (they do not lock)
        return _launch(settings, accelerate_config, num_processes, logger, on_event)


def _launch(
    settings: TrainConfig,
    accelerate_config: str | None,
    num_processes: int | None,
    logger: Any,
    on_event: Callable[[str, Any], None] | None,
) -> TrainSummary:
    event = on_event or (lambda _kind, _value: None)
    event("preflight", preflight(settings, world_size=num_processes))  # refuse before starting N processes
    request = Path(settings.output) / LAUNCH_CONFIG
    dump_train_config(settings, request)
    command = launch_command(request, accelerate_config, num_processes)
    event("launch", command)
    code, tail = stream(command, logger) if logger is not None else (subprocess.call(command), [])
    if code != 0:
        raise LaunchFailed(code, tail)
    report = json.loads((Path(settings.output) / "train_report.json").read_text(encoding="utf-8"))
    return TrainSummary.from_dict(report["summary"])
