"""The ladder's settings (``tokenmill scaling ladder`` flags, ``configs/ladder/*.yaml``): ``LadderConfig`` and how
it is read; every field documented in docs/scaling.md."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator

from pipeline.config_base import StrictModel, read_yaml
from pipeline.errors import TokenmillError
from training.config import check_threads

CPU_WIDTHS = (32, 48, 64)
GPU_WIDTHS = (128, 256, 384, 512, 640, 768)
CPU_TOKENS_PER_PARAM = (1.0, 2.0, 4.0)
GPU_TOKENS_PER_PARAM = (5.0, 10.0, 20.0, 40.0)


class LadderError(TokenmillError, ValueError):
    """A ladder that cannot run as asked; the message names the option."""


class LadderConfig(StrictModel):
    """``tokenmill scaling ladder``: what to train and where (every field documented in docs/scaling.md)."""

    shards: str = Field(description="token shards folder with held-out splits (tokenize.heldout_share > 0)")
    output: str = Field(description="ladder folder: size-<width>/, runs.csv, fit.json, ladder_report.md")
    widths: list[int] = Field(default_factory=lambda: list(CPU_WIDTHS), min_length=1)
    tokens_per_param: list[float] = Field(default_factory=lambda: list(CPU_TOKENS_PER_PARAM), min_length=1)
    seq_len: int = Field(default=64, ge=8)
    micro_batch: int = Field(default=8, ge=1)
    lr: float | None = Field(default=None, gt=0, description="peak lr for every size (default: DeepSeek's rule)")
    batch_tokens: int | None = Field(default=None, ge=1, description="tokens per step (default: DeepSeek's rule)")
    eval_batches: int = Field(default=100, ge=1, description="held-out micro-batches per source per branch")
    seed: int = 1234
    cpu_threads: int | Literal["auto"] | None = Field(
        default=1, description="CPU threads per run (1: branches reproduce each other bit for bit; or auto)"
    )
    tasks: list[str] = Field(
        default_factory=list, description="multiple-choice tasks each branch's model is evaluated on (`tokenmill eval`)"
    )
    bootstrap: int = Field(default=200, ge=0, description="bootstrap resamples for the fit's intervals")
    force: bool = Field(default=False, description="train past the repetition limit and the budget check")

    @field_validator("cpu_threads")
    @classmethod
    def _threads(cls, value: int | str | None) -> int | str | None:
        return check_threads(value)

    @field_validator("widths")
    @classmethod
    def _widths(cls, value: list[int]) -> list[int]:
        for width in value:
            if width < 16 or width % 16:
                raise ValueError(f"width {width} must be a multiple of 16 and at least 16")
        if len(set(value)) != len(value):
            raise ValueError("widths repeat")
        return sorted(value)

    @field_validator("tokens_per_param")
    @classmethod
    def _ratios(cls, value: list[float]) -> list[float]:
        if any(not math.isfinite(r) or r <= 0 for r in value):
            raise ValueError("tokens per parameter must be positive numbers")
        if len(set(value)) != len(value):
            raise ValueError("tokens per parameter repeat")
        return sorted(value)


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
