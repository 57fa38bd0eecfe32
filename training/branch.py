"""Branching: a run that continues another run's checkpoint under another schedule (MiniCPM's WSD cool-down)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from training.checkpoint import check_resume, read_state
from training.config import TrainConfig, TrainConfigError
from training.schedule import from_config

# what a branch may change against the checkpoint it starts from: the schedule after the branch point
BRANCH_FREE = ("decay_steps", "schedule", "decay_fraction", "min_lr", "branch_from")


def branch_point(folder: str | Path) -> tuple[Path, dict[str, Any]]:
    """The checkpoint a ``branch_from`` run starts from; a missing or half-written one is a TrainConfigError."""
    path = Path(folder)
    state, why = read_state(path)
    if state is None:
        raise TrainConfigError(f"branch_from: {path}: not a complete checkpoint ({why})")
    return path, state


def branch_inherit(state: dict[str, Any]) -> dict[str, Any]:
    """A branch keeps the trunk's warmup and batch when left unset; its schedule length is its own."""
    saved = state.get("config") or {}
    return {"config": {k: saved.get(k) for k in ("warmup_steps", "global_batch_tokens")}}


def check_branch(state: dict[str, Any], cfg: TrainConfig, fingerprint: str, force: bool) -> list[str]:
    """A branch continues the trunk's run under another schedule (MiniCPM's WSD cool-down): everything that
    decides what is learned, except the schedule after the branch point, must match the trunk's checkpoint."""
    keep = {k: v for k, v in cfg.identity().items() if k not in BRANCH_FREE}
    saved = {k: v for k, v in (state.get("identity") or {}).items() if k not in BRANCH_FREE}
    warnings = check_resume({**state, "identity": saved}, keep, fingerprint, force)
    trunk = from_config_dict(state.get("config") or {})
    if trunk is not None:
        mine, step = from_config(cfg), int(state["step"])
        if any(abs(trunk(s) - mine(s)) > 1e-12 * max(1.0, cfg.lr or 1.0) for s in range(step)):
            message = f"branch_from: this schedule differs from the trunk's before the branch point (step {step})"
            if not force:
                raise TrainConfigError(message + "; give the trunk's lr and warmup_steps, or force: true")
            warnings.append("forced: " + message)
    return warnings


def from_config_dict(data: dict[str, Any]):
    """The schedule recorded in a checkpoint's resolved config (None when it does not validate)."""
    try:
        return from_config(TrainConfig.model_validate(data))
    except (ValidationError, ValueError):
        return None
