"""The plan's options: one flat model (``PlanOptions``) for the CLI flags and a YAML ``plan:`` section, the
shard manifest's figures the plan reads, and ``plan_from_options`` / ``load_plan_options``."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, field_validator

from pipeline.config_base import StrictModel, field_errors, read_yaml
from training.config import TrainConfig
from training.models import ModelError, ModelShape, load_shape
from training.plan.hardware import DEFAULT_MFU, Attention, Budget, Data, Hardware, Precision, Strategy
from training.plan.laws import FIT_FILE, FITS, TOKENS_PER_PARAM, Convention, load_fit, looks_like_fit_path
from training.plan.planner import Plan, plan
from training.units import PlanError, count_field, human


class PlanOptions(StrictModel):
    """The flat option set shared by the CLI flags and a YAML ``plan:`` section."""

    # the command-line help of `tokenmill plan` is these descriptions (flows.model_options)
    model: str | None = Field(
        default=None,
        description="preset (tiny, 20m, 125m, 350m, 1b, 3b, 7b), model YAML, HF config.json or model folder",
    )
    params: float | None = Field(default=None, description="parameter count instead of a model, e.g. 175B")
    tokens: float | None = Field(
        default=None, description="training tokens (continued tokens with base_tokens), e.g. 300B"
    )
    unique_tokens: float | None = Field(default=None, description="unique tokens available")
    base_tokens: float | None = Field(
        default=None, description="base model's pre-training tokens (domain-adaptive mode)"
    )
    min_tokens: float | None = Field(default=None, description="fewer planned tokens is a blocking problem")
    manifest: str | None = Field(default=None, description="shard manifest.json (or its folder): unique tokens, vocab")
    vocab_size: int | None = Field(default=None, description="override the model's vocab (the tokenizer's)")
    gpu: str = Field(default="H100-SXM", description="GPU type; unknown names list the known ones")
    gpus: int = Field(default=1, description="number of GPUs")
    mfu: float = Field(default=DEFAULT_MFU, description="model FLOPs utilisation in (0, 1]")
    price: float | None = Field(default=None, description="price per GPU-hour, for cost and a money budget")
    flops: float | None = Field(default=None, description="budget in FLOPs, e.g. 3e23")
    gpu_hours: float | None = Field(default=None, description="budget in GPU-hours on the gpu at the mfu")
    money: float | None = Field(default=None, description="budget in money (needs a price)")
    seq_len: int | None = Field(
        default=None, description="sequence length (default: the model's max positions, or 2048)"
    )
    micro_batch: int = Field(default=1, description="sequences per GPU per forward pass")
    strategy: Strategy = Field(default="ddp", description="ddp, zero1, zero2, zero3 or fsdp")
    activation_checkpointing: bool = Field(default=False, description="full activation recompute")
    attention: Attention = Field(default="sdpa", description="sdpa (default; stores no s×s scores) or eager")
    precision: Precision = Field(
        default="amp",
        description="amp (fp32 weights + bf16 autocast, default) or bf16 "
        "(bf16 weights, fp32 master: Megatron/DeepSpeed)",
    )
    tp_size: int = 1
    convention: Convention = Field(default="palm", description="FLOPs/token: palm (6N+12LHQT, default), causal, 6n")
    fit: str = Field(
        default="epoch",
        description="scaling law: epoch (default) or hoffmann (published, reported beside the 20 tokens/param rule), "
        "or a fit.json from `tokenmill scaling fit` (your law then sets the optimum, loss and verdicts)",
    )
    tokens_per_param: float = Field(default=TOKENS_PER_PARAM, description="compute-optimal rule")

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
        raise ValueError(f"{value!r} is not one of {', '.join(FITS)}, nor a {FIT_FILE} path (tokenmill scaling fit)")

    @field_validator("params", "tokens", "unique_tokens", "base_tokens", "min_tokens", "flops", mode="before")
    @classmethod
    def _counts(cls, value: Any) -> Any:
        return count_field(value)


@dataclass(frozen=True)
class ManifestInfo:
    """What the plan reads from a shard manifest (``manifest_info``)."""

    unique_tokens: float  # unique training tokens (``ShardManifest.unique_tokens``), > 0
    vocab_size: int | None  # the tokenizer's vocabulary, when the manifest records it


def manifest_info(path: str | Path) -> ManifestInfo:
    """Unique training tokens (and the tokenizer's vocab size) the plan reads from a shard ``manifest.json`` (or
    its folder), through ``ShardManifest``; PlanErrors name the manifest."""
    # deferred: pipeline.shards.format loads numpy (0.1-0.3 CPU-s), which `tokenmill --help` would pay for the
    # PlanOptions its flags are generated from (flows.model_options)
    from pipeline.shards.format import ShardError, ShardManifest

    try:
        manifest = ShardManifest.read(path)
    except ShardError as error:
        raise PlanError(f"manifest: {error}") from None
    unique = manifest.unique_tokens
    if unique is None or unique <= 0:
        raise PlanError(
            f"manifest: {manifest.path}: no token counts found (expected sources.<name>.tokens.train, or unique_tokens)"
        )
    return ManifestInfo(unique_tokens=unique, vocab_size=manifest.vocab_size)


def plan_from_options(options: PlanOptions, origin: str | None = None, shape: ModelShape | None = None) -> Plan:
    """Run ``plan()`` from ``PlanOptions`` (CLI flags or a YAML ``plan:`` section). Errors are PlanErrors that
    name the option, prefixed with ``origin`` (the YAML file) when given.

    ``shape``: the exact architecture to plan (the training gate's, with the vocabulary the run builds) instead
    of the options' ``model``/``params``.
    """
    try:
        if options.model is not None and options.params is not None:
            raise PlanError("model/params: give one (--model counts the parameters from the shape)")
        info = manifest_info(options.manifest) if options.manifest else None
        unique = _unique_tokens(options, info)
        model = shape if shape is not None else _model_of(options, info)
        seq_len = options.seq_len or (model.max_position_embeddings if isinstance(model, ModelShape) else 2048)
        hardware = hardware_of(options, seq_len)
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


def hardware_of(options: PlanOptions, seq_len: int) -> Hardware:
    """The ``Hardware`` the options describe."""
    return Hardware(
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


def _unique_tokens(options: PlanOptions, info: ManifestInfo | None) -> float | None:
    unique = options.unique_tokens
    if info is None:
        return unique
    if unique is not None and abs(unique - info.unique_tokens) > 0.01 * unique:
        raise PlanError(f"unique_tokens: given {human(unique)} but the manifest records {human(info.unique_tokens)}")
    return info.unique_tokens


def _model_of(options: PlanOptions, info: ManifestInfo | None) -> Any:
    """The shape (with the manifest's vocabulary) or the parameter count the options plan."""
    if options.model is None:
        return options.params
    try:
        shape = load_shape(options.model)
    except ModelError as error:
        raise PlanError(f"model: {error}") from None
    vocab = options.vocab_size or (info.vocab_size if info is not None else None)
    return replace(shape, vocab_size=vocab) if vocab else shape


def complete_from_train(options: dict[str, Any], train: dict[str, Any] | None) -> dict[str, Any]:
    """``options`` (a ``plan:`` mapping) with the model, tokens and sequence length a recipe's ``train:`` section
    sets, where the plan leaves them out: one rule for ``tokenmill plan RECIPE`` and the pipeline flow's gate.

    Tokens are ``max_tokens``, else ``max_steps`` × ``global_batch_tokens``, as ``TrainConfig`` resolves them.
    """
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


def load_plan_options(path: str | Path, overrides: dict[str, Any] | None = None) -> PlanOptions:
    """``PlanOptions`` from the top-level ``plan:`` mapping of a YAML file (a recipe or a plan file), completed
    from its ``train:`` section (``complete_from_train``) as the pipeline flow does.

    Relative ``model``/``manifest`` paths are taken from the file's folder when they exist there.
    ``overrides`` (CLI flags that were given) win over the file.
    """
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
        lines = [f"{path}: invalid plan section", *(f"  plan.{line}" for line in field_errors(error))]
        raise PlanError("\n".join(lines)) from None
