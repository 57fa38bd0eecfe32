"""The Chinchilla budget check: model × tokens × hardware → FLOPs, compute-optimal N/D, memory, time, verdicts.

Pure Python (no torch): the CLI, the Prefect flow and the training gate all call ``plan()`` and ``check()``.

Conventions, and why:
  * FLOPs per token = 6N + 12·L·H·Q·T (PaLM / nanoGPT; N = all parameters, H·Q = query width, T = sequence
    length). This is the convention docs/reference.md's MFU figures use (134M at 371k tok/s = 39 % of 989 TFLOP/s).
    ``causal`` halves the attention term (a causal mask skips half the scores); ``6n`` drops it.
  * Compute-optimal sizes use C = 6·N·D as Chinchilla's Table 3 does. The default rule is D = 20·N, which
    reproduces every Table 3 row within 5 % (N = sqrt(C / 120)); the parametric fit (Epoch AI's refit by
    default) is reported beside it. Hoffmann's published Approach-3 constants imply ~90+ tokens/parameter
    at Table 3's budgets and disagree with the paper's own table, hence the warning when they are chosen.
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

import json
import math
import re
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from pipeline.errors import TokenmillError
from training.gpus import GIB, GPU, GPUS, UnknownGPUError, get_gpu
from training.models import ModelError, ModelShape, count_params, load_shape

TOKENS_PER_PARAM = 20.0  # the Chinchilla rule of thumb; reproduces Table 3 within 5 %
OPTIMAL_BAND = 1.5  # compute-optimal when tokens/param lies within [20/1.5, 20·1.5]
USEFUL_EPOCHS = 4.0  # Muennighoff et al. 2023: up to ~4 epochs repeated data is almost as good as fresh
MAX_EPOCHS = 16.0  # … and beyond ~16 more compute buys (almost) nothing: check() blocks
DEFAULT_MFU = 0.40  # docs/reference.md: 39-47 % with torch.compile on one H200; a plain loop reaches ~25-40 %
MEMORY_HEADROOM = 0.05  # kept free for the CUDA context and allocator fragmentation
PF_DAY = 1e15 * 86400
REPLAY_SHARE = (0.05, 0.25)  # Ibrahim et al. 2024: 5 % replay for a mild shift, up to 25 % for a strong one

Convention = Literal["palm", "causal", "6n"]
Strategy = Literal["ddp", "zero1", "zero2", "zero3", "fsdp"]
Precision = Literal["amp", "bf16"]
Attention = Literal["sdpa", "eager"]

HOFFMANN_WARNING = (
    "Hoffmann et al.'s published fit constants imply ~90+ tokens/parameter at Chinchilla's budgets and disagree "
    "with the paper's own Table 3 (Besiroglu et al. 2024); the Epoch AI refit is the default for a reason."
)
FITTED_LOSS_CAVEAT = (
    "Predicted loss comes from the law fitted to your runs: it holds for their data, tokenizer and recipe, and "
    "is a forecast outside the compute range they span."
)
LOSS_CAVEAT = (
    "Predicted loss L(N, D) = E + A/N^α + B/D^β holds only for the fit's data and tokenizer (MassiveText); "
    "use it to compare plans, not to predict your run's loss."
)
ADAPTATION_LADDER = (
    "Adaptation ladder, cheapest first: prompting (with retrieval) → fine-tuning on task data → continued "
    "pre-training of a base model on domain text → pre-training from scratch. Climb only when the rung below "
    "fails on held-out domain data."
)


class PlanError(TokenmillError, ValueError):
    """Input that cannot be planned; the message names the option (``mfu``, ``tokens``, …)."""


# ---------------------------------------------------------------------------------------------- numbers


_SUFFIXES = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12, "p": 1e15}


def parse_count(value: Any, name: str = "value") -> float:
    """``7B``, ``1.4T``, ``300e9``, ``13M``, ``2,000`` or a number → float. Raises PlanError naming ``name``."""
    if isinstance(value, bool):
        raise PlanError(f"{name}: expected a number, got {value!r}")
    if isinstance(value, int | float):
        return float(value)
    text = str(value).strip().replace(",", "").replace("_", "")
    match = re.fullmatch(r"([+-]?[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([kKmMbBgGtTpP]?)", text)
    if not match:
        raise PlanError(f"{name}: {value!r} is not a number (examples: 7B, 1.4T, 3e23)")
    return float(match.group(1)) * _SUFFIXES.get(match.group(2).lower(), 1.0)


def human(value: float, unit: str = "") -> str:
    """3.14e23 → '3.14e23'; 6.7e9 → '6.74B' (params/tokens)."""
    if value is None:
        return "—"
    if unit == "flops":
        return f"{value:.3g}".replace("e+", "e")
    for suffix, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.3g}{suffix}"
    return f"{value:.3g}"


def _positive(name: str, value: float | int | None) -> None:
    if value is not None and (isinstance(value, bool) or not value > 0 or not math.isfinite(value)):
        raise PlanError(f"{name}: must be a positive number, got {value!r}")


# ---------------------------------------------------------------------------------------------- compute


def flops_per_token(
    params: float, shape: ModelShape | None = None, seq_len: int = 2048, convention: Convention = "palm"
) -> float:
    """Training FLOPs per token: 6N plus the attention term 12·L·H·Q·T (``palm``), half of it (``causal``) or
    none (``6n``). Without a shape the attention term is unknown and left out."""
    if convention not in ("palm", "causal", "6n"):
        raise PlanError(f"convention: {convention!r} is not one of palm, causal, 6n")
    _positive("params", params)
    _positive("seq_len", seq_len)
    base = 6.0 * params
    if shape is None or convention == "6n":
        return base
    attention = 12.0 * shape.num_layers * shape.q_width * seq_len
    return base + (attention / 2 if convention == "causal" else attention)


@dataclass(frozen=True)
class ScalingFit:
    """L(N, D) = E + A/N^α + B/D^β and its compute-optimal split under C = 6·N·D.

    ``path`` is set for a law fitted to the team's own runs (``tokenmill scaling fit``, loaded by
    ``load_fit``); such a law drives the plan's optimum and verdicts. ``compute_range`` is the span of
    C = 6ND over the runs it was fitted on (outside it the law extrapolates).
    """

    name: str
    E: float
    A: float
    B: float
    alpha: float
    beta: float
    source: str
    path: str | None = None
    compute_range: tuple[float, float] | None = None
    n_points: int | None = None

    def loss(self, params: float, tokens: float) -> float:
        # N^-α rather than 1/N^α: a poorly determined fit (α ≈ 50 on a few tiny runs) underflows to 0 instead of
        # raising OverflowError in the power
        return self.E + self.A * params**-self.alpha + self.B * tokens**-self.beta

    def _g(self) -> float:
        return (self.alpha * self.A / (self.beta * self.B)) ** (1 / (self.alpha + self.beta))

    def optimal(self, flops: float) -> tuple[float, float]:
        """N*, D* minimising the loss at C = 6·N·D (Hoffmann et al. 2022, eq. 4)."""
        _positive("flops", flops)
        n = self._g() * (flops / 6) ** (self.beta / (self.alpha + self.beta))
        return n, flops / 6 / n

    def tokens_for(self, params: float) -> float:
        """D such that (params, D) lies on this law's compute-optimal frontier."""
        _positive("params", params)
        half_c = (params / self._g()) ** ((self.alpha + self.beta) / self.beta)  # C/6 = N·D on the frontier
        return half_c / params

    def params_for(self, tokens: float) -> float:
        """N such that (N, tokens) lies on this law's compute-optimal frontier: N = (G·D^p)^(1/(1−p))."""
        _positive("tokens", tokens)
        p = self.beta / (self.alpha + self.beta)
        return (self._g() * tokens**p) ** (1 / (1 - p))

    @property
    def fitted(self) -> bool:
        return self.path is not None

    def constants(self) -> dict[str, float]:
        return {"E": self.E, "A": self.A, "B": self.B, "alpha": self.alpha, "beta": self.beta}


FITS = {
    "epoch": ScalingFit("epoch", 1.8172, 482.01, 2085.43, 0.3478, 0.3658, "Besiroglu et al. 2024 (Epoch AI refit)"),
    "hoffmann": ScalingFit("hoffmann", 1.69, 406.4, 410.7, 0.34, 0.28, "Hoffmann et al. 2022, Approach 3"),
}
FIT_FILE = "fit.json"
OWN_FIT = "own"  # the name a law fitted to the team's runs goes by in plans ("own fit")


def load_fit(path: str | Path) -> ScalingFit:
    """A law from a ``fit.json`` written by ``tokenmill scaling fit`` (or a folder holding one).

    Needs ``E``, ``A``, ``B``, ``alpha``, ``beta`` (positive numbers); ``n_points`` and ``compute_range`` are
    used when present. Raises PlanError naming the file and the field.
    """
    path = Path(path)
    if path.is_dir():
        path = path / FIT_FILE
    where = f"fit: {path}"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PlanError(
            f"{where}: not found (tokenmill scaling fit RUNS.csv --output DIR writes DIR/{FIT_FILE})"
        ) from None
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise PlanError(f"{where}: not readable JSON: {error}") from None
    if not isinstance(data, dict):
        raise PlanError(f"{where}: expected a JSON object with E, A, B, alpha, beta")
    constants: dict[str, float] = {}
    for key in ("E", "A", "B", "alpha", "beta"):
        if key not in data:
            raise PlanError(f"{where}: missing field {key!r} (a fit needs E, A, B, alpha, beta)")
        value = data[key]
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
            raise PlanError(f"{where}: field {key!r} must be a positive number, got {value!r}")
        constants[key] = float(value)
    span = data.get("compute_range")
    compute_range = None
    if span is not None:
        if (
            not isinstance(span, list)
            or len(span) != 2
            or not all(isinstance(v, int | float) and not isinstance(v, bool) and v > 0 for v in span)
        ):
            raise PlanError(f"{where}: field 'compute_range' must be [low, high] FLOPs, got {span!r}")
        compute_range = (float(min(span)), float(max(span)))
    n_points = data.get("n_points")
    if n_points is not None and (isinstance(n_points, bool) or not isinstance(n_points, int) or n_points < 1):
        raise PlanError(f"{where}: field 'n_points' must be a positive integer, got {n_points!r}")
    runs = f" of {n_points} runs" if n_points else ""
    return ScalingFit(
        OWN_FIT,
        **constants,
        source=f"tokenmill scaling fit{runs}, {path}",
        path=str(path),
        compute_range=compute_range,
        n_points=n_points,
    )


def get_fit(name: str | ScalingFit) -> ScalingFit:
    """A published fit by name (``epoch``, ``hoffmann``), or a fitted law from a ``fit.json`` path."""
    if isinstance(name, ScalingFit):
        return name
    if name in FITS:
        return FITS[name]
    if not looks_like_fit_path(name):
        raise PlanError(f"fit: {name!r} is not one of {', '.join(FITS)}, nor a {FIT_FILE} path (tokenmill scaling fit)")
    return load_fit(name)


def looks_like_fit_path(value: str) -> bool:
    """A ``fit`` value that is meant as a file: ends in .json, or names an existing file or folder."""
    return str(value).endswith(".json") or Path(value).exists()


def optimal_by_rule(flops: float, tokens_per_param: float = TOKENS_PER_PARAM) -> tuple[float, float]:
    """N*, D* with D = r·N and C = 6·N·D, i.e. N* = sqrt(C / 6r)."""
    _positive("flops", flops)
    _positive("tokens_per_param", tokens_per_param)
    n = math.sqrt(flops / (6 * tokens_per_param))
    return n, tokens_per_param * n


def compute_optimal(flops: float, method: str = "rule", tokens_per_param: float = TOKENS_PER_PARAM):
    """N*, D* for a compute budget: ``rule`` (20 tokens/param), ``epoch`` or ``hoffmann`` (parametric fits)."""
    if method == "rule":
        return optimal_by_rule(flops, tokens_per_param)
    return get_fit(method).optimal(flops)


# ---------------------------------------------------------------------------------------------- inputs


@dataclass
class Data:
    """Tokens the plan trains on and what is available. ``base_tokens`` switches on domain-adaptive mode."""

    tokens: float | None = None  # planned training tokens (continued tokens in domain-adaptive mode)
    unique_tokens: float | None = None  # unique tokens available (a shard manifest, or given)
    base_tokens: float | None = None  # the base model's original pre-training tokens
    min_tokens: float | None = None  # a recipe's minimum; fewer is a blocking problem

    def __post_init__(self) -> None:
        for name in ("tokens", "unique_tokens", "base_tokens", "min_tokens"):
            _positive(name, getattr(self, name))


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
        _positive("price_per_gpu_hour", self.price_per_gpu_hour)
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
            _positive(name, getattr(self, name))

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


# ---------------------------------------------------------------------------------------------- memory


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


def cheapest_fit(params: float, shape: ModelShape | None, hardware: Hardware) -> str | None:
    """The cheapest change that makes training fit, or None when it fits already.

    Tries every combination of more sharding (ZeRO-1/2 shard optimizer states and gradients for little
    communication; ZeRO-3/FSDP also the weights), a smaller micro-batch (the global batch kept through
    gradient accumulation) and activation checkpointing, ranked by the rough throughput each costs; when none
    fits on these GPUs, the fewest GPUs that fit with everything switched on.
    """
    if estimate_memory(params, shape, hardware).fits:
        return None
    strategies = [s for s in ("ddp", "zero1", "zero2", "zero3") if _STAGE[s] >= _STAGE[hardware.strategy]]
    if hardware.dp_size == 1:
        strategies = [hardware.strategy]  # nothing to shard over
    micro_batches = []
    micro = hardware.micro_batch
    while micro >= 1:
        micro_batches.append(micro)
        micro //= 2
    recompute = [hardware.activation_checkpointing] + ([True] if not hardware.activation_checkpointing else [])
    options = []
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
        if estimate.fits:
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
        if estimate.fits:
            return (
                f"{gpus} GPUs with zero3/fsdp, activation checkpointing and micro-batch 1 "
                f"→ {estimate.per_gpu_gib:.1f} GiB"
            )
    return "no setup up to 65,536 GPUs fits: tensor/pipeline parallelism or a smaller model is needed"


# ---------------------------------------------------------------------------------------------- manifest


def manifest_info(path: str | Path) -> dict[str, Any]:
    """Unique training tokens (and the tokenizer's vocab size) from a shard ``manifest.json`` (or its folder).

    The tokenize stage records per source ``tokens.train`` (curated unique tokens) and ``tokens.mixed`` (what
    the train shards hold after up/down-sampling); the shards hold min(train, mixed) unique tokens of each
    source. A top-level ``unique_tokens`` (a hand-written manifest) wins.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "manifest.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PlanError(f"manifest: {path} not found") from None
    except (OSError, ValueError) as error:
        raise PlanError(f"manifest: {path}: not readable JSON: {error}") from None
    if not isinstance(data, dict):
        raise PlanError(f"manifest: {path}: expected a JSON object")

    def source_unique(entry: Any) -> float | None:
        if not isinstance(entry, dict):
            return None
        if isinstance(entry.get("unique_tokens"), int | float):
            return float(entry["unique_tokens"])
        tokens = entry.get("tokens")
        if not isinstance(tokens, dict) or not isinstance(tokens.get("train"), int | float):
            return None
        mixed = tokens.get("mixed")
        return float(min(tokens["train"], mixed) if isinstance(mixed, int | float) else tokens["train"])

    unique: float | None = None
    if isinstance(data.get("unique_tokens"), int | float):
        unique = float(data["unique_tokens"])
    elif isinstance(data.get("sources"), dict) and data["sources"]:
        counts = [source_unique(entry) for entry in data["sources"].values()]
        if all(count is not None for count in counts):
            unique = sum(counts)  # type: ignore[arg-type]
    if unique is None or unique <= 0:
        raise PlanError(
            f"manifest: {path}: no token counts found (expected sources.<name>.tokens.train, or unique_tokens)"
        )
    tokenizer = data.get("tokenizer")
    vocab = data.get("vocab_size") or (tokenizer.get("vocab_size") if isinstance(tokenizer, dict) else None)
    return {"unique_tokens": unique, "vocab_size": vocab if isinstance(vocab, int) and vocab > 0 else None}


# ---------------------------------------------------------------------------------------------- the plan


@dataclass
class Plan:
    """Everything the budget check concluded; ``to_json()`` is the ``tokenmill plan --json`` output."""

    model: dict[str, Any]
    params: float
    non_embedding_params: float
    tokens: float
    flops_per_token: float
    convention: str
    flops: float
    pf_days: float
    tokens_per_param: float
    verdicts: list[str]
    warnings: list[str]
    optimal: dict[str, Any]
    optimal_fit: dict[str, Any]
    predicted_loss: float
    memory: Memory
    gpu: dict[str, Any]
    gpus: int
    mfu: float
    gpu_hours: float
    wall_hours: float
    cost: float | None
    budget_flops: float | None
    data: dict[str, Any]
    domain: dict[str, Any] | None
    law_used: str = ""  # which law set the optimum and the verdicts: the rule, or the team's fitted law
    notes: list[str] = field(default_factory=list)
    hardware: Hardware | None = field(default=None, repr=False)
    shape: ModelShape | None = field(default=None, repr=False)

    @property
    def data_limited(self) -> bool:
        return bool(self.data.get("data_limited"))

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if k not in ("hardware", "shape", "memory")}
        memory = asdict(self.memory)
        memory["per_gpu_gib"] = self.memory.per_gpu_gib
        out["memory"] = memory
        for key in ("params", "non_embedding_params", "tokens"):
            if float(out[key]).is_integer():
                out[key] = int(out[key])  # exact counts stay exact in JSON
        out["wall_days"] = self.wall_hours / 24
        return out

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)


def _resolve_model(model: Any) -> tuple[ModelShape | None, float | None]:
    if model is None:
        return None, None
    if isinstance(model, bool):
        raise PlanError(f"params: expected a number, got {model!r}")
    if isinstance(model, int | float):
        _positive("params", model)
        return None, float(model)
    try:
        shape = load_shape(model)
    except ModelError as error:
        raise PlanError(f"model: {error}") from None
    return shape, float(count_params(shape).total)


def plan(
    model: ModelShape | str | Path | float | None = None,
    data: Data | float | None = None,
    hardware: Hardware | str | None = None,
    *,
    budget: Budget | None = None,
    convention: Convention = "palm",
    fit: str | ScalingFit = "epoch",
    tokens_per_param: float = TOKENS_PER_PARAM,
) -> Plan:
    """Plan a training run.

    ``model``: a shape, a preset name / model YAML / HF config path, or a parameter count (no shape: the
    attention FLOPs and activation memory are then left out). ``data``: planned tokens or a ``Data``.
    Missing pieces are derived: no tokens → the budget's tokens, else compute-optimal (20 per parameter);
    no model → the compute-optimal size for the budget (or for the tokens).

    ``fit``: ``epoch``/``hoffmann`` (published fits, reported beside the 20 tokens/param rule, which drives the
    optimum and verdicts), or a law fitted to the team's runs (a ``fit.json`` path or a ``ScalingFit`` from
    ``load_fit``): then that law drives the compute-optimal size, the derived tokens/size, the verdicts and
    the predicted loss, and ``optimal_fit.vs_chinchilla`` says how far its optimum is from the rule's.
    """
    data = Data(tokens=data) if isinstance(data, int | float) and not isinstance(data, bool) else (data or Data())
    if isinstance(hardware, str):
        hardware = Hardware(gpu=hardware)
    hardware = hardware or Hardware()
    budget = budget or Budget()
    fit_model = get_fit(fit)
    _positive("tokens_per_param", tokens_per_param)
    if convention not in ("palm", "causal", "6n"):
        raise PlanError(f"convention: {convention!r} is not one of palm, causal, 6n")
    shape, params = _resolve_model(model)
    budget_flops = budget.to_flops(hardware)
    notes: list[str] = []
    warnings: list[str] = []
    if fit_model.name == "hoffmann":
        warnings.append(HOFFMANN_WARNING)
    fitted = fit_model.fitted  # the team's own law drives the optimum; a published fit is only reported
    law = f"fitted law ({fit_model.source})" if fitted else f"{tokens_per_param:g} tokens/param rule"

    tokens = data.tokens
    if params is None:
        if budget_flops is not None and tokens is None:
            if fitted:
                params, tokens = fit_model.optimal(budget_flops)
            else:
                params, tokens = optimal_by_rule(budget_flops, tokens_per_param)
            notes.append(f"model size chosen compute-optimal for the budget ({law})")
        elif tokens is not None and budget_flops is not None:
            params = budget_flops / (6 * tokens)
            notes.append("model size chosen so that the budget trains it on the planned tokens (C = 6ND)")
        elif tokens is not None:
            params = fit_model.params_for(tokens) if fitted else tokens / tokens_per_param
            notes.append(f"model size chosen compute-optimal for the planned tokens ({law})")
        else:
            raise PlanError("nothing to plan: give a model (--model/--params), tokens, or a budget")
    assert params is not None
    fpt = flops_per_token(params, shape, hardware.seq_len, convention)
    if shape is None:
        notes.append("no model shape: FLOPs/token = 6N (attention term left out), activations not estimated")
    if tokens is None:
        if budget_flops is not None:
            tokens = budget_flops / fpt
            notes.append("tokens: what the budget buys for this model")
        elif data.base_tokens is not None:
            raise PlanError("tokens: domain-adaptive mode (base_tokens) needs the continued-training tokens")
        else:
            if fitted:
                tokens = fit_model.tokens_for(params)
                notes.append(f"tokens not given: planned compute-optimal by the {law}")
            else:
                tokens = tokens_per_param * params
                notes.append(f"tokens not given: planned compute-optimal ({tokens_per_param:g} per parameter)")
    counts = count_params(shape) if shape is not None else None
    flops = fpt * tokens
    chinchilla_c = 6 * params * tokens
    reference_c = budget_flops if budget_flops is not None else chinchilla_c
    n_rule, d_rule = optimal_by_rule(reference_c, tokens_per_param)
    n_fit, d_fit = fit_model.optimal(reference_c)
    # the optimum the verdicts measure against: the fitted law's when the team fitted one, else the rule's
    n_opt, d_opt, tpp_opt = (n_fit, d_fit, d_fit / n_fit) if fitted else (n_rule, d_rule, tokens_per_param)
    ratio = tokens / params
    gpu = hardware.device
    gpu_hours = flops / (gpu.peak_flops * hardware.mfu) / 3600
    memory = estimate_memory(params, shape, hardware)
    memory.suggestion = cheapest_fit(params, shape, hardware)
    if hardware.activation_checkpointing:
        notes.append(
            "activation checkpointing runs each forward twice (~8N instead of 6N FLOPs per token): give the MFU "
            "measured with it, or expect ~25 % lower MFU and longer time than a plan at the same MFU without it"
        )
    if not memory.activations_estimated:
        notes.append("memory: optimizer/weight/gradient states only (no shape for activations)")

    verdicts: list[str] = []
    domain: dict[str, Any] | None = None
    if data.base_tokens is not None:
        domain = _domain_section(params, tokens, data.base_tokens)
        verdicts.append(domain["verdict"])
    else:
        verdicts.append(_training_verdict(ratio, params, tokens, n_opt, d_opt, tpp_opt, fit_model))
    data_section = _data_section(tokens, data.unique_tokens, d_opt, params, tpp_opt)
    verdicts.extend(data_section.pop("verdicts"))
    if budget_flops is not None and flops > budget_flops * 1.01:
        verdicts.append(f"over budget: the plan needs {flops:.3g} FLOPs, the budget is {budget_flops:.3g}")
    if not memory.fits:
        verdicts.append(
            f"does not fit: {memory.per_gpu_gib:.1f} GiB per GPU > {memory.usable_bytes / GIB:.1f} GiB usable on "
            f"{gpu.name}; cheapest fix: {memory.suggestion}"
        )
    if fitted:
        span = fit_model.compute_range
        if span is not None and not (span[0] / 1.01 <= reference_c <= span[1] * 1.01):
            factor = reference_c / span[1] if reference_c > span[1] else span[0] / reference_c
            warnings.append(
                f"extrapolation: the plan's compute {reference_c:.3g} FLOPs lies {factor:,.3g}× outside the runs the "
                f"law was fitted on ({span[0]:.3g}–{span[1]:.3g} FLOPs); its optimum and loss there are a forecast"
            )
        notes.append(FITTED_LOSS_CAVEAT)
    else:
        notes.append(LOSS_CAVEAT)
    model_info: dict[str, Any] = {"name": shape.name if shape else None, "source": shape.source if shape else None}
    if shape is not None:
        model_info["shape"] = {k: v for k, v in shape.to_dict().items() if k not in ("name", "source")}
    return Plan(
        model=model_info,
        params=params,
        non_embedding_params=float(counts.non_embedding) if counts else params,
        tokens=tokens,
        flops_per_token=fpt,
        convention=convention,
        flops=flops,
        pf_days=flops / PF_DAY,
        tokens_per_param=ratio,
        verdicts=verdicts,
        warnings=warnings,
        optimal={
            "params": n_rule,
            "tokens": d_rule,
            "method": f"{tokens_per_param:g} tokens/param",
            "flops": reference_c,
        },
        optimal_fit={
            "fit": fit_model.name,
            "source": fit_model.source,
            "params": n_fit,
            "tokens": d_fit,
            "loss": fit_model.loss(n_fit, d_fit),
            "path": fit_model.path,
            "law": fit_model.constants(),
            "tokens_per_param": d_fit / n_fit,
            "vs_chinchilla": {
                "method": f"{tokens_per_param:g} tokens/param",
                "params_ratio": n_fit / n_rule,
                "tokens_ratio": d_fit / d_rule,
                "tokens_per_param_ratio": (d_fit / n_fit) / tokens_per_param,
            },
        },
        law_used=law,
        predicted_loss=fit_model.loss(params, tokens),
        memory=memory,
        gpu={"name": gpu.name, "bf16_tflops": gpu.bf16_tflops, "memory_gib": gpu.memory_gib},
        gpus=hardware.gpus,
        mfu=hardware.mfu,
        gpu_hours=gpu_hours,
        wall_hours=gpu_hours / hardware.gpus,
        cost=gpu_hours * hardware.price_per_gpu_hour if hardware.price_per_gpu_hour else None,
        budget_flops=budget_flops,
        data=data_section | {"min_tokens": data.min_tokens},
        domain=domain,
        notes=notes,
        hardware=hardware,
        shape=shape,
    )


def _training_verdict(
    ratio: float, params: float, tokens: float, n_opt: float, d_opt: float, tpp: float, fit: ScalingFit
) -> str:
    low, high = tpp / OPTIMAL_BAND, tpp * OPTIMAL_BAND
    if ratio < low:
        return (
            f"under-trained: {ratio:,.1f} tokens/param (compute-optimal ≈ {tpp:.3g}); the same compute trains a "
            f"{human(n_opt)} model on {human(d_opt)} tokens to a lower loss "
            f"({fit.name} fit: {fit.loss(n_opt, d_opt):.3f} vs {fit.loss(params, tokens):.3f})"
        )
    if ratio <= high:
        return f"compute-optimal: {ratio:,.1f} tokens/param (within {low:.1f}–{high:.0f} around {tpp:.3g})"
    return (
        f"over-trained: {ratio:,.0f} tokens/param, past compute-optimal ({tpp:.3g}); a smaller model trained longer "
        "costs more to train but less to serve — inference-optimal when serving volume is large"
    )


def _data_section(tokens: float, unique: float | None, d_opt: float, params: float, tpp: float) -> dict[str, Any]:
    section: dict[str, Any] = {"unique_tokens": unique, "epochs": None, "data_limited": False, "verdicts": []}
    if unique is None:
        return section
    epochs = tokens / unique
    section["epochs"] = epochs
    needed = max(tokens, d_opt)
    if unique < needed:
        section["data_limited"] = True
        why = (
            f"the plan trains on {human(tokens)}"
            if tokens >= d_opt
            else f"a compute-optimal model for this compute trains on {human(d_opt)}"
        )
        section["verdicts"].append(
            f"data-limited: {human(unique)} unique tokens, but {why} "
            f"({human(tpp * params)} for {human(params)} parameters at {tpp:.3g}/param)"
        )
    if epochs > 1:
        section["verdicts"].append(f"repeats data: {epochs:.2f} epochs over {human(unique)} unique tokens")
    if epochs > USEFUL_EPOCHS:
        section["verdicts"].append(
            f"warning: {epochs:.1f} epochs — past ~{USEFUL_EPOCHS:g} epochs repeated tokens are worth much less "
            "than fresh ones (Muennighoff et al. 2023); gather more data or train a smaller model"
        )
    return section


def _domain_section(params: float, tokens: float, base_tokens: float) -> dict[str, Any]:
    share = tokens / base_tokens
    low, high = REPLAY_SHARE
    return {
        "base_tokens": base_tokens,
        "continued_tokens": tokens,
        "share_of_base": share,
        "base_tokens_per_param": base_tokens / params,
        "replay_share": [low, high],
        "replay_tokens": [tokens * low, tokens * high],
        "verdict": (
            f"domain-adaptive: {human(tokens)} continued tokens = {share:.1%} of the base model's "
            f"{human(base_tokens)} pre-training tokens; mix in {low:.0%}–{high:.0%} general-data replay "
            f"({low:.0%} for a mild domain shift, up to {high:.0%} for a strong one, e.g. a new language; "
            "Ibrahim et al. 2024) and re-warm the learning rate, then re-decay it"
        ),
        "learning_rate": "re-warm to a peak at or below the base model's, then decay again (cosine or WSD)",
        "ladder": ADAPTATION_LADDER,
    }


def check(plan: Plan, min_tokens: float | None = None, max_epochs: float = MAX_EPOCHS) -> list[str]:
    """Blocking problems the training stage refuses to start on (unless forced). Empty when all is well."""
    problems: list[str] = []
    memory = plan.memory
    if not memory.fits:
        problems.append(
            f"does not fit in GPU memory: {memory.per_gpu_gib:.1f} GiB per GPU needed, "
            f"{memory.usable_bytes / GIB:.1f} GiB usable on {plan.gpu['name']}; cheapest fix: {memory.suggestion}"
        )
    floor = min_tokens if min_tokens is not None else plan.data.get("min_tokens")
    if floor is not None and plan.tokens < floor:
        problems.append(f"fewer tokens than the recipe minimum: {human(plan.tokens)} < {human(floor)}")
    epochs = plan.data.get("epochs")
    if epochs is not None and epochs > max_epochs:
        problems.append(
            f"{epochs:.1f} epochs over {human(plan.data['unique_tokens'])} unique tokens (more than {max_epochs:g}: "
            "further repetition buys almost nothing)"
        )
    if plan.budget_flops is not None and plan.flops > plan.budget_flops * 1.01:
        problems.append(f"over budget: {plan.flops:.3g} FLOPs planned, {plan.budget_flops:.3g} available")
    return problems


# ---------------------------------------------------------------------------------------------- options


def _options_model():
    """``PlanOptions``: the flat option set shared by the CLI flags and a YAML ``plan:`` section."""
    from pydantic import field_validator

    from pipeline.config_base import StrictModel

    class PlanOptions(StrictModel):
        model: str | None = None
        params: float | None = None
        tokens: float | None = None
        unique_tokens: float | None = None
        base_tokens: float | None = None
        min_tokens: float | None = None
        manifest: str | None = None
        vocab_size: int | None = None
        gpu: str = "H100-SXM"
        gpus: int = 1
        mfu: float = DEFAULT_MFU
        price: float | None = None
        flops: float | None = None
        gpu_hours: float | None = None
        money: float | None = None
        seq_len: int | None = None
        micro_batch: int = 1
        strategy: Strategy = "ddp"
        activation_checkpointing: bool = False
        attention: Attention = "sdpa"
        precision: Precision = "amp"
        tp_size: int = 1
        convention: Convention = "palm"
        fit: str = "epoch"  # epoch, hoffmann, or a fit.json from `tokenmill scaling fit`
        tokens_per_param: float = TOKENS_PER_PARAM

        @field_validator("fit")
        @classmethod
        def _fit_name_or_file(cls, value: str) -> str:
            if value in FITS:
                return value
            if looks_like_fit_path(value):
                # read now: a recipe with a broken fit.json fails when it is loaded, not after curation
                try:
                    load_fit(value)
                except PlanError as error:
                    raise ValueError(str(error).removeprefix("fit: ")) from None
                return value
            raise ValueError(
                f"{value!r} is not one of {', '.join(FITS)}, nor a {FIT_FILE} path (tokenmill scaling fit)"
            )

        @field_validator("params", "tokens", "unique_tokens", "base_tokens", "min_tokens", "flops", mode="before")
        @classmethod
        def _counts(cls, value: Any) -> Any:
            if value is None:
                return None
            try:
                count = parse_count(value)
            except PlanError as error:
                raise ValueError(str(error).split(": ", 1)[-1]) from None
            if not count > 0:
                raise ValueError(f"must be a positive number, got {value!r}")
            return count

    return PlanOptions


PlanOptions = _options_model()


def plan_from_options(options: Any, origin: str | None = None) -> Plan:
    """Run ``plan()`` from ``PlanOptions`` (CLI flags or a YAML ``plan:`` section). Errors are PlanErrors that
    name the option, prefixed with ``origin`` (the YAML file) when given."""
    try:
        if options.model is not None and options.params is not None:
            raise PlanError("model/params: give one (--model counts the parameters from the shape)")
        model: Any = options.params
        info = manifest_info(options.manifest) if options.manifest else None
        unique = options.unique_tokens
        if info is not None:
            if unique is not None and abs(unique - info["unique_tokens"]) > 0.01 * unique:
                raise PlanError(
                    f"unique_tokens: given {human(unique)} but the manifest records {human(info['unique_tokens'])}"
                )
            unique = info["unique_tokens"]
        if options.model is not None:
            try:
                shape = load_shape(options.model)
            except ModelError as error:
                raise PlanError(f"model: {error}") from None
            vocab = options.vocab_size or (info or {}).get("vocab_size")
            model = replace(shape, vocab_size=vocab) if vocab else shape
        seq_len = options.seq_len or (model.max_position_embeddings if isinstance(model, ModelShape) else 2048)
        hardware = Hardware(
            gpu=options.gpu,
            gpus=options.gpus,
            mfu=options.mfu,
            price_per_gpu_hour=options.price,
            strategy=options.strategy,
            micro_batch=options.micro_batch,
            seq_len=seq_len,
            activation_checkpointing=options.activation_checkpointing,
            attention=options.attention,
            precision=options.precision,
            tp_size=options.tp_size,
        )
        return plan(
            model,
            Data(
                tokens=options.tokens,
                unique_tokens=unique,
                base_tokens=options.base_tokens,
                min_tokens=options.min_tokens,
            ),
            hardware,
            budget=Budget(flops=options.flops, gpu_hours=options.gpu_hours, money=options.money),
            convention=options.convention,
            fit=options.fit,
            tokens_per_param=options.tokens_per_param,
        )
    except PlanError as error:
        if origin:
            raise PlanError(f"{origin}: plan.{error}") from None
        raise


def complete_from_train(options: dict[str, Any], train: dict[str, Any] | None) -> dict[str, Any]:
    """``options`` (a ``plan:`` mapping) with the model, tokens and sequence length a recipe's ``train:`` section
    sets, where the plan leaves them out: one rule for ``tokenmill plan RECIPE`` and the pipeline flow's gate.

    Tokens are ``max_tokens``, else ``max_steps`` × ``global_batch_tokens``, as ``TrainConfig`` resolves them.
    """
    from training.config import TrainConfig

    if not train:
        return options
    options = dict(options)
    if options.get("model") is None and options.get("params") is None and train.get("model"):
        options["model"] = train["model"]
    if options.get("seq_len") is None and train.get("seq_len"):
        options["seq_len"] = train["seq_len"]
    if options.get("tokens") is None:
        try:  # shards/output are not read here; placeholders let the section validate on its own
            planned = TrainConfig.model_validate({"shards": "-", "output": "-", **train})
        except ValueError as error:  # pydantic's errors and TrainConfigError
            raise PlanError(f"train: section: {error}") from None
        if planned.max_tokens is not None:
            options["tokens"] = planned.max_tokens
        elif planned.max_steps is not None and planned.global_batch_tokens is not None:
            options["tokens"] = planned.max_steps * planned.global_batch_tokens
    return options


def load_plan_options(path: str | Path, overrides: dict[str, Any] | None = None) -> Any:
    """``PlanOptions`` from the top-level ``plan:`` mapping of a YAML file (a recipe or a plan file), completed
    from its ``train:`` section (``complete_from_train``) as the pipeline flow does.

    Relative ``model``/``manifest`` paths are taken from the file's folder when they exist there.
    ``overrides`` (CLI flags that were given) win over the file.
    """
    from pydantic import ValidationError

    from pipeline.config_base import read_yaml

    path = Path(path)
    data = read_yaml(path, PlanError)
    section = data.get("plan") if isinstance(data, dict) else None
    train = data.get("train") if isinstance(data, dict) else None
    if section is None and isinstance(train, dict):
        section = {}  # a recipe with only train: is planned from it
    if not isinstance(section, dict):
        raise PlanError(f"{path}: needs a top-level 'plan:' (or 'train:') mapping of plan options (docs/plan.md)")
    if isinstance(train, dict):
        section = complete_from_train(section, train)
    for key in ("model", "manifest", "fit"):
        value = section.get(key)
        if key == "fit" and value in FITS:
            continue  # a published fit's name, not a file
        if isinstance(value, str) and not Path(value).is_absolute() and (path.parent / value).exists():
            section[key] = str(path.parent / value)
    section.update(overrides or {})
    try:
        return PlanOptions.model_validate(section)
    except ValidationError as error:
        lines = [f"{path}: invalid plan section"]
        for item in error.errors():
            where = ".".join(str(p) for p in item["loc"])
            lines.append(f"  plan.{where}: {'unknown key' if item['type'] == 'extra_forbidden' else item['msg']}")
        raise PlanError("\n".join(lines)) from None


__all__ = [
    "FITS",
    "GPUS",
    "Budget",
    "Data",
    "Hardware",
    "Memory",
    "Plan",
    "PlanError",
    "PlanOptions",
    "ScalingFit",
    "check",
    "load_fit",
    "compute_optimal",
    "count_params",
    "estimate_memory",
    "flops_per_token",
    "korthikanti_bytes",
    "load_plan_options",
    "manifest_info",
    "parse_count",
    "plan",
    "plan_from_options",
]
