"""Before training: resolve the config against the shards and the checkpoint, and pass the plan gate.

``preflight`` is what the launcher runs before it starts any process; ``gate`` is what ``run_training`` runs on
every process once the world size is known. Both plan through ``training.plan.gate.plan_gate``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pipeline.errors import TokenmillError
from training.checkpoint import find_latest
from training.config import TrainConfig
from training.gpus import detect_gpu
from training.modeling import (
    ShardsTokenizer,
    architecture,
    base_peak_lr,
    model_seq_len,
    resolve_init_from,
    shards_tokenizer,
)
from training.plan.gate import plan_gate, train_plan_options
from training.units import PlanError

if TYPE_CHECKING:
    from training.models import ModelShape
    from training.plan.planner import Plan


class GateError(TokenmillError, ValueError):
    """The budget check found blocking problems; the message lists them with the cheapest fix."""


def gate(config: TrainConfig, shape: ModelShape, gpu: str | None, n_gpus: int) -> tuple[Plan, list[str], list[str]]:
    """Plan this run (model, tokens, hardware) and return ``(plan, blocking problems, notes)``.

    Without a GPU (a CPU run with no ``gpu`` named) the memory verdict does not apply and is left out.
    """
    try:
        result = plan_gate(train_plan_options(config, gpu, n_gpus), shape=shape, memory_applies=gpu is not None)
    except PlanError as error:
        raise GateError(f"budget check: {error}") from None
    return result.plan, result.problems, result.notes


@dataclass(frozen=True)
class Preflight:
    """What ``preflight`` checked before a launch (the launch's ``"preflight"`` event)."""

    config: TrainConfig  # the config with everything derived filled in (``resolve_config``)
    plan: Plan  # the gate's plan of the run
    problems: list[str]  # blocking problems, non-empty only when the run is forced past them
    notes: list[str]  # the gate's notes (e.g. no GPU: the memory verdict does not apply)


def preflight(config: TrainConfig, world_size: int | None = None) -> Preflight:
    """Resolve the config and run the gate without building anything (the CLI and the flow call this before
    ``accelerate launch``). Raises GateError unless forced; returns the resolved config, plan and notes."""
    world = world_size or config.n_gpus or 1
    tokenizer = shards_tokenizer(config.shards)
    _path, state, _warnings = find_latest(config.output)
    resolved = resolve_config(config, tokenizer, data_world(config, world), state)
    gpu = resolved.gpu or detect_gpu()
    _arch, shape = architecture(resolved, tokenizer)
    result, problems, notes = gate(resolved, shape, gpu, resolved.n_gpus or world)
    if problems and not config.force:
        raise GateError(gate_message(problems))
    return Preflight(resolved, result, problems, notes)


def gate_message(problems: list[str]) -> str:
    listed = "\n".join(f"  - {p}" for p in problems)
    return f"the budget check refuses this run:\n{listed}\n(pass --force, or force: true, to train anyway)"


def data_world(config: TrainConfig, world: int) -> int:
    """Data-parallel ranks: the processes of a tensor-parallel group all train on the same batch."""
    return max(1, world // config.tp_size)


def resolve_config(
    config: TrainConfig, tokenizer: ShardsTokenizer, world: int, state: dict[str, Any] | None
) -> TrainConfig:
    """The config with everything derived filled in: sequence length, batch, steps, schedule (``resolved``)."""
    base_lr = base_peak_lr(resolve_init_from(config.init_from)) if config.init_from else None
    train_tokens = tokenizer.manifest.train_tokens
    return config.resolved(
        model_seq_len=model_seq_len(config),
        world_size=world,
        train_tokens=train_tokens,
        base_lr=base_lr,
        inherit=(state or {}).get("config"),
    )
