"""``LadderConfig``, the ladder's settings (``tokenmill scaling ladder`` flags, ``configs/ladder/*.yaml``; every
field documented in docs/scaling.md), outside ``training/ladder/``: the CLI generates the command's flags from it
at start-up, and importing the package loads the trainer, the evals and numpy (130 more modules for ``tokenmill
--help``). Reading a ladder file and the errors' wording: ``training/ladder/config.py``."""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field, field_validator

from pipeline.config_base import StrictModel
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
    widths: list[int] = Field(
        default_factory=lambda: list(CPU_WIDTHS),
        min_length=1,
        description="model widths (multiples of 16); depth, heads and MLP follow from the width (docs/scaling.md)",
    )
    tokens_per_param: list[float] = Field(
        default_factory=lambda: list(CPU_TOKENS_PER_PARAM),
        min_length=1,
        description="token counts per size as tokens per parameter, comma-separated "
        "(default cpu 1,2,4; gpu 5,10,20,40)",
    )
    seq_len: int = Field(default=64, ge=8, description="tokens per sequence (default cpu 64, gpu 1024)")
    micro_batch: int = Field(default=8, ge=1, description="sequences per forward pass (default cpu 8, gpu 16)")
    lr: float | None = Field(
        default=None, gt=0, description="peak learning rate for every size (default: DeepSeek's rule)"
    )
    batch_tokens: int | None = Field(
        default=None, ge=1, description="tokens per step for every size (default: DeepSeek's rule)"
    )
    eval_batches: int = Field(default=100, ge=1, description="held-out micro-batches per source per loss")
    seed: int = Field(default=1234, description="seed of every run and of the bootstrap")
    cpu_threads: int | Literal["auto"] | None = Field(
        default=1, description="CPU threads per run (1: branches reproduce each other bit for bit; or auto)"
    )
    tasks: list[str] = Field(
        default_factory=list,
        description="evaluate each branch's model on these multiple-choice tasks, comma-separated (`tokenmill eval`)",
    )
    bootstrap: int = Field(default=200, ge=0, description="bootstrap resamples for the fit's 95 % intervals")
    force: bool = Field(default=False, description="train past the 16-epoch repetition limit and the budget check")

    @field_validator("tokens_per_param", "tasks", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        # the flag's text (``--tokens-per-param 1,2,4``); a YAML list passes as it is
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

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
