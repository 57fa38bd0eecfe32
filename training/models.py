"""Model shapes and exact parameter counts: preset name, model YAML, HF ``config.json`` or model folder.

A shape is what the budget needs to know about a decoder: widths, depths, heads, vocabulary, tying.
Presets live in ``configs/models/*.yaml`` as ``transformers.LlamaConfig`` keyword arguments, so the
training stage builds ``LlamaConfig(**yaml)`` from the same file the plan counted.

Why count by hand instead of instantiating the model: instantiating needs torch (this module must import
without it) and allocates every weight (28 GB in fp32 for a 7B model). The count below follows the
Llama module layout exactly (q/k/v/o projections with grouped-query heads, gate/up/down SwiGLU MLP, two
RMSNorms per layer, final norm, embeddings tied or not); ``tests/training/test_budget.py`` checks it against
``LlamaForCausalLM`` parameter by parameter. Architectures whose layout differs (mixture of experts,
parallel blocks, LayerNorm with biases, ...) are refused with a clear error instead of a wrong number.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pipeline.errors import TokenmillError

PRESET_DIR = Path(__file__).resolve().parents[1] / "configs" / "models"

# HF ``model_type`` values whose decoder has the Llama layout; the flags say where they add biases or norms.
# mistral: same layout (sliding window only changes attention masking); qwen2: biases on q/k/v;
# qwen3: RMSNorm on q and k per head (q_norm/k_norm).
_HF_LAYOUTS: dict[str, dict[str, bool]] = {
    "llama": {},
    "mistral": {},
    "qwen2": {"qkv_bias": True},
    "qwen3": {"qk_norm": True},
}

# LlamaConfig keys that do not change the parameter count; accepted in a model YAML and ignored here.
_UNCOUNTED_KEYS = {
    "hidden_act",
    "initializer_range",
    "use_cache",
    "pad_token_id",
    "bos_token_id",
    "eos_token_id",
    "pretraining_tp",
    "rope_scaling",
    "rope_parameters",
    "attention_dropout",
    "torch_dtype",
    "dtype",
    "architectures",
    "model_type",
    "transformers_version",
    "max_position_embeddings",
    "rope_theta",
    "rms_norm_eps",
}
COUNTED_KEYS = {
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "vocab_size",
    "tie_word_embeddings",
    "head_dim",
    "attention_bias",
    "mlp_bias",
}
# keys in HF configs that mean "not a dense Llama block" — counting them as Llama would be wrong
_MOE_KEYS = ("num_local_experts", "num_experts", "n_routed_experts", "moe_intermediate_size")


class ModelError(TokenmillError, ValueError):
    """A model spec that cannot be turned into a countable shape; the message names the file and field."""


@dataclass(frozen=True)
class ModelShape:
    """A Llama-style decoder's shape. ``head_dim`` defaults to hidden_size / num_heads."""

    hidden_size: int
    intermediate_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    vocab_size: int
    tie_embeddings: bool = False
    head_dim: int | None = None
    attention_bias: bool = False  # bias on q, k, v and o (LlamaConfig.attention_bias)
    qkv_bias: bool = False  # bias on q, k, v only (Qwen2)
    mlp_bias: bool = False
    qk_norm: bool = False  # per-head RMSNorm on q and k (Qwen3)
    max_position_embeddings: int = 2048
    name: str = "custom"
    source: str = ""

    def __post_init__(self) -> None:
        where = f"{self.source}: " if self.source else ""
        for field_name in ("hidden_size", "intermediate_size", "num_layers", "num_heads", "num_kv_heads", "vocab_size"):
            value = getattr(self, field_name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ModelError(f"{where}{field_name} must be a positive integer, got {value!r}")
        if self.head_dim is not None and (not isinstance(self.head_dim, int) or self.head_dim <= 0):
            raise ModelError(f"{where}head_dim must be a positive integer, got {self.head_dim!r}")
        if self.num_heads % self.num_kv_heads:
            raise ModelError(
                f"{where}num_attention_heads ({self.num_heads}) must be a multiple of "
                f"num_key_value_heads ({self.num_kv_heads})"
            )
        if self.head_dim is None and self.hidden_size % self.num_heads:
            raise ModelError(
                f"{where}hidden_size ({self.hidden_size}) is not divisible by num_attention_heads ({self.num_heads}); "
                "give head_dim"
            )

    @property
    def dim_per_head(self) -> int:
        return self.head_dim or self.hidden_size // self.num_heads

    @property
    def q_width(self) -> int:
        """Width of all query heads together (H·Q in PaLM's FLOPs formula)."""
        return self.num_heads * self.dim_per_head

    @property
    def kv_width(self) -> int:
        return self.num_kv_heads * self.dim_per_head

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ParamCount:
    """Exact parameter counts. ``non_embedding`` leaves out the token embedding and an untied output head
    (Kaplan et al.'s N); ``total`` is what ``model.parameters()`` holds."""

    total: int
    embedding: int
    non_embedding: int
    per_layer: int

    def __int__(self) -> int:
        return self.total


def count_params(shape: ModelShape) -> ParamCount:
    """Exact number of parameters of a Llama-layout decoder with this shape."""
    h, q, kv = shape.hidden_size, shape.q_width, shape.kv_width
    attention = h * q + 2 * h * kv + q * h
    if shape.attention_bias:
        attention += q + 2 * kv + h
    elif shape.qkv_bias:
        attention += q + 2 * kv
    if shape.qk_norm:
        attention += 2 * shape.dim_per_head
    mlp = 3 * h * shape.intermediate_size + (2 * shape.intermediate_size + h if shape.mlp_bias else 0)
    per_layer = attention + mlp + 2 * h  # two RMSNorm weights
    embedding = shape.vocab_size * h * (1 if shape.tie_embeddings else 2)
    total = shape.num_layers * per_layer + h + embedding  # + final norm
    return ParamCount(total=total, embedding=embedding, non_embedding=total - embedding, per_layer=per_layer)


def preset_names() -> list[str]:
    return sorted(p.stem for p in PRESET_DIR.glob("*.yaml"))


def _read_mapping(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ModelError(f"{path}: cannot read: {error}") from None
    try:
        if path.suffix == ".json":
            data = json.loads(text)
        else:
            import yaml

            data = yaml.safe_load(text)
    except Exception as error:  # noqa: BLE001 - json.JSONDecodeError or yaml.YAMLError (which is no ValueError)
        kind = "JSON" if path.suffix == ".json" else "YAML"
        raise ModelError(f"{path}: not valid {kind}: {error}") from None
    if not isinstance(data, dict):
        raise ModelError(f"{path}: expected a mapping of model settings, got {type(data).__name__}")
    return data


def llama_kwargs(spec: str | Path) -> dict[str, Any]:
    """The ``LlamaConfig`` keyword arguments of a preset name or model YAML (what the training stage builds)."""
    path = _resolve_path(spec)
    if path.suffix == ".json" or path.is_dir():
        raise ModelError(f"{path}: an HF config is loaded with transformers, not as LlamaConfig keyword arguments")
    data = _read_mapping(path)
    shape_from_mapping(data, origin=str(path))  # validates
    return data


def _resolve_path(spec: str | Path) -> Path:
    text = str(spec)
    path = Path(text).expanduser()
    if path.exists():
        return path
    preset = PRESET_DIR / f"{text}.yaml"
    if preset.is_file():
        return preset
    raise ModelError(
        f"model {text!r}: not a preset ({', '.join(preset_names())}) and no such file or folder "
        "(give a preset name, a model YAML, an HF config.json or a local model folder)"
    )


def load_shape(spec: str | Path | Mapping[str, Any] | ModelShape) -> ModelShape:
    """A shape from a preset name, a model YAML, an HF ``config.json``, a model folder or a mapping."""
    if isinstance(spec, ModelShape):
        return spec
    if isinstance(spec, Mapping):
        return shape_from_mapping(dict(spec), origin="<model>")
    path = _resolve_path(spec)
    name = path.stem
    if path.is_dir():
        config = path / "config.json"
        if not config.is_file():
            raise ModelError(f"{path}: a model folder must contain config.json")
        path, name = config, path.name
    data = _read_mapping(path)
    if path.parent == PRESET_DIR:
        name = path.stem
    return shape_from_mapping(data, origin=str(path), name=name)


def shape_from_mapping(data: dict[str, Any], origin: str = "<model>", name: str = "custom") -> ModelShape:
    """A shape from LlamaConfig keyword arguments or an HF config.json mapping.

    An HF config names its ``model_type``; only the types in ``_HF_LAYOUTS`` are counted. A mapping without
    ``model_type`` (a tokenmill model YAML) must hold LlamaConfig keys only: a typo is an error, not a default.
    """
    model_type = data.get("model_type")
    flags: dict[str, bool] = {}
    if model_type is not None:
        if model_type not in _HF_LAYOUTS:
            raise ModelError(
                f"{origin}: model_type {model_type!r} is not an architecture tokenmill can count exactly "
                f"(supported: {', '.join(sorted(_HF_LAYOUTS))}); give --params instead"
            )
        moe = [key for key in _MOE_KEYS if data.get(key)]
        if moe:
            raise ModelError(
                f"{origin}: a mixture-of-experts config ({', '.join(moe)}) cannot be counted as a dense decoder; "
                "give --params instead"
            )
        flags = _HF_LAYOUTS[model_type]
    else:
        unknown = sorted(set(data) - COUNTED_KEYS - _UNCOUNTED_KEYS)
        if unknown:
            raise ModelError(f"{origin}: unknown key(s) {', '.join(unknown)} (LlamaConfig keyword arguments expected)")
    missing = [
        k for k in ("hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads") if k not in data
    ]
    if "vocab_size" not in data:
        missing.append("vocab_size")
    if missing:
        raise ModelError(f"{origin}: missing {', '.join(missing)}")

    def integer(key: str, default: Any = None) -> Any:
        value = data.get(key, default)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
            raise ModelError(f"{origin}: {key} must be a positive integer, got {value!r}")
        return value

    heads = integer("num_attention_heads")
    return ModelShape(
        hidden_size=integer("hidden_size"),
        intermediate_size=integer("intermediate_size"),
        num_layers=integer("num_hidden_layers"),
        num_heads=heads,
        num_kv_heads=integer("num_key_value_heads") or heads,
        vocab_size=integer("vocab_size"),
        tie_embeddings=bool(data.get("tie_word_embeddings", False)),
        head_dim=integer("head_dim"),
        attention_bias=bool(data.get("attention_bias", False)) and not flags.get("qkv_bias", False),
        qkv_bias=flags.get("qkv_bias", False),
        mlp_bias=bool(data.get("mlp_bias", False)),
        qk_norm=flags.get("qk_norm", False),
        max_position_embeddings=integer("max_position_embeddings", 2048),
        name=name,
        source=origin,
    )
