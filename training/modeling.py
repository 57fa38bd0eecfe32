"""The model a run trains: a Llama-style decoder from a preset (from scratch) or a local HF model (adaptation).

From scratch: ``LlamaConfig(**preset)`` (``configs/models/*.yaml``, the same file the budget counted) with the
vocabulary of the shards' tokenizer (rounded up to ``vocab_multiple`` so the output matmul tiles evenly),
``max_position_embeddings`` = the sequence length, EOS from the manifest, and SDPA attention (no s×s scores
kept, flash kernels on GPU).

From a base model (``init_from``): the shards must have been tokenized with the base model's own tokenizer.
The check is byte-exact: the manifest records the sha256 of the ``tokenizer.json`` the shards were encoded
with, and the base model folder must hold a ``tokenizer.json`` with the same hash. Anything else (another
tokenizer that happens to have the same size, a missing file) is refused with the fix — shards encoded with
another tokenizer would train the base model on ids that mean other words.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.errors import TokenmillError
from pipeline.fingerprint import sha256_file
from pipeline.shards.format import ShardManifest
from training.models import COUNTED_KEYS, ModelError, llama_kwargs, load_shape

if TYPE_CHECKING:
    import torch

    from training.config import TrainConfig
    from training.models import ModelShape

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")
TRAIN_INFO = "tokenmill_train.json"  # written beside an exported model: resolved config, final metrics


class ModelSetupError(TokenmillError, ValueError):
    """A model that cannot be built or continued from; the message names the folder/field and the fix."""


def round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


@dataclass(frozen=True)
class ShardsTokenizer:
    """The tokenizer a run's shards were encoded with: the manifest's entry, where its files lie, and the checked
    ``ShardManifest`` itself."""

    manifest: ShardManifest
    folder: Path
    vocab_size: int
    sha256: str
    eos_id: int | None


def shards_tokenizer(shards: str | Path) -> ShardsTokenizer:
    """The tokenizer of ``shards`` from its checked manifest; refused without a recorded vocab_size and sha256."""
    manifest = ShardManifest.load(shards)
    info = dict(manifest.tokenizer)
    if "vocab_size" not in info or "sha256" not in info:
        raise ModelSetupError(f"{Path(shards) / 'manifest.json'}: no tokenizer vocab_size/sha256 recorded")
    folder = Path(shards) / Path(info.get("path", "tokenizer/tokenizer.json")).parent
    eos = None if info.get("eos_id") is None else int(info["eos_id"])
    return ShardsTokenizer(manifest, folder, int(info["vocab_size"]), str(info["sha256"]), eos)


def resolve_init_from(spec: str) -> Path:
    """A local model folder, or a hub id resolved through the local Hugging Face cache / the network."""
    path = Path(spec).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ModelSetupError(f"init_from: {path} has no config.json (not a Hugging Face model folder)")
        return path
    if re.fullmatch(r"[\w][\w.-]*/[\w][\w.-]*", spec):
        try:
            from huggingface_hub import snapshot_download

            return Path(snapshot_download(spec))
        except Exception as error:  # noqa: BLE001 - offline, unknown or gated repo: all mean "not available"
            raise ModelSetupError(
                f"init_from: {spec!r} is not a local folder and the hub copy is not available here "
                f"({type(error).__name__}); download it where the network allows and give the folder"
            ) from None
    raise ModelSetupError(f"init_from: {spec} does not exist (give a local Hugging Face model folder)")


def check_tokenizer(model_dir: Path, tokenizer: ShardsTokenizer, shards: str | Path) -> None:
    """Refuse shards that were not encoded with the base model's tokenizer (sha256 of tokenizer.json)."""
    file = model_dir / "tokenizer.json"
    fix = f"re-tokenize with `tokenmill tokenize --tokenizer {model_dir}` and train on those shards"
    if not file.is_file():
        raise ModelSetupError(
            f"init_from: {model_dir} has no tokenizer.json, so the shards' tokenizer cannot be checked; "
            f"add the base model's tokenizer files, or {fix}"
        )
    digest = sha256_file(file)
    if digest != tokenizer.sha256:
        raise ModelSetupError(
            f"shards {shards} were tokenized with another tokenizer than the base model {model_dir} "
            f"(manifest tokenizer sha256 {tokenizer.sha256[:12]}…, vocab {tokenizer.vocab_size:,}; base model "
            f"{digest[:12]}…): the ids would mean other words to it; {fix}"
        )


def base_peak_lr(model_dir: Path) -> float | None:
    """The peak learning rate a tokenmill-trained base model was trained at (from its tokenmill_train.json)."""
    info = model_dir / TRAIN_INFO
    try:
        return float(json.loads(info.read_text(encoding="utf-8"))["config"]["lr"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def model_seq_len(config: TrainConfig) -> int:
    """The max positions of the configured model before any change (the default sequence length)."""
    hf = _hf_config_dict(config)
    return int(hf.get("max_position_embeddings") or 2048)


def model_num_layers(config: TrainConfig) -> int:
    """Decoder layers of the configured model (FP8 keeps the first and last in bf16)."""
    hf = _hf_config_dict(config)
    return int(hf.get("num_hidden_layers") or hf.get("n_layer") or 0)


def _hf_config_dict(config: TrainConfig) -> dict[str, Any]:
    """The architecture as a dict: preset/YAML → LlamaConfig kwargs; folder/config.json → its config.json."""
    spec = config.model or (config.init_from if config.init_from else "tiny")
    path = Path(spec).expanduser()
    if config.init_from and spec == config.init_from:
        path = resolve_init_from(config.init_from)
    try:
        if path.is_dir() or path.suffix == ".json":
            file = path / "config.json" if path.is_dir() else path
            data = json.loads(file.read_text(encoding="utf-8"))
        else:
            data = dict(llama_kwargs(spec))
    except ModelError as error:
        raise ModelSetupError(f"model: {error}") from None
    except (OSError, ValueError) as error:
        raise ModelSetupError(f"model: {spec}: cannot read config.json: {error}") from None
    return {**data, **config.model_overrides}


def architecture(config: TrainConfig, tokenizer: ShardsTokenizer) -> tuple[dict[str, Any], ModelShape]:
    """The final config dict (vocab, positions, EOS set) and its shape, without building any weights.

    Used by the gate (plan) before anything is allocated, and by ``build_model``.
    """
    assert config.seq_len is not None, "resolve the config first"
    data = _hf_config_dict(config)
    if config.init_from:
        if int(data.get("vocab_size", 0)) < tokenizer.vocab_size:
            raise ModelSetupError(
                f"init_from: the base model has {data.get('vocab_size')} embeddings, the shards' tokenizer "
                f"{tokenizer.vocab_size} ids"
            )
        positions = int(data.get("max_position_embeddings") or 0)
        if positions and config.seq_len > positions:
            raise ModelSetupError(
                f"seq_len: {config.seq_len} is longer than the base model's max_position_embeddings ({positions})"
            )
    else:
        data["vocab_size"] = round_up(tokenizer.vocab_size, config.vocab_multiple)
        data["max_position_embeddings"] = config.seq_len
        data["eos_token_id"] = tokenizer.eos_id
        data["bos_token_id"] = None
        data.setdefault("attention_dropout", 0.0)
    try:
        shape = load_shape(data if "model_type" in data else {k: v for k, v in data.items() if k in _SHAPE_KEYS})
    except ModelError as error:
        raise ModelSetupError(f"model: {error}") from None
    spec = str(config.model or config.init_from or "tiny")
    return data, replace(shape, name=Path(spec).name.removesuffix(".yaml"), source=spec)


# the keys that decide the parameter count (training.models) plus the context length the model is built for
_SHAPE_KEYS = COUNTED_KEYS | {"max_position_embeddings"}


def build_model(config: TrainConfig, tokenizer: ShardsTokenizer, shards: str | Path) -> torch.nn.Module:
    """A fp32 model on the CPU (accelerate moves it), seeded; from scratch or the ``init_from`` weights."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, LlamaConfig

    data, _shape = architecture(config, tokenizer)
    if config.liger:
        _apply_liger(data)
    if config.init_from:
        folder = resolve_init_from(config.init_from)
        check_tokenizer(folder, tokenizer, shards)
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, attn_implementation="sdpa")
    else:
        if "model_type" in data:
            kind = data.pop("model_type")
            hf_config = AutoConfig.for_model(kind, **{k: v for k, v in data.items() if k != "architectures"})
        else:
            hf_config = LlamaConfig(**data)
        hf_config._attn_implementation = "sdpa"
        torch.manual_seed(config.seed)
        model = AutoModelForCausalLM.from_config(hf_config, dtype=torch.float32, attn_implementation="sdpa")
    model.config.use_cache = False  # no KV cache while training (it would only cost memory)
    if config.activation_checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    return model


def _apply_liger(data: dict[str, Any]) -> None:
    kind = data.get("model_type", "llama")
    try:
        import liger_kernel.transformers as liger
    except ImportError:
        raise ModelSetupError("liger: liger-kernel is not installed (pip install liger-kernel; GPU only)") from None
    apply = getattr(liger, f"apply_liger_kernel_to_{kind}", None)
    if apply is None:
        raise ModelSetupError(f"liger: no Liger kernels for model_type {kind!r}")
    apply(rope=True, rms_norm=True, swiglu=True, cross_entropy=False, fused_linear_cross_entropy=True)


def copy_tokenizer(tokenizer: ShardsTokenizer, target: Path) -> None:
    """Copy the shards' tokenizer files as they are, so the exported model's tokenizer.json keeps the hash
    the manifest recorded (``save_pretrained`` would re-serialise it and break the ``init_from`` check)."""
    target.mkdir(parents=True, exist_ok=True)
    for name in TOKENIZER_FILES:
        source = tokenizer.folder / name
        if source.is_file():
            shutil.copyfile(source, target / name)
