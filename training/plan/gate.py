"""The one plan gate: every launch of training (``tokenmill train``, the ``train`` flow, the ``pipeline`` flow,
and ``run_training`` itself) plans the run through ``plan_gate`` and refuses on the problems it returns.

The options differ only in where they come from: a recipe's ``plan:`` section (the ``pipeline`` flow's plan
stage) or the resolved train config (``train_plan_options``, the GPUs and batch the run will use); the plan,
the checks and the memory rule are the same code.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import ValidationError

from pipeline.config_base import field_errors
from training.models import ModelShape
from training.plan.options import PlanOptions, plan_from_options
from training.plan.planner import Plan, check
from training.units import PlanError

DEFAULT_GPU = "H100-SXM"  # what a CPU run (no CUDA device, no gpu: named) is planned for
NO_GPU_NOTE = (
    f"no GPU on this machine: the plan's GPU figures (time, memory) are for the default {DEFAULT_GPU} and are "
    "not checked against this run (name one with gpu: to plan for it)"
)


@dataclass
class Gate:
    """What the gate concluded: the plan, the blocking problems (empty: go) and notes for the log."""

    plan: Plan
    problems: list[str]
    notes: list[str] = field(default_factory=list)


def plan_gate(options: PlanOptions, shape: ModelShape | None = None, memory_applies: bool = True) -> Gate:
    """Plan with ``options`` (``shape`` overrides their model) and list what blocks training.

    ``memory_applies=False`` (a CPU run with no GPU named): the memory rule does not apply and is left out of the
    problems, with a note; the plan itself keeps its memory estimate for the report. Raises PlanError.
    """
    result = plan_from_options(options, shape=shape)
    checked, notes = result, []
    if not memory_applies:
        notes.append(NO_GPU_NOTE)
        checked = replace(result, memory=replace(result.memory, fits=True))
    return Gate(result, check(checked, min_tokens=options.min_tokens), notes)


def train_plan_options(config: Any, gpu: str | None, n_gpus: int) -> PlanOptions:
    """``PlanOptions`` for a resolved ``TrainConfig``: its tokens, batch, parallelism and the GPUs it runs on.

    Precision is planned as ``amp`` whatever the config's (fp8 too: torchao keeps fp32 master weights; its fp8
    activations are not modelled) and attention as ``sdpa`` (what ``build_model`` uses).
    """
    try:
        return PlanOptions(
            manifest=config.shards,
            tokens=max(1, (config.max_steps or 0) * config.global_batch_tokens),
            base_tokens=config.base_tokens,
            min_tokens=config.min_tokens,
            gpu=gpu or DEFAULT_GPU,
            gpus=n_gpus,
            mfu=config.mfu,
            strategy=config.strategy,
            micro_batch=config.micro_batch,
            seq_len=config.seq_len,
            activation_checkpointing=config.activation_checkpointing,
            attention="sdpa",
            precision="amp",
            tp_size=config.tp_size,
        )
    except ValidationError as error:
        raise PlanError("; ".join(field_errors(error))) from None
