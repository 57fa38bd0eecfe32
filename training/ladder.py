"""A scaling ladder on the team's own shards: small Llama-style models, WSD trunks with cool-down branches,
held-out loss per (N, D) → ``runs.csv`` → the fit (``training/scaling.py``) → report and the plan it implies.

Method (docs/scaling.md):

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
* **Token counts from one run (MiniCPM's WSD branching, Hu et al. 2024; cool-down shape from Hägele et al.
  2024).** Per size, one *trunk*: warmup, then the peak learning rate held constant. For every token count
  D_k = tokens-per-param_k × N the trunk is checkpointed where D_k's schedule would start to decay
  (``training/schedule.py``'s WSD: the last 20 % of the steps after warmup), and a *branch* continues from
  that checkpoint with a 1-sqrt cool-down to 0 ending at D_k (``TrainConfig.branch_from``). A branch's loss
  is the held-out loss of a run trained with a full WSD schedule to D_k, at the cost of only its 20 %
  cool-down; a size costs D_max + 0.2·Σ_{k<max} D_k tokens instead of Σ D_k.
* **Loss.** The mean token loss on the shards' held-out split (every ``heldout/<source>`` window, up to
  ``eval_batches`` micro-batches per source), all sources pooled.

Resumable: the trunk resumes from its own checkpoints (``run_training``), a branch whose ``result.json``
exists is skipped, and ``runs.csv`` is rewritten from the finished branches after each one.
"""

from __future__ import annotations

import csv
import json
import math
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, field_validator

from pipeline.config_base import StrictModel
from pipeline.errors import TokenmillError

CPU_WIDTHS = (32, 48, 64)
GPU_WIDTHS = (128, 256, 384, 512, 640, 768)
CPU_TOKENS_PER_PARAM = (1.0, 2.0, 4.0)
GPU_TOKENS_PER_PARAM = (5.0, 10.0, 20.0, 40.0)
COOLDOWN = 0.2  # share of a branch's post-warmup steps spent cooling down (MiniCPM; Hägele et al. 2024)
WARMUP_SHARE = 0.01  # of the largest rung's steps …
WARMUP_MAX = 100  # … at most (and below the first branch point)
MAX_EPOCHS = 16.0  # training/plan/planner.py's blocking repetition limit (MAX_EPOCHS)
RUNS_CSV = "runs.csv"
RESULT = "result.json"
REPORT_MD = "ladder_report.md"
REPORT_JSON = "ladder_report.json"
CSV_COLUMNS = (
    "width",
    "layers",
    "tokens_per_param",
    "params",
    "non_embedding_params",
    "tokens",
    "steps",
    "batch_tokens",
    "lr",
    "loss",
    "flops",
)


class LadderError(TokenmillError, ValueError):
    """A ladder that cannot run as asked; the message names the option."""


class LadderConfig(StrictModel):
    """``tokenmill scaling ladder``: what to train and where (every field documented in docs/scaling.md)."""

    shards: str = Field(description="token shards folder with held-out splits (tokenize.heldout_share > 0)")
    output: str = Field(description="ladder folder: size-<width>/, runs.csv, fit.json, ladder_report.md")
    widths: list[int] = Field(default_factory=lambda: list(CPU_WIDTHS), min_length=1)
    tokens_per_param: list[float] = Field(default_factory=lambda: list(CPU_TOKENS_PER_PARAM), min_length=1)
    seq_len: int = Field(default=64, ge=8)
    micro_batch: int = Field(default=8, ge=1)
    lr: float | None = Field(default=None, gt=0, description="peak lr for every size (default: DeepSeek's rule)")
    batch_tokens: int | None = Field(default=None, ge=1, description="tokens per step (default: DeepSeek's rule)")
    eval_batches: int = Field(default=100, ge=1, description="held-out micro-batches per source per branch")
    seed: int = 1234
    cpu_threads: int | None = Field(default=1, ge=1)
    bootstrap: int = Field(default=200, ge=0, description="bootstrap resamples for the fit's intervals")
    force: bool = Field(default=False, description="train past the repetition limit and the budget check")

    @field_validator("widths")
    @classmethod
    def _widths(cls, value: list[int]) -> list[int]:
        for width in value:
            if width < 16 or width % 16:
                raise ValueError(f"width {width} must be a multiple of 16 and at least 16")
        if len(set(value)) != len(value):
            raise ValueError("widths repeat")
        return sorted(value)

    @field_validator("tokens_per_param")
    @classmethod
    def _ratios(cls, value: list[float]) -> list[float]:
        if any(not math.isfinite(r) or r <= 0 for r in value):
            raise ValueError("tokens per parameter must be positive numbers")
        if len(set(value)) != len(value):
            raise ValueError("tokens per parameter repeat")
        return sorted(value)


def parse_list(text: str, kind: type, name: str) -> list:
    """``"32,48,64"`` → [32, 48, 64]; a clear LadderError naming the option otherwise."""
    try:
        values = [kind(part) for part in text.replace(" ", "").split(",") if part]
    except ValueError:
        raise LadderError(f"{name}: {text!r} is not a comma-separated list of numbers") from None
    if not values:
        raise LadderError(f"{name}: empty list")
    return values


def read_ladder_file(path: str | Path) -> dict[str, Any]:
    """A ladder YAML (``configs/ladder/*.yaml``) as a mapping; errors name the file."""
    from pipeline.config_base import read_yaml

    data = read_yaml(Path(path), LadderError, "ladder config")
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise LadderError(f"{path}: expected a mapping of ladder settings, got {type(data).__name__}")
    return dict(data)


def load_ladder_config(values: dict[str, Any]) -> LadderConfig:
    try:
        return LadderConfig.model_validate({k: v for k, v in values.items() if v is not None})
    except ValidationError as error:
        lines = ["invalid ladder settings"]
        for item in error.errors():
            where = ".".join(str(p) for p in item["loc"]) or "(top level)"
            lines.append(f"  {where}: {'unknown key' if item['type'] == 'extra_forbidden' else item['msg']}")
        raise LadderError("\n".join(lines)) from None


# ------------------------------------------------------------------------------------------------ rules


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


@dataclass
class LadderPlan:
    config: LadderConfig
    rungs: list[Rung]
    unique_tokens: float
    notes: list[str]
    vocab_size: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "config": self.config.model_dump(mode="json"),
            "unique_tokens": self.unique_tokens,
            "vocab_size": self.vocab_size,
            "notes": self.notes,
            "rungs": [asdict(r) | {"total_tokens": r.total_tokens} for r in self.rungs],
        }


def cost_table(plan: LadderPlan, gpu: str = "H200", mfu: float = 0.4) -> str:
    """``--dry-run``: the ladder's runs and their cost by the plan, as markdown."""
    rows = ladder_cost(plan.rungs, plan.vocab_size, plan.config.seq_len, plan.config.micro_batch, gpu, mfu)
    lines = [
        f"| width | layers | params | non-embedding | lr | batch tokens | tokens trained | FLOPs | {gpu} hours |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for rung, row in zip(plan.rungs, rows, strict=True):
        lines.append(
            f"| {rung.width} | {rung.overrides['num_hidden_layers']} | {rung.params:,} | {rung.non_embedding_params:,} "
            f"| {rung.lr:.2e} | {rung.batch_tokens:,} | {row['tokens']:,} | {row['flops']:.3g} "
            f"| {row['gpu_hours']:.3f} |"
        )
    total = sum(r["gpu_hours"] for r in rows)
    separate = sum(r.batch_tokens * sum(b.steps for b in r.branches) for r in plan.rungs)
    trained = sum(r["tokens"] for r in rows)
    lines += [
        "",
        f"Total: {trained:,} tokens, {total:.2f} {gpu}-hours at {mfu:.0%} MFU (training.plan.planner.plan); "
        f"separate runs per token count would train {separate:,} tokens. Small models reach a lower MFU than large "
        "ones: budget 2-3× these hours.",
        *(f"- note: {note}" for note in plan.notes),
    ]
    return "\n".join(lines)


def _cooldown_start(steps: int, warmup: int) -> int:
    """Where ``Schedule(kind='wsd', decay_fraction=COOLDOWN)`` of ``steps`` steps begins to decay."""
    return steps - max(1, round(COOLDOWN * (steps - warmup)))


def rung_shape(width: int, vocab_size: int, seq_len: int):
    """The ``ModelShape`` of a rung (what the plan counts and prices)."""
    from training.models import shape_from_mapping

    data = {**ladder_shape(width), "vocab_size": vocab_size, "max_position_embeddings": seq_len}
    return shape_from_mapping(data, origin=f"ladder width {width}", name=f"ladder-{width}")


def make_rung(width: int, vocab_size: int, config: LadderConfig) -> Rung:
    """A rung's parameter counts, lr, batch, warmup and branch points (the rules in the module docstring)."""
    from training.models import count_params

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


def ladder_cost(
    rungs: list[Rung], vocab_size: int, seq_len: int, micro_batch: int, gpu: str = "H200", mfu: float = 0.4
) -> list[dict[str, Any]]:
    """What each rung costs by the project's own plan (``training.plan.planner.plan``: 6N + attention FLOPs per token
    at ``mfu`` of ``gpu``'s peak), for the tokens it trains (trunk + cool-downs)."""
    from training.plan.hardware import Data, Hardware
    from training.plan.planner import plan

    rows = []
    for rung in rungs:
        shape = rung_shape(rung.width, vocab_size, seq_len)
        hardware = Hardware(gpu=gpu, mfu=mfu, seq_len=seq_len, micro_batch=micro_batch)
        priced = plan(shape, Data(tokens=rung.total_tokens), hardware)
        rows.append(
            {
                "width": rung.width,
                "params": rung.params,
                "tokens": rung.total_tokens,
                "flops": priced.flops,
                "gpu_hours": priced.gpu_hours,
                "memory_gib": priced.memory.per_gpu_gib,
            }
        )
    return rows


def plan_ladder(config: LadderConfig) -> LadderPlan:
    """Sizes, learning rates, batches and branch points of the whole ladder, before anything trains."""
    from training.config import TrainConfig
    from training.modeling import architecture, shards_tokenizer

    tokenizer = shards_tokenizer(config.shards)
    manifest = tokenizer["manifest"]
    if not manifest.heldout_splits:
        raise LadderError(
            f"{config.shards}: the shards have no held-out split to measure the loss on "
            "(tokenize with heldout_share > 0)"
        )
    unique = float(manifest.train_tokens or 0)
    per_pass = config.seq_len * config.micro_batch
    if config.batch_tokens is not None and config.batch_tokens % per_pass:
        raise LadderError(
            f"batch_tokens: {config.batch_tokens:,} is not a multiple of seq_len × micro_batch = {per_pass:,}"
        )
    notes: list[str] = []
    rungs = []
    for width in config.widths:
        probe = TrainConfig(
            shards=config.shards,
            output=config.output,
            model="tiny",
            model_overrides=ladder_shape(width),
            seq_len=config.seq_len,
        )
        _arch, shape = architecture(probe, tokenizer)  # the vocabulary exactly as training rounds it
        rung = make_rung(width, shape.vocab_size, config)
        longest = rung.batch_tokens * max(b.steps for b in rung.branches)
        epochs = longest / unique if unique else math.inf
        if epochs > MAX_EPOCHS:
            notes.append(f"width {width}: {epochs:.1f} epochs of the shards, past the {MAX_EPOCHS:g}-epoch limit")
        if epochs > MAX_EPOCHS and not config.force:
            raise LadderError(
                f"width {width}: {longest:,} tokens are {epochs:.1f} epochs of the shards' "
                f"{unique:,.0f} training tokens (more than {MAX_EPOCHS:g}); use smaller widths or tokens per "
                "parameter, more data, or --force"
            )
        if 4 < epochs <= MAX_EPOCHS:
            notes.append(
                f"width {width}: its longest branch repeats the data {epochs:.1f} times: the law then describes "
                "repeated data (Muennighoff et al. 2023: beyond ~4 epochs repetition is worth less)"
            )
        rungs.append(rung)
    return LadderPlan(config, rungs, unique, notes, shape.vocab_size)


# --------------------------------------------------------------------------------------------- training


def _train_config(plan: LadderPlan, rung: Rung, output: Path, **changes: Any):
    from training.config import TrainConfig

    cfg = plan.config
    values = {
        "shards": cfg.shards,
        "output": str(output),
        "model": "tiny",
        "model_overrides": rung.overrides,
        "seq_len": cfg.seq_len,
        "micro_batch": cfg.micro_batch,
        "global_batch_tokens": rung.batch_tokens,
        "lr": rung.lr,
        "min_lr": 0.0,
        "warmup_steps": rung.warmup,
        "schedule": "wsd",
        "decay_fraction": COOLDOWN,
        "eval_every": 0,
        "eval_batches": 0,
        "ckpt_every": 0,
        "keep_last": len(rung.branches) + 1,
        "log_every": 10,
        "tensorboard": False,
        "seed": cfg.seed,
        "cpu_threads": cfg.cpu_threads,
        "force": cfg.force,
    }
    values.update(changes)
    return TrainConfig.model_validate(values)


def trunk_dir(plan: LadderPlan, rung: Rung) -> Path:
    return Path(plan.config.output) / rung.name / "trunk"


def branch_dir(plan: LadderPlan, rung: Rung, branch: Branch) -> Path:
    return Path(plan.config.output) / rung.name / branch.name


def read_result(plan: LadderPlan, rung: Rung, branch: Branch) -> dict[str, Any] | None:
    path = branch_dir(plan, rung, branch) / RESULT
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def train_trunk(plan: LadderPlan, rung: Rung, upto: int) -> Path:
    """Train (or resume) the rung's trunk to step ``upto`` and return that step's checkpoint folder.

    The trunk's schedule is the longest branch's WSD schedule (``decay_steps`` = its steps): constant at the
    peak from warmup to every branch point, so stopping there and continuing later is one uninterrupted run.
    """
    from training.checkpoint import step_dir
    from training.train import run_training

    longest = max(b.steps for b in rung.branches)
    output = trunk_dir(plan, rung)
    folder = step_dir(output, upto)
    if not (folder / "trainer_state.json").is_file():
        run_training(_train_config(plan, rung, output, max_steps=upto, decay_steps=longest))
    if not folder.is_dir():
        raise LadderError(f"{output}: no checkpoint at step {upto} after training (was it pruned?)")
    return folder


def train_branch(plan: LadderPlan, rung: Rung, branch: Branch) -> dict[str, Any]:
    """Cool down from the trunk's checkpoint to ``branch.steps``; record its held-out loss (``result.json``)."""
    from training.train import run_training

    done = read_result(plan, rung, branch)
    if done is not None:
        return done
    start = train_trunk(plan, rung, branch.start)
    output = branch_dir(plan, rung, branch)
    summary = run_training(
        _train_config(
            plan,
            rung,
            output,
            max_steps=branch.steps,
            decay_steps=branch.steps,
            branch_from=str(start),
            eval_batches=plan.config.eval_batches,
            keep_last=1,
        )
    )
    if summary["status"] != "completed":
        raise LadderError(f"{output}: training {summary['status']}; rerun the ladder to continue")
    evals = summary.get("eval") or {}
    pooled = evals.get("all") or next(iter(evals.values()), None)
    if pooled is None:
        raise LadderError(f"{output}: no held-out loss was measured (held-out splits shorter than one window?)")
    tokens = branch.steps * rung.batch_tokens
    result = {
        "width": rung.width,
        "layers": rung.overrides["num_hidden_layers"],
        "tokens_per_param": branch.tokens_per_param,
        "params": rung.params,
        "non_embedding_params": rung.non_embedding_params,
        "tokens": tokens,
        "steps": branch.steps,
        "batch_tokens": rung.batch_tokens,
        "lr": rung.lr,
        "loss": pooled["loss"],
        "flops": 6 * rung.params * tokens,
        "heldout": {k: v["loss"] for k, v in evals.items()},
        "heldout_tokens": pooled["tokens"],
        "branch_from": str(start),
    }
    # the final export is only needed for its held-out loss; checkpoints stay for a resumed cool-down
    shutil.rmtree(output / "final", ignore_errors=True)
    (output / RESULT).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    shutil.rmtree(output / "checkpoints", ignore_errors=True)  # result.json marks it done: no resume needed
    write_runs_csv(plan)
    return result


def write_runs_csv(plan: LadderPlan) -> Path:
    """``runs.csv`` from every finished branch (in ladder order); the fit's input."""
    path = Path(plan.config.output) / RUNS_CSV
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        for rung in plan.rungs:
            for branch in rung.branches:
                result = read_result(plan, rung, branch)
                if result is not None:
                    writer.writerow(result)
    return path


# ------------------------------------------------------------------------------------------ fit, report


def finish_ladder(plan: LadderPlan, plan_options: Any = None) -> dict[str, Any]:
    """Fit the law to ``runs.csv``, write fit.json/fit.png and the report; return the report's JSON.

    ``plan_options``: the team's ``PlanOptions`` (budget, GPU, model or tokens); the report plans with the
    fitted law in their place (``plan: {fit: <ladder>/fit.json}``). None: only the frontier is reported.
    """
    from training.scaling import fit_runs, read_runs, write_fit

    out = Path(plan.config.output)
    csv_path = write_runs_csv(plan)
    runs = read_runs(csv_path)
    result = fit_runs(runs, bootstrap=plan.config.bootstrap, seed=plan.config.seed)
    paths = write_fit(result, runs, out)
    implied, budget, plan_error = _implied_plan(paths["json"], plan_options)
    frontier = _frontier(result.law(), budget or result.compute_range[-1])
    report = {
        "ladder": plan.to_dict(),
        "runs": [r for rung in plan.rungs for b in rung.branches if (r := read_result(plan, rung, b))],
        "fit": result.to_dict(),
        "fit_uses": "params (every parameter, embedding included)",
        "budget_flops": budget,
        "frontier": frontier,
        "plan": implied.to_dict() if implied is not None else None,
        "plan_error": plan_error,
        "files": {"runs_csv": str(csv_path), "fit_json": str(paths["json"]), "fit_png": str(paths["png"])},
    }
    (out / REPORT_JSON).write_text(json.dumps(report, indent=2, default=str) + "\n", encoding="utf-8")
    (out / REPORT_MD).write_text(render_report(report), encoding="utf-8")
    report["files"]["report_md"] = str(out / REPORT_MD)
    return report


def _implied_plan(fit_json: Path, plan_options: Any) -> tuple[Any, float | None, str | None]:
    if plan_options is None:
        return None, None, None
    from training.plan.options import plan_from_options
    from training.plan.units import PlanError

    options = plan_options.model_copy(update={"fit": str(fit_json)})
    try:
        implied = plan_from_options(options)
    except PlanError as error:
        return None, None, str(error)
    except (ZeroDivisionError, OverflowError) as error:
        return None, None, f"the fitted law gives no usable optimum ({error})"
    return implied, implied.budget_flops or implied.flops, None


def _frontier(law: Any, budget: float) -> list[dict[str, float]]:
    """The fitted law's compute-optimal N*, D* and loss at the team's budget and a decade either side."""
    rows = []
    for factor in (0.01, 0.1, 1.0, 10.0, 100.0):
        flops = budget * factor
        try:  # a poorly determined law can put N* outside the float range
            n, d = law.optimal(flops)
            row = {"flops": flops, "params": n, "tokens": d, "tokens_per_param": d / n, "loss": law.loss(n, d)}
        except (ValueError, ZeroDivisionError, OverflowError):
            continue
        rows.append(row)
    return rows


def _wide(ci: dict[str, list[float]] | None) -> bool:
    if not ci:
        return False
    return any(low > 0 and high / low > 10 for name, (low, high) in ci.items() if name in ("alpha", "beta", "E"))


def render_report(report: dict[str, Any]) -> str:
    fit, ladder = report["fit"], report["ladder"]

    def ci(name: str) -> str:
        low_high = (fit.get("ci") or {}).get(name)
        return f" [{low_high[0]:.3g}, {low_high[1]:.3g}]" if low_high else ""

    lines = [
        f"# Scaling ladder: {Path(ladder['config']['output']).name}",
        "",
        f"{len(report['runs'])} runs on `{ladder['config']['shards']}` ({ladder['unique_tokens']:,.0f} training "
        "tokens), held-out loss per (N, D). The fit uses **params** (every parameter, embedding included); "
        "`non_embedding_params` is recorded beside it.",
        "",
        "| width | layers | params | non-embedding | tokens | tokens/param | batch | lr | held-out loss |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in report["runs"]:
        lines.append(
            f"| {r['width']} | {r['layers']} | {r['params']:,} | {r['non_embedding_params']:,} | {r['tokens']:,} | "
            f"{r['tokens'] / r['params']:.2f} | {r['batch_tokens']:,} | {r['lr']:.2e} | {r['loss']:.4f} |"
        )
    lines += [
        "",
        "## Fitted law",
        "",
        f"L(N, D) = {fit['E']:.3f}{ci('E')} + {fit['A']:.4g}{ci('A')} / N^{fit['alpha']:.3f}{ci('alpha')} "
        f"+ {fit['B']:.4g}{ci('B')} / D^{fit['beta']:.3f}{ci('beta')}  ({fit['n_points']} points, "
        f"RMSE of log loss {fit['rmse_log']:.4f}; 95 % bootstrap intervals in brackets)",
        "",
        f"Fitted over C = {fit['compute_range'][0]:.3g} … {fit['compute_range'][1]:.3g} FLOPs; beyond that the law "
        "extrapolates.",
    ]
    if fit["alpha"] > 2 or fit["beta"] > 2 or _wide(fit.get("ci")):
        lines.append(
            "- caution: the law is poorly determined by these runs (an exponent above 2, or an interval spanning "
            "more than a factor of 10): its frontier and plan below are not to be trusted; add sizes or token "
            "counts, or larger ones (docs/scaling.md)"
        )
    for note in fit.get("notes", []) + ladder.get("notes", []):
        lines.append(f"- note: {note}")
    if report.get("budget_flops"):
        lines += ["", f"## Compute-optimal frontier around the team's budget ({report['budget_flops']:.3g} FLOPs)"]
    else:
        why = "the team's plan could not be made" if report.get("plan_error") else "no team budget given"
        lines += ["", f"## Compute-optimal frontier (around the ladder's largest run; {why})"]
    lines += ["", "| FLOPs | N* | D* | tokens/param | predicted loss |", "|---:|---:|---:|---:|---:|"]
    if not report["frontier"]:
        lines.append("| — | — | — | — | the law has no usable optimum here |")
    for row in report["frontier"]:
        lines.append(
            f"| {row['flops']:.3g} | {row['params']:.3g} | {row['tokens']:.3g} | {row['tokens_per_param']:.1f} | "
            f"{row['loss']:.3f} |"
        )
    plan = report.get("plan")
    if plan is not None:
        lines += [
            "",
            "## The plan it implies",
            "",
            f"{plan['law_used']}: {plan['params']:,.0f} parameters, {plan['tokens']:,.0f} tokens "
            f"({plan['tokens_per_param']:.1f}/param), {plan['flops']:.3g} FLOPs, {plan['gpu_hours']:,.1f} GPU-hours "
            f"on {plan['gpus']} × {plan['gpu']['name']}; predicted loss {plan['predicted_loss']:.3f}.",
        ]
        lines += [f"- {v}" for v in plan.get("verdicts", [])]
        lines += [f"- {n}" for n in plan.get("notes", [])]
    elif report.get("plan_error"):
        lines += ["", f"The plan could not be made: {report['plan_error']}"]
    lines += ["", "![fit](fit.png)", ""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- driver


def prepare_output(plan: LadderPlan) -> Path:
    """Create the ladder folder and record the plan in ``ladder.json``; refuse a folder planned otherwise
    (its trunks were trained under other sizes, batches or schedules and cannot be continued)."""
    out = Path(plan.config.output)
    record = out / "ladder.json"
    planned = plan.to_dict()
    if record.is_file():
        try:
            before = json.loads(record.read_text(encoding="utf-8"))
        except ValueError:
            before = None
        if before is not None and before.get("rungs") != json.loads(json.dumps(planned["rungs"])):
            raise LadderError(
                f"{out}: holds a ladder planned with other settings (sizes, ratios, batch or lr; see "
                f"{record}); its trunks cannot be continued: use a new --output"
            )
    out.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps(planned, indent=2) + "\n", encoding="utf-8")
    return record


def run_ladder(
    config: LadderConfig, plan_options: Any = None, say: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """Plan, train every trunk and branch (skipping finished ones), fit and report; return the report's JSON."""
    say = say or (lambda _message: None)
    plan = plan_ladder(config)
    prepare_output(plan)
    for rung in plan.rungs:
        say(
            f"{rung.name}: {rung.params:,} params ({rung.non_embedding_params:,} non-embedding), lr {rung.lr:.2e}, "
            f"{rung.batch_tokens:,} tokens/step, branches at steps {[b.start for b in rung.branches]}"
        )
        for branch in rung.branches:
            result = train_branch(plan, rung, branch)
            say(f"  {branch.name}: {result['tokens']:,} tokens, held-out loss {result['loss']:.4f}")
    return finish_ladder(plan, plan_options)
