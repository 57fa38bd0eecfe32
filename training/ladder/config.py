"""Reading the ladder's settings: a ladder YAML (``configs/ladder/*.yaml``) and the flags into ``LadderConfig``
(the model: ``training/ladder_config.py``, importable without this package)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pipeline.config_base import read_yaml
from training.ladder_config import (
    CPU_TOKENS_PER_PARAM,
    CPU_WIDTHS,
    GPU_TOKENS_PER_PARAM,
    GPU_WIDTHS,
    LadderConfig,
    LadderError,
)

__all__ = [
    "CPU_TOKENS_PER_PARAM",
    "CPU_WIDTHS",
    "GPU_TOKENS_PER_PARAM",
    "GPU_WIDTHS",
    "LadderConfig",
    "LadderError",
    "load_ladder_config",
    "parse_list",
    "read_ladder_file",
]


def parse_list(text: str, kind: type, name: str) -> list:
    """``"32,48,64"`` → [32, 48, 64]; a clear LadderError naming the option otherwise."""
    try:
        values = [kind(part) for part in text.replace(" ", "").split(",") if part]
    except ValueError:
        raise LadderError(f"{name}: {text!r} is not a comma-separated list of numbers") from None
    if not values:
        raise LadderError(f"{name}: empty list")
    return values


def read_ladder_file(path: str | Path) -> dict[str, Any]:
    """A ladder YAML (``configs/ladder/*.yaml``) as a mapping; errors name the file."""
    data = read_yaml(Path(path), LadderError, "ladder config")
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise LadderError(f"{path}: expected a mapping of ladder settings, got {type(data).__name__}")
    return dict(data)


def load_ladder_config(values: dict[str, Any]) -> LadderConfig:
    try:
        return LadderConfig.model_validate({k: v for k, v in values.items() if v is not None})
    except ValidationError as error:
        lines = ["invalid ladder settings"]
        for item in error.errors():
            where = ".".join(str(p) for p in item["loc"]) or "(top level)"
            lines.append(f"  {where}: {'unknown key' if item['type'] == 'extra_forbidden' else item['msg']}")
        raise LadderError("\n".join(lines)) from None
