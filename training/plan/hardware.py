"""What a plan runs on and what it may spend: the data (``Data``), the GPUs and how training uses them
(``Hardware``), and a compute budget (``Budget``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from training.gpus import GPU, UnknownGPUError, get_gpu
from training.units import PlanError, require_positive

DEFAULT_MFU = 0.40  # docs/reference.md: 39-47 % with torch.compile on one H200; a plain loop reaches ~25-40 %

Strategy = Literal["ddp", "zero1", "zero2", "zero3", "fsdp"]
Precision = Literal["amp", "bf16"]
Attention = Literal["sdpa", "eager"]


@dataclass
class Data:
    """Tokens the plan trains on and what is available. ``base_tokens`` switches on domain-adaptive mode."""

    tokens: float | None = None  # planned training tokens (continued tokens in domain-adaptive mode)
    unique_tokens: float | None = None  # unique tokens available (a shard manifest, or given)
    base_tokens: float | None = None  # the base model's original pre-training tokens
    min_tokens: float | None = None  # a recipe's minimum; fewer is a blocking problem

    def __post_init__(self) -> None:
        for name in ("tokens", "unique_tokens", "base_tokens", "min_tokens"):
            require_positive(name, getattr(self, name))


@dataclass
class Hardware:
    """The GPUs and how training uses them (parallelism, micro-batch, recompute, precision)."""

    gpu: str = "H100-SXM"
    gpus: int = 1
    mfu: float = DEFAULT_MFU
    price_per_gpu_hour: float | None = None
    strategy: Strategy = "ddp"
    micro_batch: int = 1
    seq_len: int = 2048
    activation_checkpointing: bool = False
    attention: Attention = "sdpa"
    precision: Precision = "amp"
    tp_size: int = 1

    def __post_init__(self) -> None:
        try:
            get_gpu(self.gpu)
        except UnknownGPUError as error:
            raise PlanError(f"gpu: {error}") from None
        for name in ("gpus", "micro_batch", "seq_len", "tp_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise PlanError(f"{name}: must be a positive integer, got {value!r}")
        if isinstance(self.mfu, bool) or not (0 < self.mfu <= 1):
            raise PlanError(f"mfu: must be in (0, 1] (a fraction of peak, e.g. 0.4), got {self.mfu!r}")
        require_positive("price_per_gpu_hour", self.price_per_gpu_hour)
        if self.strategy not in ("ddp", "zero1", "zero2", "zero3", "fsdp"):
            raise PlanError(f"strategy: {self.strategy!r} is not one of ddp, zero1, zero2, zero3, fsdp")
        if self.attention not in ("sdpa", "eager"):
            raise PlanError(f"attention: {self.attention!r} is not one of sdpa, eager")
        if self.precision not in ("amp", "bf16"):
            raise PlanError(f"precision: {self.precision!r} is not one of amp, bf16")
        if self.gpus % self.tp_size:
            raise PlanError(f"tp_size: {self.tp_size} does not divide the {self.gpus} GPUs")

    @property
    def dp_size(self) -> int:
        """Data-parallel ranks: the GPUs over the tensor-parallel group size."""
        return self.gpus // self.tp_size

    @property
    def device(self) -> GPU:
        return get_gpu(self.gpu)

    @property
    def cluster_flops(self) -> float:
        """Sustained FLOP/s of all GPUs at the given MFU."""
        return self.device.peak_flops * self.mfu * self.gpus


@dataclass
class Budget:
    """A compute budget, given as FLOPs, GPU-hours (on the plan's GPU at its MFU) or money (at a price)."""

    flops: float | None = None
    gpu_hours: float | None = None
    money: float | None = None

    def __post_init__(self) -> None:
        for name in ("flops", "gpu_hours", "money"):
            require_positive(name, getattr(self, name))

    @property
    def given(self) -> bool:
        return any(v is not None for v in (self.flops, self.gpu_hours, self.money))

    def to_flops(self, hardware: Hardware) -> float | None:
        """One FLOPs figure; two forms that disagree by more than 1 % are an error listing both."""
        gpu_flops = hardware.device.peak_flops * hardware.mfu
        forms: dict[str, float] = {}
        if self.flops is not None:
            forms[f"flops={self.flops:.3g}"] = self.flops
        if self.gpu_hours is not None:
            forms[f"gpu_hours={self.gpu_hours:g} on {hardware.gpu} at MFU {hardware.mfu:g}"] = (
                self.gpu_hours * 3600 * gpu_flops
            )
        if self.money is not None:
            if hardware.price_per_gpu_hour is None:
                raise PlanError("money: a budget in money needs price_per_gpu_hour (--price)")
            hours = self.money / hardware.price_per_gpu_hour
            forms[f"money={self.money:g} at {hardware.price_per_gpu_hour:g}/GPU-hour"] = hours * 3600 * gpu_flops
        if not forms:
            return None
        values = list(forms.values())
        if max(values) > min(values) * 1.01:
            listed = "; ".join(f"{k} → {v:.3g} FLOPs" for k, v in forms.items())
            raise PlanError(f"budget: given {len(forms)} ways that disagree ({listed}); give one")
        return values[0]
