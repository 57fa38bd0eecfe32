"""A rung of the ladder from its width: the Llama block it builds, its parameter counts, learning rate, batch,
warmup and the trunk steps where each token count's cool-down branch starts.

* **Sizes.** One width ``d`` per rung; the rest follows from it (a documented rule, so that a ladder is
  named by its widths): head_dim 64 (16 below width 128), heads = d / head_dim with no grouped-query
  attention, layers = max(2, d / 64), SwiGLU intermediate = ceil(8d/3) rounded up to a multiple of 64 (16
  below width 128), tied embeddings, the shards' vocabulary. ``runs.csv`` records both counts: ``params``
  (every parameter, embedding included, what ``model.parameters()`` holds) and ``non_embedding_params``
  (Kaplan et al.'s N). **The fit uses ``params``**: the plan's 6·N·D and its verdicts count every
  parameter, and a law fitted on non-embedding N would be read against total N there (at the CPU
  ladder's widths the embedding is most of the model, so the two differ by a factor of 2-10).
* **Learning rate and batch.** DeepSeek LLM (2024)'s fitted rules at the rung's Chinchilla budget
  C = 6·N·20N: lr = 0.3118·C^-0.125, batch = 0.292·C^0.3271 tokens, the batch rounded to a whole number of
  micro-batches (at least one). They were fitted on DeepSeek's data and models; ``lr``/``batch_tokens``
  override them.
* **Branch points** (MiniCPM's WSD branching, Hu et al. 2024; cool-down shape from Hägele et al. 2024): for
  every token count D_k the trunk is checkpointed where D_k's WSD schedule would start to decay (the last
  20 % of the steps after warmup); training/ladder/run.py trains from there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from training.ladder.config import LadderConfig, LadderError
from training.models import count_params, shape_from_mapping

COOLDOWN = 0.2  # share of a branch's post-warmup steps spent cooling down (MiniCPM; Hägele et al. 2024)
WARMUP_SHARE = 0.01  # of the largest rung's steps …
WARMUP_MAX = 100  # … at most (and below the first branch point)


def ladder_shape(width: int) -> dict[str, Any]:
    """LlamaConfig overrides for a rung of this width (the rule in the module docstring)."""
    head_dim = 64 if width >= 128 else 16
    multiple = 64 if width >= 128 else 16
    if width % head_dim:
        raise LadderError(f"widths: {width} is not a multiple of the head size {head_dim}")
    heads = width // head_dim
    return {
        "hidden_size": width,
        "num_hidden_layers": max(2, width // 64),
        "num_attention_heads": heads,
        "num_key_value_heads": heads,
        "intermediate_size": math.ceil(math.ceil(8 * width / 3) / multiple) * multiple,
        "tie_word_embeddings": True,
    }


def deepseek_lr(flops: float) -> float:
    """DeepSeek LLM (2024), eq. 1: the near-optimal peak learning rate at compute C."""
    return 0.3118 * flops**-0.125


def deepseek_batch_tokens(flops: float) -> float:
    """DeepSeek LLM (2024), eq. 1: the near-optimal batch size in tokens at compute C."""
    return 0.292 * flops**0.3271


@dataclass
class Branch:
    tokens_per_param: float
    steps: int  # the branch's whole schedule, trunk steps included
    start: int  # the trunk step it branches from (where its cool-down begins)

    @property
    def name(self) -> str:
        return f"tpp-{self.tokens_per_param:g}"


@dataclass
class Rung:
    width: int
    overrides: dict[str, Any]
    params: int
    non_embedding_params: int
    lr: float
    batch_tokens: int
    warmup: int
    branches: list[Branch] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"size-{self.width}"

    @property
    def trunk_steps(self) -> int:
        return max(b.start for b in self.branches)

    @property
    def total_tokens(self) -> int:
        """Tokens this rung trains: the trunk plus every cool-down."""
        return self.batch_tokens * (self.trunk_steps + sum(b.steps - b.start for b in self.branches))


def _cooldown_start(steps: int, warmup: int) -> int:
    """Where ``Schedule(kind='wsd', decay_fraction=COOLDOWN)`` of ``steps`` steps begins to decay."""
    return steps - max(1, round(COOLDOWN * (steps - warmup)))


def rung_shape(width: int, vocab_size: int, seq_len: int):
    """The ``ModelShape`` of a rung (what the plan counts and prices)."""
    data = {**ladder_shape(width), "vocab_size": vocab_size, "max_position_embeddings": seq_len}
    return shape_from_mapping(data, origin=f"ladder width {width}", name=f"ladder-{width}")


def make_rung(width: int, vocab_size: int, config: LadderConfig) -> Rung:
    """A rung's parameter counts, lr, batch, warmup and branch points (the rules in the module docstring)."""
    per_pass = config.seq_len * config.micro_batch
    counted = count_params(rung_shape(width, vocab_size, config.seq_len))
    reference = 6 * counted.total * 20 * counted.total  # the rung's Chinchilla budget: the rules' C
    lr = config.lr or deepseek_lr(reference)
    batch = config.batch_tokens or max(1, round(deepseek_batch_tokens(reference) / per_pass)) * per_pass
    steps = [max(1, round(r * counted.total / batch)) for r in config.tokens_per_param]
    if len(set(steps)) != len(steps):
        raise LadderError(
            f"width {width}: tokens per parameter {config.tokens_per_param} give the same step counts {steps} "
            f"at {batch:,} tokens per step; choose ratios further apart or a smaller batch_tokens"
        )
    if min(steps) < 2:
        raise LadderError(
            f"width {width}: {min(config.tokens_per_param):g} tokens per parameter is {min(steps)} step of "
            f"{batch:,} tokens; a branch needs at least 2 (raise tokens per parameter or lower batch_tokens)"
        )
    warmup = max(1, min(WARMUP_MAX, round(WARMUP_SHARE * max(steps))))
    branches = [Branch(r, s, _cooldown_start(s, warmup)) for r, s in zip(config.tokens_per_param, steps, strict=True)]
    overrides = ladder_shape(width)
    return Rung(width, overrides, counted.total, counted.non_embedding, lr, batch, warmup, branches)
