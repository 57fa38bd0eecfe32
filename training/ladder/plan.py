"""The whole ladder before anything trains: every rung, the data's repetition limit, the cost by the project's
plan (``--dry-run``), and the ladder folder's layout (``ladder.json``, ``size-<w>/trunk``, ``size-<w>/tpp-<r>/``,
each finished branch's ``result.json`` and ``runs.csv``)."""

from __future__ import annotations

import csv
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pipeline.ownership import claim
from training.config import TrainConfig
from training.ladder.config import LadderConfig, LadderError
from training.ladder.sizes import Branch, Rung, ladder_shape, make_rung, rung_shape
from training.modeling import architecture, shards_tokenizer
from training.plan.hardware import Data, Hardware
from training.plan.planner import plan as price

MAX_EPOCHS = 16.0  # training/plan/planner.py's blocking repetition limit (MAX_EPOCHS)
RUNS_CSV = "runs.csv"
RESULT = "result.json"
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


def ladder_cost(
    rungs: list[Rung], vocab_size: int, seq_len: int, micro_batch: int, gpu: str = "H200", mfu: float = 0.4
) -> list[dict[str, Any]]:
    """What each rung costs by the project's own plan (``training.plan.planner.plan``: 6N + attention FLOPs per token
    at ``mfu`` of ``gpu``'s peak), for the tokens it trains (trunk + cool-downs)."""
    rows = []
    for rung in rungs:
        shape = rung_shape(rung.width, vocab_size, seq_len)
        hardware = Hardware(gpu=gpu, mfu=mfu, seq_len=seq_len, micro_batch=micro_batch)
        priced = price(shape, Data(tokens=rung.total_tokens), hardware)
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
    tokenizer = shards_tokenizer(config.shards)
    manifest = tokenizer.manifest
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


def prepare_output(plan: LadderPlan) -> Path:
    """Create the ladder folder and record the plan in ``ladder.json``; refuse a folder planned otherwise
    (its trunks were trained under other sizes, batches or schedules and cannot be continued)."""
    out = Path(plan.config.output)
    claim(out, "ladder")  # a folder tokenmill did not create is refused before anything is written
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


def trunk_dir(plan: LadderPlan, rung: Rung) -> Path:
    return Path(plan.config.output) / rung.name / "trunk"


def branch_dir(plan: LadderPlan, rung: Rung, branch: Branch) -> Path:
    return Path(plan.config.output) / rung.name / branch.name


@dataclass(frozen=True)
class BranchResult:
    """One finished branch (``train_branch``): its ``result.json`` as written (``raw``: width, layers, params,
    tokens, steps, lr, loss, flops, held-out losses, the trunk it branched from, task accuracies) and the fields
    the ladder reads. Kept as JSON, as ``ShardManifest`` keeps its manifest: a result.json an older ladder wrote
    reads back as it is."""

    raw: dict[str, Any]

    @property
    def loss(self) -> float:
        """The pooled held-out loss after the cool-down."""
        return self.raw["loss"]

    @property
    def tokens(self) -> int:
        """Training tokens up to the branch's end."""
        return self.raw["tokens"]

    def to_dict(self) -> dict[str, Any]:
        return self.raw


def read_result(plan: LadderPlan, rung: Rung, branch: Branch) -> dict[str, Any] | None:
    path = branch_dir(plan, rung, branch) / RESULT
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


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
