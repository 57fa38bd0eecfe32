"""Training the ladder: per rung one WSD *trunk* (warmup, then the peak learning rate held), checkpointed at every
branch point, and per token count a *branch* that cools down from there to D_k with a 1-sqrt shape; its held-out
loss is that of a run trained with a full WSD schedule to D_k, at the cost of its 20 % cool-down only (a size
costs D_max + 0.2·Σ_{k<max} D_k tokens instead of Σ D_k). Loss: the mean token loss on the shards' held-out
split (every ``heldout/<source>`` window, up to ``eval_batches`` micro-batches per source), all sources pooled.

Resumable: the trunk resumes from its own checkpoints (``run_training``), a branch whose ``result.json`` exists
is skipped, and ``runs.csv`` is rewritten from the finished branches after each one. Progress and the whole
ladder's ETA: training/progress.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipeline.lock import hold
from pipeline.ownership import record_of, remove_owned
from training.checkpoint import step_dir
from training.config import TrainConfig
from training.evals.run import evaluate_model
from training.ladder.config import LadderConfig, LadderError
from training.ladder.plan import (
    RESULT,
    BranchResult,
    LadderPlan,
    branch_dir,
    plan_ladder,
    prepare_output,
    read_result,
    trunk_dir,
    write_runs_csv,
)
from training.ladder.report import LadderReport, finish_ladder
from training.ladder.sizes import COOLDOWN, Branch, Rung
from training.progress import JobProgress
from training.train import run_training


def _train_config(plan: LadderPlan, rung: Rung, output: Path, **changes: Any):
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


def train_trunk(plan: LadderPlan, rung: Rung, upto: int, on_step: Any = None) -> Path:
    """Train (or resume) the rung's trunk to step ``upto`` and return that step's checkpoint folder.

    The trunk's schedule is the longest branch's WSD schedule (``decay_steps`` = its steps): constant at the
    peak from warmup to every branch point, so stopping there and continuing later is one uninterrupted run.
    """
    longest = max(b.steps for b in rung.branches)
    output = trunk_dir(plan, rung)
    folder = step_dir(output, upto)
    if not (folder / "trainer_state.json").is_file():
        run_training(_train_config(plan, rung, output, max_steps=upto, decay_steps=longest), on_step=on_step)
    if not folder.is_dir():
        raise LadderError(f"{output}: no checkpoint at step {upto} after training (was it pruned?)")
    return folder


def train_branch(plan: LadderPlan, rung: Rung, branch: Branch, on_step: Any = None) -> BranchResult:
    """Cool down from the trunk's checkpoint to ``branch.steps``; record its held-out loss (``result.json``)."""
    done = read_result(plan, rung, branch)
    if done is not None:
        return BranchResult(done)
    start = train_trunk(plan, rung, branch.start, on_step)
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
        ),
        on_step=on_step,
    )
    if summary.status != "completed":
        raise LadderError(f"{output}: training {summary.status}; rerun the ladder to continue")
    evals = summary.eval or {}
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
    if plan.config.tasks and summary.final:
        tasks = evaluate_model(summary.final, plan.config.tasks)
        result["tasks"] = {name: t.accuracy for name, t in tasks.tasks.items()}
    # the final export is only needed for its held-out loss (and tasks); checkpoints stay for a resumed cool-down
    record = record_of(output)
    remove_owned(output / "final", record)
    (output / RESULT).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    remove_owned(output / "checkpoints", record)  # result.json marks it done: no resume needed
    write_runs_csv(plan)
    return BranchResult(result)


def branch_steps(rung: Rung, branch: Branch) -> int:
    """Steps a branch trains when the ladder reaches it: the trunk from the previous branch point to its own,
    then its cool-down (the ETA's unit of work)."""
    previous = max([0, *(b.start for b in rung.branches if b.start < branch.start)])
    return branch.steps - previous


#: trains one branch (or reads its result.json), given the step callback: ``train_branch`` itself from the CLI,
#: the same call as a Prefect task from the flow (flows/scaling_flow.py)
BranchTrainer = Callable[[LadderPlan, Rung, Branch, Any], BranchResult]


def run_ladder(
    config: LadderConfig,
    plan_options: Any = None,
    say: Callable[[str], None] | None = None,
    train: BranchTrainer = train_branch,
) -> LadderReport:
    """Plan, train every trunk and branch (skipping finished ones), fit and report; return the report. The CLI
    and the Prefect flow both run this; the flow's ``train`` runs each branch as a task."""
    say = say or (lambda _message: None)
    with hold(config.output, "ladder"):  # a second ladder (or any command) on this folder is refused at once
        return _run_ladder(plan_ladder(config), plan_options, say, train)


def _run_ladder(plan: LadderPlan, plan_options: Any, say: Callable[[str], None], train: BranchTrainer) -> LadderReport:
    prepare_output(plan)
    branches = [(rung, branch) for rung in plan.rungs for branch in rung.branches]
    progress = JobProgress(
        say,
        "ladder",
        [branch_steps(rung, branch) for rung, branch in branches],
        done_before=sum(read_result(plan, rung, branch) is not None for rung, branch in branches),
    )
    for rung in plan.rungs:
        say(
            f"{rung.name}: {rung.params:,} params ({rung.non_embedding_params:,} non-embedding), lr {rung.lr:.2e}, "
            f"{rung.batch_tokens:,} tokens/step, branches at steps {[b.start for b in rung.branches]}"
        )
        for branch in rung.branches:
            if read_result(plan, rung, branch) is None:
                progress.start_run(f"{rung.name} {branch.name}", branch_steps(rung, branch))
                result = train(plan, rung, branch, progress.on_step)
                progress.end_run()
            else:
                result = train(plan, rung, branch, None)
            say(f"  {branch.name}: {result.tokens:,} tokens, held-out loss {result.loss:.4f}")
    say("ladder: fitting the law and checking it on the largest rung")
    return finish_ladder(plan, plan_options)
