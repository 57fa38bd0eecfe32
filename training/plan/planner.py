"""The plan: model × tokens × hardware → FLOPs, compute-optimal N/D, memory, time and verdicts; ``check()``
lists what blocks training.

Pure Python (no torch): the CLI, the Prefect flows and the training gate (training/plan/gate.py) all call
``plan()`` and ``check()``. Each memory/budget rule is written once, in ``RULES``, with both its wordings: the
verdict line of the plan and the blocking problem of the gate.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from training.gpus import GIB
from training.models import ModelError, ModelShape, count_params, load_shape
from training.plan.hardware import Budget, Data, Hardware
from training.plan.laws import (
    FITTED_LOSS_CAVEAT,
    HOFFMANN_WARNING,
    LOSS_CAVEAT,
    TOKENS_PER_PARAM,
    Convention,
    ScalingFit,
    flops_per_token,
    get_fit,
    optimal_by_rule,
)
from training.plan.memory import HEADROOM_SHARE, Memory, cheapest_fit, estimate_memory
from training.units import PlanError, human, per_param, require_positive

OPTIMAL_BAND = 1.5  # compute-optimal when tokens/param lies within [20/1.5, 20·1.5]
USEFUL_EPOCHS = 4.0  # Muennighoff et al. 2023: up to ~4 epochs repeated data is almost as good as fresh
REPEAT_NOISE = 0.05  # 5 % more or fewer tokens than planned is rounding in a token count, not a data verdict
MAX_EPOCHS = 16.0  # … and beyond ~16 more compute buys (almost) nothing: check() blocks
PF_DAY = 1e15 * 86400
REPLAY_SHARE = (0.05, 0.25)  # Ibrahim et al. 2024: 5 % replay for a mild shift, up to 25 % for a strong one

ADAPTATION_LADDER = (
    "Adaptation ladder, cheapest first: prompting (with retrieval) → fine-tuning on task data → continued "
    "pre-training of a base model on domain text → pre-training from scratch. Climb only when the rung below "
    "fails on held-out domain data."
)


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
    hardware: Hardware = field(repr=False)
    law_used: str = ""  # which law set the optimum and the verdicts: the rule, or the team's fitted law
    notes: list[str] = field(default_factory=list)
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
        require_positive("params", model)
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
    data = data if isinstance(data, Data) else Data() if data is None else Data(tokens=data)
    if isinstance(hardware, str):
        hardware = Hardware(gpu=hardware)
    hardware = hardware or Hardware()
    budget = budget or Budget()
    fit_model = get_fit(fit)
    require_positive("tokens_per_param", tokens_per_param)
    if convention not in ("palm", "causal", "6n"):
        raise PlanError(f"convention: {convention!r} is not one of palm, causal, 6n")
    shape, params = _resolve_model(model)
    return _plan_for(shape, params, data, hardware, budget, fit_model, convention, tokens_per_param)


def _plan_for(
    shape: ModelShape | None,
    params: float | None,
    data: Data,
    hardware: Hardware,
    budget: Budget,
    fit_model: ScalingFit,
    convention: Convention,
    tokens_per_param: float,
) -> Plan:
    """``plan`` once its inputs are resolved and checked: size the run, place it against the optimum, judge it."""
    budget_flops = budget.to_flops(hardware)
    notes: list[str] = []
    warnings: list[str] = [HOFFMANN_WARNING] if fit_model.name == "hoffmann" else []
    law = _Law(fit_model, tokens_per_param)

    params, tokens, fpt = _size(shape, params, data, hardware, budget_flops, law, convention, notes)
    flops = fpt * tokens
    reference_c = budget_flops if budget_flops is not None else 6 * params * tokens  # Chinchilla's C = 6ND
    n_rule, d_rule = optimal_by_rule(reference_c, tokens_per_param)
    n_fit, d_fit = fit_model.optimal(reference_c)
    # the optimum the verdicts measure against: the fitted law's when the team fitted one, else the rule's
    n_opt, d_opt, tpp_opt = (n_fit, d_fit, d_fit / n_fit) if law.fitted else (n_rule, d_rule, tokens_per_param)
    memory = _memory(params, shape, hardware, notes)
    domain, verdicts, data_section = _verdicts(data, params, tokens, (n_opt, d_opt, tpp_opt), fit_model)
    warnings += _extrapolation_warnings(fit_model, reference_c) if law.fitted else []
    notes.append(FITTED_LOSS_CAVEAT if law.fitted else LOSS_CAVEAT)
    counts = count_params(shape) if shape is not None else None
    result = Plan(
        model=_model_info(shape),
        params=params,
        non_embedding_params=float(counts.non_embedding) if counts else params,
        tokens=tokens,
        flops_per_token=fpt,
        convention=convention,
        flops=flops,
        pf_days=flops / PF_DAY,
        tokens_per_param=tokens / params,
        verdicts=verdicts,
        warnings=warnings,
        optimal=_rule_optimum(fit_model, n_rule, d_rule, tokens_per_param, reference_c),
        optimal_fit=_optimal_fit(fit_model, n_fit, d_fit, n_rule, d_rule, tokens_per_param),
        law_used=law.name,
        predicted_loss=fit_model.loss(params, tokens),
        memory=memory,
        **_gpu_time_and_cost(flops, hardware),
        budget_flops=budget_flops,
        data=data_section | {"min_tokens": data.min_tokens},
        domain=domain,
        notes=notes,
        hardware=hardware,
        shape=shape,
    )
    result.verdicts.extend(r.verdict(result) for r in VERDICT_RULES if r.verdict and r.fires(result, Limits()))
    return result


def _size(
    shape: ModelShape | None,
    params: float | None,
    data: Data,
    hardware: Hardware,
    budget_flops: float | None,
    law: _Law,
    convention: Convention,
    notes: list[str],
) -> tuple[float, float, float]:
    """Parameters, tokens and FLOPs per token of the run: those given, the rest derived (no model: the
    compute-optimal size for the budget or the tokens; no tokens: the budget's, else compute-optimal)."""
    tokens = data.tokens
    if params is None:
        params, tokens = _derive_size(tokens, budget_flops, law, notes)
    fpt = flops_per_token(params, shape, hardware.seq_len, convention)
    if shape is None:
        notes.append("no model shape: FLOPs/token = 6N (attention term left out), activations not estimated")
    if tokens is None:
        tokens = _derive_tokens(params, fpt, budget_flops, data, law, notes)
    return params, tokens, fpt


def _rule_optimum(
    fit_model: ScalingFit, n_rule: float, d_rule: float, tokens_per_param: float, reference_c: float
) -> dict[str, Any]:
    """``Plan.optimal``: the tokens-per-parameter rule's compute-optimal size and tokens at ``reference_c``."""
    return dict(
        params=n_rule,
        tokens=d_rule,
        method=f"{tokens_per_param:g} tokens/param",
        tokens_per_param=tokens_per_param,
        flops=reference_c,
        loss=fit_model.loss(n_rule, d_rule),  # the fit's loss at the rule's optimum (what the verdict compares)
    )


def _gpu_time_and_cost(flops: float, hardware: Hardware) -> dict[str, Any]:
    """The ``Plan`` fields of the hardware: the GPU, how many, the MFU, GPU- and wall-clock hours, the cost."""
    gpu = hardware.device
    gpu_hours = flops / (gpu.peak_flops * hardware.mfu) / 3600
    return {
        "gpu": {"name": gpu.name, "bf16_tflops": gpu.bf16_tflops, "memory_gib": gpu.memory_gib},
        "gpus": hardware.gpus,
        "mfu": hardware.mfu,
        "gpu_hours": gpu_hours,
        "wall_hours": gpu_hours / hardware.gpus,
        "cost": gpu_hours * hardware.price_per_gpu_hour if hardware.price_per_gpu_hour else None,
    }


def _verdicts(
    data: Data, params: float, tokens: float, optimum: tuple[float, float, float], fit: ScalingFit
) -> tuple[dict[str, Any] | None, list[str], dict[str, Any]]:
    """The domain section (continued pre-training), the training and data verdicts, and the data section."""
    n_opt, d_opt, tpp_opt = optimum
    domain = _domain_section(params, tokens, data.base_tokens) if data.base_tokens is not None else None
    if domain is not None:
        verdicts = [domain["verdict"]]
    else:
        verdicts = [_training_verdict(tokens / params, params, tokens, n_opt, d_opt, tpp_opt, fit)]
    # continued pre-training starts from a trained model: the from-scratch optimum says nothing about its data
    data_section = _data_section(tokens, data.unique_tokens, None if domain else d_opt, params, tpp_opt)
    verdicts.extend(data_section.pop("verdicts"))
    return domain, verdicts, data_section


def _memory(params: float, shape: ModelShape | None, hardware: Hardware, notes: list[str]) -> Memory:
    """The memory estimate with its cheapest fix, and the notes on what it assumes."""
    memory = estimate_memory(params, shape, hardware)
    memory.suggestion = cheapest_fit(params, shape, hardware)
    if memory.fits and memory.per_gpu_bytes > memory.usable_bytes * HEADROOM_SHARE:
        memory.tight = True
        memory.suggestion = cheapest_fit(params, shape, hardware, share=HEADROOM_SHARE)
    if hardware.activation_checkpointing:
        notes.append(
            "activation checkpointing runs each forward twice (~8N instead of 6N FLOPs per token): give the MFU "
            "measured with it, or expect ~25 % lower MFU and longer time than a plan at the same MFU without it"
        )
    if not memory.activations_estimated:
        notes.append("memory: optimizer/weight/gradient states only (no shape for activations)")
    return memory


@dataclass(frozen=True)
class _Law:
    """The law that sets the optimum: the team's fitted one when there is one (a published fit is only
    reported beside the tokens/param rule)."""

    fit: ScalingFit
    tokens_per_param: float

    @property
    def fitted(self) -> bool:
        return self.fit.fitted

    @property
    def name(self) -> str:
        return f"fitted law ({self.fit.source})" if self.fitted else f"{self.tokens_per_param:g} tokens/param rule"


def _derive_size(
    tokens: float | None, budget_flops: float | None, law: _Law, notes: list[str]
) -> tuple[float, float | None]:
    """The model size when none is given: compute-optimal for the budget or the tokens (a note says which)."""
    if budget_flops is not None and tokens is None:
        if law.fitted:
            params, tokens = law.fit.optimal(budget_flops)
        else:
            params, tokens = optimal_by_rule(budget_flops, law.tokens_per_param)
        notes.append(f"model size chosen compute-optimal for the budget ({law.name})")
        return params, tokens
    if tokens is not None and budget_flops is not None:
        notes.append("model size chosen so that the budget trains it on the planned tokens (C = 6ND)")
        return budget_flops / (6 * tokens), tokens
    if tokens is not None:
        notes.append(f"model size chosen compute-optimal for the planned tokens ({law.name})")
        return (law.fit.params_for(tokens) if law.fitted else tokens / law.tokens_per_param), tokens
    raise PlanError("nothing to plan: give a model (--model/--params), tokens, or a budget")


def _derive_tokens(
    params: float, fpt: float, budget_flops: float | None, data: Data, law: _Law, notes: list[str]
) -> float:
    """The tokens when none are given: what the budget buys, else compute-optimal for the model."""
    if budget_flops is not None:
        notes.append("tokens: what the budget buys for this model")
        return budget_flops / fpt
    if data.base_tokens is not None:
        raise PlanError("tokens: domain-adaptive mode (base_tokens) needs the continued-training tokens")
    if law.fitted:
        notes.append(f"tokens not given: planned compute-optimal by the {law.name}")
        return law.fit.tokens_for(params)
    notes.append(f"tokens not given: planned compute-optimal ({law.tokens_per_param:g} per parameter)")
    return law.tokens_per_param * params


def _model_info(shape: ModelShape | None) -> dict[str, Any]:
    info: dict[str, Any] = {"name": shape.name if shape else None, "source": shape.source if shape else None}
    if shape is not None:
        info["shape"] = {k: v for k, v in shape.to_dict().items() if k not in ("name", "source")}
    return info


def _optimal_fit(
    fit: ScalingFit, n_fit: float, d_fit: float, n_rule: float, d_rule: float, tokens_per_param: float
) -> dict[str, Any]:
    """The fit's compute-optimal point, and how far it lies from the tokens/param rule's."""
    return {
        "fit": fit.name,
        "source": fit.source,
        "params": n_fit,
        "tokens": d_fit,
        "loss": fit.loss(n_fit, d_fit),
        "path": fit.path,
        "law": fit.constants(),
        "tokens_per_param": d_fit / n_fit,
        "vs_chinchilla": {
            "method": f"{tokens_per_param:g} tokens/param",
            "params_ratio": n_fit / n_rule,
            "tokens_ratio": d_fit / d_rule,
            "tokens_per_param_ratio": (d_fit / n_fit) / tokens_per_param,
        },
    }


def _extrapolation_warnings(fit: ScalingFit, reference_c: float) -> list[str]:
    span = fit.compute_range
    if span is None or span[0] / 1.01 <= reference_c <= span[1] * 1.01:
        return []
    factor = reference_c / span[1] if reference_c > span[1] else span[0] / reference_c
    return [
        f"extrapolation: the plan's compute {reference_c:.3g} FLOPs lies {factor:,.3g}× outside the runs the "
        f"law was fitted on ({span[0]:.3g}–{span[1]:.3g} FLOPs); its optimum and loss there are a forecast"
    ]


def _training_verdict(
    ratio: float, params: float, tokens: float, n_opt: float, d_opt: float, tpp: float, fit: ScalingFit
) -> str:
    low, high = tpp / OPTIMAL_BAND, tpp * OPTIMAL_BAND
    planned, best = fit.loss(params, tokens), fit.loss(n_opt, d_opt)
    if ratio < low and planned - best <= fit.loss_resolution * best:
        return (
            f"near compute-optimal: {per_param(ratio)} tokens/param (compute-optimal ≈ {tpp:.3g}), but the {fit.name} "
            f"fit predicts {planned:.3f} against {best:.3f} for a {human(n_opt)} model on {human(d_opt)} tokens — a "
            f"difference within the fit's uncertainty (±{fit.loss_resolution:.1%} of the loss)"
        )
    if ratio < low:
        return (
            f"under-trained: {per_param(ratio)} tokens/param (compute-optimal ≈ {tpp:.3g}); the same compute trains a "
            f"{human(n_opt)} model on {human(d_opt)} tokens to a lower loss "
            f"({fit.name} fit: {best:.3f} vs {planned:.3f})"
        )
    if ratio <= high:
        return f"compute-optimal: {per_param(ratio)} tokens/param (within {low:.1f}–{high:.0f} around {tpp:.3g})"
    return (
        f"over-trained: {ratio:,.0f} tokens/param, past compute-optimal ({tpp:.3g}); a smaller model trained longer "
        "costs more to train but less to serve — inference-optimal when serving volume is large"
    )


def _data_section(
    tokens: float, unique: float | None, d_opt: float | None, params: float, tpp: float
) -> dict[str, Any]:
    """Unique tokens against what the plan reads; ``d_opt`` None (continued pre-training): only against the
    planned tokens, since a from-scratch optimum is no target for a model that is already trained."""
    section: dict[str, Any] = {"unique_tokens": unique, "epochs": None, "data_limited": False, "verdicts": []}
    if unique is None:
        return section
    epochs = tokens / unique
    section["epochs"] = epochs
    needed = tokens if d_opt is None else max(tokens, d_opt)
    if unique * (1 + REPEAT_NOISE) < needed:
        section["data_limited"] = True
        if d_opt is None or tokens >= d_opt:
            why = f"the plan trains on {human(tokens)}"
        else:
            why = f"a compute-optimal model for this compute trains on {human(d_opt)}"
        scale = "" if d_opt is None else f" ({human(tpp * params)} for {human(params)} parameters at {tpp:.3g}/param)"
        section["verdicts"].append(f"data-limited: {human(unique)} unique tokens, but {why}{scale}")
    if epochs > 1 + REPEAT_NOISE:
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


# ---------------------------------------------------------------------------------------------- the rules


@dataclass(frozen=True)
class Limits:
    """What the gate measures a plan against beyond the plan itself (``check``'s arguments)."""

    min_tokens: float | None = None
    max_epochs: float = MAX_EPOCHS


@dataclass(frozen=True)
class Rule:
    """One memory/budget rule, written once: when it fires, the plan's verdict line (None: it only blocks) and
    the blocking problem the gate lists."""

    name: str
    fires: Callable[[Plan, Limits], bool]
    problem: Callable[[Plan, Limits], str]
    verdict: Callable[[Plan], str] | None = None


def _min_tokens(plan: Plan, limits: Limits) -> float | None:
    return limits.min_tokens if limits.min_tokens is not None else plan.data.get("min_tokens")


def _over_budget(plan: Plan, _limits: Limits) -> bool:
    return plan.budget_flops is not None and plan.flops > plan.budget_flops * 1.01


NO_FIT = Rule(
    "memory",
    fires=lambda plan, _limits: not plan.memory.fits,
    problem=lambda plan, _limits: (
        f"does not fit in GPU memory: {plan.memory.per_gpu_gib:.1f} GiB per GPU needed, "
        f"{plan.memory.usable_bytes / GIB:.1f} GiB usable on {plan.gpu['name']}; "
        f"cheapest fix: {plan.memory.suggestion}"
    ),
    verdict=lambda plan: (
        f"does not fit: {plan.memory.per_gpu_gib:.1f} GiB per GPU > {plan.memory.usable_bytes / GIB:.1f} GiB usable "
        f"on {plan.gpu['name']}; cheapest fix: {plan.memory.suggestion}"
    ),
)
TOO_FEW_TOKENS = Rule(
    "min_tokens",
    fires=lambda plan, limits: (floor := _min_tokens(plan, limits)) is not None and plan.tokens < floor,
    problem=lambda plan, limits: (
        f"fewer tokens than the recipe minimum: {human(plan.tokens)} < {human(_min_tokens(plan, limits) or 0)}"
    ),
)
TOO_MANY_EPOCHS = Rule(
    "epochs",
    fires=lambda plan, limits: (epochs := plan.data.get("epochs")) is not None and epochs > limits.max_epochs,
    problem=lambda plan, limits: (
        f"{plan.data['epochs']:.1f} epochs over {human(plan.data['unique_tokens'])} unique tokens (more than "
        f"{limits.max_epochs:g}: further repetition buys almost nothing)"
    ),
)
OVER_BUDGET = Rule(
    "budget",
    fires=_over_budget,
    problem=lambda plan, _limits: f"over budget: {plan.flops:.3g} FLOPs planned, {plan.budget_flops:.3g} available",
    verdict=lambda plan: f"over budget: the plan needs {plan.flops:.3g} FLOPs, the budget is {plan.budget_flops:.3g}",
)

RULES = (NO_FIT, TOO_FEW_TOKENS, TOO_MANY_EPOCHS, OVER_BUDGET)  # the order the gate lists problems in
VERDICT_RULES = (OVER_BUDGET, NO_FIT)  # the order the plan's verdicts list them in


def check(plan: Plan, min_tokens: float | None = None, max_epochs: float = MAX_EPOCHS) -> list[str]:
    """Blocking problems the training stage refuses to start on (unless forced). Empty when all is well."""
    limits = Limits(min_tokens, max_epochs)
    return [rule.problem(plan, limits) for rule in RULES if rule.fires(plan, limits)]
