"""The memory model: peak bytes per GPU for mixed-precision AdamW training, and the cheapest change that fits.

Why it is written this way:
  * Memory: the per-parameter states of mixed-precision Adam, sharded by strategy, plus what autograd saves.
    Korthikanti et al.'s s·b·h·(34 + 5·a·s/h) is for a GPT block (GeLU 4h MLP, LayerNorm, dropout, eager
    attention); measured against ``saved_tensors_hooks`` on a Llama block (tests) it misses the SwiGLU width,
    the fp32 RMSNorm saves, autocast's per-consumer casts and the fp32 log-probabilities of the loss, and
    predicts 46.6 GiB where 56.6 GiB was measured (docs/reference.md). So the activation terms below are written by
    hand for the Llama block as transformers runs it (a measured gap), and ``korthikanti_bytes`` keeps the
    published formula for comparison. Flash/SDPA attention stores no s×s scores; eager attention does.
  * Tensor parallelism (``tp_size``): transformers' Llama ``tp_plan`` (Megatron's column/row split, Shoeybi et
    al. 2019) shards every decoder matrix, the embedding and the output head over the TP group; the RMSNorm
    weights stay whole. States are divided accordingly, then ZeRO-sharded over the data-parallel ranks
    (gpus / tp_size). Activations: what lives between the column- and the row-parallel matmul (q, k, v, the
    attention output, the SwiGLU tensors, eager scores) is divided by tp_size; the norms, their casts, the
    residual stream and the gathered logits are not, since transformers' plan has no sequence parallelism
    (Korthikanti et al.'s sbh·(10 + 24/t + 5as/(ht)) is the GPT form of the same split). Pipeline parallelism
    is not modelled: accelerate cannot drive it (docs/plan.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from training.gpus import GIB
from training.models import ModelShape, count_params
from training.plan.hardware import Hardware, Strategy

MEMORY_HEADROOM = 0.05  # kept free for the CUDA context and allocator fragmentation


# bytes per parameter and the ZeRO stage from which each state is sharded over the data-parallel ranks
_STATES: dict[str, dict[str, tuple[float, int]]] = {
    # torch autocast (accelerate's mixed_precision="bf16"): fp32 weights are the master copy
    "amp": {"weights_fp32": (4, 3), "grads_fp32": (4, 2), "adam_fp32": (8, 1)},
    # Megatron/DeepSpeed layout: bf16 weights and grads, fp32 master copy, fp32 Adam moments
    "bf16": {"weights_bf16": (2, 3), "grads_bf16": (2, 2), "master_fp32": (4, 1), "adam_fp32": (8, 1)},
}
_STAGE = {"ddp": 0, "zero1": 1, "zero2": 2, "zero3": 3, "fsdp": 3}


def korthikanti_bytes(seq_len: int, micro_batch: int, hidden: int, heads: int, recompute: bool = False) -> float:
    """Korthikanti et al. 2022 activations per GPT layer: s·b·h·(34 + 5·a·s/h), or 2·s·b·h with full recompute."""
    sbh = seq_len * micro_batch * hidden
    return 2.0 * sbh if recompute else sbh * (34 + 5 * heads * seq_len / hidden)


def layer_activation_bytes_per_token(
    shape: ModelShape, seq_len: int, precision: str, attention: str, tp_size: int = 1
) -> float:
    """Bytes one Llama decoder layer leaves for backward, per token (measured against autograd in tests).

    amp: two RMSNorms save fp32 input and fp32 normalised output (16h); autocast casts the normed input once
    per consumer (q, k, v, gate, up: 10h); SDPA keeps bf16 q, k, v and its output, which o_proj reuses
    (4q + 4kv); SwiGLU keeps gate, up, silu(gate) and their product (8I). bf16: the norms save fp32 input,
    bf16 normed and bf16 output shared by the projections (16h), no casts.

    ``tp_size``: the heads and the SwiGLU width are split over the group, the norms and casts are not.
    """
    h, q, kv, inter = shape.hidden_size, shape.q_width, shape.kv_width, shape.intermediate_size
    norms_and_casts = 26 * h if precision == "amp" else 16 * h
    split = 4 * q + 4 * kv + 8 * inter
    if attention == "eager":
        # scores: fp32 softmax output + bf16 probabilities per head and key; k and v repeated to all heads
        split += 6 * shape.num_heads * seq_len + 4 * (q - kv)
    return float(norms_and_casts + split / tp_size)


def tp_local_params(params: float, shape: ModelShape | None, tp_size: int) -> float:
    """Parameters one rank of a tensor-parallel group holds under transformers' Llama plan: every matrix (the
    decoder's, the embedding and the head) split ``tp_size`` ways, the RMSNorm weights whole. Without a shape
    (a bare count) all of it is taken as split, which the norms (~0.01 % of a Llama) hardly change."""
    if shape is None:
        return params / tp_size
    norms = (2 * shape.num_layers + 1) * shape.hidden_size
    return (params - norms) / tp_size + norms


@dataclass
class Memory:
    """Peak memory per GPU, by part, and whether it fits."""

    per_gpu_bytes: float
    fits: bool
    gpu_bytes: int
    usable_bytes: float
    breakdown: dict[str, float]
    strategy: str
    gpus: int
    micro_batch: int
    seq_len: int
    activation_checkpointing: bool
    precision: str
    attention: str
    activations_estimated: bool
    suggestion: str | None = None
    tp_size: int = 1
    tight: bool = False  # fits, but above HEADROOM_SHARE of usable memory: ``suggestion`` then buys headroom

    @property
    def per_gpu_gib(self) -> float:
        return self.per_gpu_bytes / GIB


def estimate_memory(params: float, shape: ModelShape | None, hardware: Hardware) -> Memory:
    """Peak bytes per GPU: optimizer/weight/grad states sharded by strategy + activations + loss logits.

    Counted as if gradients were live during the forward pass (they are under gradient accumulation); with one
    micro-batch per step and ``zero_grad(set_to_none=True)`` the real peak is lower by up to the gradient bytes.
    With ``tp_size`` > 1 the states and the activations between the split matmuls are divided by it (module
    docstring); ZeRO then shards over the ``gpus / tp_size`` data-parallel ranks.
    """
    stage = _STAGE[hardware.strategy]
    tp, dp = hardware.tp_size, hardware.dp_size
    local = params if tp == 1 else tp_local_params(params, shape, tp)
    breakdown: dict[str, float] = {}
    for state, (per_param, sharded_from) in _STATES[hardware.precision].items():
        breakdown[state] = local * per_param / (dp if stage >= sharded_from and stage > 0 else 1)
    if shape is not None:
        tokens = hardware.seq_len * hardware.micro_batch
        layer = layer_activation_bytes_per_token(shape, hardware.seq_len, hardware.precision, hardware.attention, tp)
        residual = 4 if hardware.precision == "amp" else 2  # the layer input checkpointing keeps
        if hardware.activation_checkpointing:
            # one checkpoint per layer, plus the one layer being recomputed during its backward
            activations = (shape.num_layers * residual * shape.hidden_size + layer) * tokens
        else:
            activations = shape.num_layers * layer * tokens
        final_norm = (10 if hardware.precision == "amp" else 8) * shape.hidden_size * tokens
        breakdown["activations"] = activations + final_norm
        # logits: fp32 log-probabilities saved by cross-entropy (4V), and while the loss runs backward the bf16
        # logits held by the model output (2V) plus two fp32 gradients (8V); under TP the head's output is
        # gathered (transformers' colwise_gather_output), so every rank holds all of them
        breakdown["logits"] = 14.0 * shape.vocab_size * tokens
        if hardware.precision == "amp" and not hardware.activation_checkpointing and stage < 3:
            # autocast's bf16 copies of every matmul weight, saved for the input gradients
            head = shape.vocab_size * shape.hidden_size
            input_embedding = 0 if shape.tie_embeddings else head
            breakdown["autocast_weight_copies"] = 2.0 * (params - input_embedding) / tp
        if stage == 3:
            # ZeRO-3/FSDP gathers one layer's bf16 weights at a time (two with prefetch)
            breakdown["gathered_layers"] = 2 * 2.0 * count_params(shape).per_layer / tp
    total = sum(breakdown.values())
    device = hardware.device
    usable = device.memory_bytes * (1 - MEMORY_HEADROOM)
    return Memory(
        per_gpu_bytes=total,
        fits=total <= usable,
        gpu_bytes=device.memory_bytes,
        usable_bytes=usable,
        breakdown=breakdown,
        strategy=hardware.strategy,
        gpus=hardware.gpus,
        micro_batch=hardware.micro_batch,
        seq_len=hardware.seq_len,
        activation_checkpointing=hardware.activation_checkpointing,
        precision=hardware.precision,
        attention=hardware.attention,
        activations_estimated=shape is not None,
        tp_size=tp,
    )


# Rough relative throughput lost by each change; ranks the fixes (a heuristic, not a measurement).
_FIX_COST = {"ddp": 0.0, "zero1": 0.01, "zero2": 0.02, "zero3": 0.10, "fsdp": 0.10}
_CHECKPOINTING_COST = 0.33  # full recompute runs the forward pass twice: ~8N instead of 6N FLOPs per token
_HALVING_COST = 0.02  # a smaller micro-batch (same global batch through accumulation) runs smaller matmuls


HEADROOM_SHARE = 0.9  # above this share of usable memory a plan "fits" too tightly to start without a fallback


def _within(estimate: Memory, share: float) -> bool:
    return estimate.per_gpu_bytes <= estimate.usable_bytes * share


def cheapest_fit(params: float, shape: ModelShape | None, hardware: Hardware, share: float = 1.0) -> str | None:
    """The cheapest change that makes training fit within ``share`` of usable memory, or None when it does
    already (``share`` < 1 asks for headroom: an estimate at 95 % of memory is one fragmentation away from OOM).

    Tries every combination of more sharding (ZeRO-1/2 shard optimizer states and gradients for little
    communication; ZeRO-3/FSDP also the weights), a smaller micro-batch (the global batch kept through
    gradient accumulation) and activation checkpointing, ranked by the rough throughput each costs; when none
    fits on these GPUs, the fewest GPUs that fit with everything switched on.
    """
    if _within(estimate_memory(params, shape, hardware), share):
        return None
    all_strategies: tuple[Strategy, ...] = ("ddp", "zero1", "zero2", "zero3")
    strategies = [s for s in all_strategies if _STAGE[s] >= _STAGE[hardware.strategy]]
    if hardware.dp_size == 1:
        strategies = [hardware.strategy]  # nothing to shard over
    micro_batches = []
    micro = hardware.micro_batch
    while micro >= 1:
        micro_batches.append(micro)
        micro //= 2
    recompute = [hardware.activation_checkpointing] + ([True] if not hardware.activation_checkpointing else [])
    options: list[tuple[float, Strategy, int, bool]] = []
    for strategy in strategies:
        for micro in micro_batches:
            for checkpointing in recompute:
                halvings = int(math.log2(hardware.micro_batch // micro))
                cost = (
                    _FIX_COST[strategy]
                    - _FIX_COST[hardware.strategy]
                    + halvings * _HALVING_COST
                    + (_CHECKPOINTING_COST if checkpointing and not hardware.activation_checkpointing else 0.0)
                )
                options.append((cost, strategy, micro, checkpointing))
    for _cost, strategy, micro, checkpointing in sorted(options):
        option = replace(hardware, strategy=strategy, micro_batch=micro, activation_checkpointing=checkpointing)
        estimate = estimate_memory(params, shape, option)
        if _within(estimate, share):
            changes = []
            if strategy != hardware.strategy:
                changes.append(f"strategy {strategy}")
            if micro != hardware.micro_batch:
                changes.append(f"micro-batch {micro} (same global batch through gradient accumulation)")
            if checkpointing != hardware.activation_checkpointing:
                changes.append("activation checkpointing (~1/3 more compute)")
            return f"{' + '.join(changes)} → {estimate.per_gpu_gib:.1f} GiB"
    sharded = replace(hardware, strategy="zero3", activation_checkpointing=True, micro_batch=1)
    for gpus in (2**k for k in range(1, 17)):
        if gpus <= hardware.gpus:
            continue
        estimate = estimate_memory(params, shape, replace(sharded, gpus=gpus))
        if _within(estimate, share):
            return (
                f"{gpus} GPUs with zero3/fsdp, activation checkpointing and micro-batch 1 "
                f"→ {estimate.per_gpu_gib:.1f} GiB"
            )
    return "no setup up to 65,536 GPUs fits: tensor/pipeline parallelism or a smaller model is needed"
