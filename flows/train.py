"""The ``train`` Prefect flow: gate, launch the training processes, stream their logs, publish a summary.

Thin by design: the flow hands the config to the one launch path (``training.launch.launch_training``: the
budget gate, then ``accelerate launch`` with an accelerate config, one process per GPU and multi-node ready,
or ``python -m training.train`` on the CPU). Training runs in a subprocess so that
accelerate/torchrun own the GPUs and their processes, whatever the Prefect worker is; its output is streamed
line by line into the flow run's log. The ``training-summary`` artifact is the run's ``train_report.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger
from prefect.artifacts import create_markdown_artifact

import flows  # noqa: F401  (telemetry off before Prefect loads)


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
    from training.config import load_train_config
    from training.launch import LaunchFailed, launch_training

    logger = get_run_logger()
    settings = load_train_config(config, overrides)
    try:
        summary = launch_training(
            settings,
            accelerate_config=accelerate_config,
            num_processes=num_processes,
            in_process=False,  # accelerate/torchrun own the GPUs and their processes, whatever the worker is
            logger=logger,
            on_event=lambda kind, value: log_launch(logger, kind, value),
        )
    except LaunchFailed as error:
        raise RuntimeError(str(error)) from None
    output = Path(settings.output)
    from pipeline.report import without_images  # a relative image link does not render in the Prefect UI

    create_markdown_artifact(
        key="training-summary",
        markdown=without_images((output / "train_report.md").read_text(encoding="utf-8")),
        description=f"tokenmill training run {output}",
    )
    return summary.to_dict()


def log_launch(logger: Any, kind: str, value: Any) -> None:
    """The launch's steps in a flow run's log: the plan, the gate's notes and what was forced, the command."""
    if kind == "preflight":
        plan = value.plan
        logger.info(
            "plan: %s parameters, %.3g tokens, %.3g FLOPs; %s",
            f"{plan.params:,.0f}",
            plan.tokens,
            plan.flops,
            "; ".join(plan.verdicts),
        )
        for note in value.notes + [f"forced past: {p}" for p in value.problems]:
            logger.warning(note)
    elif kind == "launch":
        logger.info("launching: %s", " ".join(value))
