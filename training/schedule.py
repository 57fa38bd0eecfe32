"""Learning-rate schedules: linear warmup, then cosine or warmup-stable-decay (WSD) down to a floor.

Written by hand (nanoGPT's ``get_lr``) after a measured gap in the library: transformers'
``get_cosine_with_min_lr_schedule_with_warmup`` climbs back up once past its last step (0.1 → 0.13 → 0.23 …
of the peak with 10 planned steps), which a run extended beyond its schedule would follow, and its warmup
gives step 0 a learning rate of 0 (a wasted step). Here the schedule is a pure function of the step: the
loop sets ``param_group["lr"]`` every step, so resuming needs only the step number, and the schedule's
parameters live in the resolved config that the checkpoint stores (a ``LambdaLR`` would restore stale
base rates from its state dict after a forced config change).

WSD (Hu et al. 2024, MiniCPM): warmup, a long stable phase at the peak, then a short decay; the decay
follows 1 - sqrt, which Hägele et al. 2024 found to match cosine at equal length. Its appeal for
domain-adaptive and open-ended runs: the stable phase can be extended without re-planning the whole curve.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Schedule:
    """``lr(step)`` for step = 0, 1, …: warmup to ``peak``, decay to ``floor`` by ``total`` steps, then ``floor``."""

    peak: float
    floor: float
    warmup: int
    total: int
    kind: str = "cosine"
    decay_fraction: float = 0.2  # wsd only

    def __post_init__(self) -> None:
        if self.kind not in ("cosine", "wsd"):
            raise ValueError(f"schedule: {self.kind!r} is not cosine or wsd")
        if not 0 <= self.floor <= self.peak:
            raise ValueError(f"schedule: floor {self.floor} must lie in [0, peak {self.peak}]")
        if self.total < 1 or not 0 <= self.warmup <= self.total:
            raise ValueError(f"schedule: warmup {self.warmup} and total {self.total} steps do not fit")

    def __call__(self, step: int) -> float:
        if step < self.warmup:
            return self.peak * (step + 1) / (self.warmup + 1)  # step 0 already learns
        if step >= self.total:
            return self.floor
        if self.kind == "cosine":
            progress = (step - self.warmup) / max(1, self.total - self.warmup)
            return self.floor + 0.5 * (1 + math.cos(math.pi * progress)) * (self.peak - self.floor)
        decay = max(1, round(self.decay_fraction * (self.total - self.warmup)))
        start = self.total - decay
        if step < start:
            return self.peak
        progress = (step - start) / decay
        return self.floor + (1 - math.sqrt(progress)) * (self.peak - self.floor)


def from_config(config) -> Schedule:
    """The schedule of a resolved ``TrainConfig``."""
    return Schedule(
        peak=config.lr,
        floor=config.min_lr,
        warmup=config.warmup_steps,
        total=config.decay_steps,
        kind=config.schedule,
        decay_fraction=config.decay_fraction,
    )
