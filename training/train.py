"""The training loop: accelerate + transformers, in nanoGPT's order of things, gated by the budget check.

``run_training(config)`` runs in-process (CPU tests, the demo) and under ``accelerate launch`` (one process
per GPU; ``python -m training.train CONFIG``). One optimizer step:

    lr = schedule(step)                        a pure function of the step (training/schedule.py)
    for each of the accumulation micro-batches on this GPU:
        x, y = next windows of this rank        training/data.py: seeded global order, sharded by rank
        loss = model(x, labels=y) / accumulation   (bf16 autocast on GPU; gradient sync only on the last)
        backward
    clip the global grad norm, fused AdamW step

around it: evaluation on every held-out source, checkpoints (every N steps, at the end, on SIGTERM/SIGINT),
metrics (console, ``metrics.jsonl``, TensorBoard), the NaN / exploding-loss stop, the final Hugging Face
export and the report with the plan's predictions beside the measurements.

The loss is transformers' own (``labels`` with ``shift_labels``: the windows are already shifted), so Liger's
fused linear cross-entropy can replace it. Batches are sliced from memory-mapped shards in the main process:
a few microseconds per micro-batch against milliseconds of GPU work, so no DataLoader workers are needed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.env import offline
from pipeline.lock import hold
from pipeline.ownership import claim
from pipeline.shards.format import ShardError
from training.branch import branch_inherit, branch_point, check_branch
from training.checkpoint import CheckpointMismatch, StopRequest, check_resume, find_latest, save_checkpoint
from training.config import TrainConfig, TrainConfigError, dump_train_config, load_train_config
from training.data import ShardWindows
from training.evals.run import evaluate_model
from training.gpus import detect_gpu
from training.metrics import (
    EVAL,
    METRICS,
    Meter,
    Progress,
    Say,
    append_row,
    format_row,
    hparams,
    printer,
    truncate_rows,
)
from training.modeling import (
    ModelSetupError,
    ShardsTokenizer,
    architecture,
    build_model,
    model_num_layers,
    shards_tokenizer,
)
from training.parallel import accelerator_kwargs, check_fp8, check_tp, clip_grad_norm, tensor_parallel
from training.preflight import GateError, data_world, gate, gate_message, resolve_config
from training.report import TrainSummary, summary_of, write_report
from training.schedule import from_config
from training.steps import (
    TrainingDiverged,
    agree_stop,
    check_finite,
    evaluate,
    export,
    heldout_readers,
    last_good,
    make_optimizer,
    read_batch,
)
from training.threads import ThreadTuner

if TYPE_CHECKING:
    import torch
    from accelerate import Accelerator

    from training.models import ModelShape
    from training.plan.planner import Plan


@dataclass
class Run:
    """Everything the loop works with: built once by ``_set_up``, then advanced step by step."""

    given: TrainConfig  # as given (``force`` and ``tensorboard`` are read from it)
    config: TrainConfig  # resolved against the shards and the checkpoint (``_resolve_and_gate``)
    output: Path
    tokenizer: ShardsTokenizer
    accelerator: Accelerator
    precision: str
    cuda: bool
    gate: _Gated
    model: torch.nn.Module  # as accelerate prepared it
    optimizer: torch.optim.Optimizer
    train: ShardWindows
    heldout: dict[str, ShardWindows]
    n_params: int
    step: int = 0
    tokens_seen: int = 0
    sample: int = 0
    elapsed_before: float = 0.0
    best_loss: float = math.inf
    resumed_from: str | None = None
    started: float = field(default_factory=time.time)
    threads: ThreadTuner | None = None  # CPU runs: the thread count, tuned on the first steps

    @property
    def plan(self) -> Plan:
        return self.gate.plan

    @property
    def shape(self) -> ModelShape:
        return self.gate.shape

    @property
    def gpu(self) -> str | None:
        return self.gate.gpu

    @property
    def problems(self) -> list[str]:
        return self.gate.problems

    @property
    def warnings(self) -> list[str]:
        return self.gate.warnings

    @property
    def main(self) -> bool:
        return self.accelerator.is_main_process

    def state(self) -> dict[str, Any]:
        """What a checkpoint records beside the weights and optimizer."""
        return {
            "step": self.step,
            "tokens": self.tokens_seen,
            "data": self.train.state_dict(self.sample),
            "fingerprint": self.tokenizer.manifest.fingerprint,
            "identity": self.config.identity(),
            "identity_hash": self.config.identity_hash(),
            "config": self.config.model_dump(mode="json"),
            "elapsed_s": self.elapsed_before + (time.time() - self.started),
            "best_loss": self.best_loss if math.isfinite(self.best_loss) else None,
        }


def run_training(config: TrainConfig, *, on_step: Callable[[int, dict[str, Any]], None] | None = None) -> TrainSummary:
    """Train (or resume, or finish) the run ``config`` describes; return a summary with the output paths.

    ``on_step(step, info)`` is called on every process after each optimizer step (tests use it to send a
    signal or break the model at a chosen step). The output folder is claimed and locked for the run
    (``pipeline.ownership``, ``pipeline.lock``); under ``accelerate launch`` the launching process holds both.
    """
    with holding_output(config.output):
        return _train(config, on_step)


#: Set for the processes a training launch starts: the launcher holds this output folder for them.
HELD_BY_LAUNCHER = "TOKENMILL_TRAIN_OUTPUT_HELD"


@contextmanager
def holding_output(output: str | Path) -> Iterator[None]:
    """Lock and claim a training folder, unless this is a process ``training.launch`` started for it (``LOCAL_RANK``
    set, or ``HELD_BY_LAUNCHER`` naming it): the launcher holds it for them, and N ranks cannot all hold one lock."""
    key = str(Path(output).resolve())
    if "LOCAL_RANK" in os.environ or os.environ.get(HELD_BY_LAUNCHER) == key:
        yield
        return
    with hold(output, "train"):
        claim(output, "train")
        previous = os.environ.get(HELD_BY_LAUNCHER)
        os.environ[HELD_BY_LAUNCHER] = key  # inherited by what is launched from here
        try:
            yield
        finally:
            if previous is None:
                os.environ.pop(HELD_BY_LAUNCHER, None)
            else:
                os.environ[HELD_BY_LAUNCHER] = previous


def _train(config: TrainConfig, on_step: Callable[[int, dict[str, Any]], None] | None) -> TrainSummary:
    import torch

    run, say = _set_up(config)
    cfg, accelerator, device, output = run.config, run.accelerator, run.accelerator.device, run.output
    assert cfg.max_steps is not None and cfg.global_batch_tokens is not None, "a resolved config"
    schedule, accumulation = from_config(cfg), cfg.accumulation(data_world(cfg, accelerator.num_processes))
    flops_per_token = run.plan.flops_per_token
    peak_flops = run.plan.hardware.device.peak_flops if run.gpu else None
    last_saved = run.step if run.resumed_from is not None else None
    stopped: str | None = None
    bad = torch.zeros((), dtype=torch.bool, device=device)
    meter = Meter(tokens=run.tokens_seen)
    eval_results: dict[str, Any] = {}
    row: dict[str, Any] = {}
    if run.cuda:
        torch.cuda.reset_peak_memory_stats()

    with StopRequest() as stop, Progress(run.main, cfg.max_steps, run.step, say, cfg.global_batch_tokens) as progress:
        run.model.train()
        while run.step < cfg.max_steps:
            lr = schedule(run.step)
            tuner = run.threads if run.threads is not None and run.threads.measuring else None
            if tuner is not None:
                tuner.before_step()
            loss_sum, grad_norm = _optimizer_step(run, lr, accumulation)
            if tuner is not None:
                _tune_threads(tuner, run, say, loss_sum)
            bad |= ~torch.isfinite(loss_sum) | ~torch.isfinite(torch.as_tensor(grad_norm, device=device))
            progress(run.step)
            if on_step is not None:
                on_step(run.step, {"model": run.model, "optimizer": run.optimizer, "accelerator": accelerator})

            last = run.step == cfg.max_steps
            stopped = agree_stop(accelerator, stop.signal)
            log_now = run.step % cfg.log_every == 0 or last or stopped is not None
            save_now = last or stopped is not None or (cfg.ckpt_every and run.step % cfg.ckpt_every == 0)
            if log_now or save_now or not run.cuda:  # on the CPU a check costs nothing: every step
                check_finite(accelerator, bad, loss_sum, run.step, output)
            if log_now:
                row = _log(run, meter, say, loss_sum, lr, grad_norm, flops_per_token, peak_flops)
            paused = time.time()
            if (cfg.eval_every and run.step % cfg.eval_every == 0) or last:
                eval_results = _evaluate_and_log(run, say)
            if save_now:
                save_checkpoint(accelerator, output, run.step, run.state(), cfg.keep_last)
                last_saved = run.step
            meter.paused += time.time() - paused
            if stopped is not None:
                say(f"[yellow]{stopped}[/]: checkpointed step {run.step}; rerun the same command to continue")
                break

    if last_saved != run.step and run.step > 0:  # a rerun of a finished run: make sure the newest state is on disk
        save_checkpoint(accelerator, output, run.step, run.state(), cfg.keep_last)
    return _finish(run, say, stopped, row, eval_results)


def _tune_threads(tuner: ThreadTuner, run: Run, say: Say, loss_sum: torch.Tensor) -> None:
    """Time the step just taken for ``cpu_threads`` (training/threads.py); say the choice or warning once."""
    loss_sum.item()  # the step's work is done before the clock stops (CPU ops are synchronous; this is cheap)
    tuner.after_step()
    if not tuner.measuring:
        for text, kind in ((tuner.message, "note"), (tuner.warning, "warning")):
            if text:
                say(f"[yellow]{kind}:[/] {text}")
                run.warnings.append(text)


# ---------------------------------------------------------------------------------------------- set-up


@dataclass
class _Gated:
    """What ``_resolve_and_gate`` found: the resolved config, the point to resume or branch from, and the plan."""

    config: TrainConfig
    checkpoint: Path | None
    state: dict[str, Any] | None  # the checkpoint's loop state (``Run.state``), None for a fresh run
    branching: bool
    gpu: str | None
    shape: ModelShape
    plan: Plan
    problems: list[str]
    warnings: list[str]


def _set_up(given: TrainConfig) -> tuple[Run, Say]:
    """Accelerator, resume (or branch) point, resolved config and gate, then model, optimizer and readers."""
    import torch
    from accelerate import Accelerator
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # the export's "Writing model shards" bar only clutters the training log
    started = time.time()
    output = Path(given.output)
    tokenizer = shards_tokenizer(given.shards)
    cuda = torch.cuda.is_available()
    precision = given.precision if given.precision != "auto" else ("bf16" if cuda else "fp32")
    if precision == "fp8":
        check_fp8()  # before accelerate, whose AO handler would fail on import without a reason
    check_tp(given.tp_size, int(os.environ.get("WORLD_SIZE", "1")), cuda)
    accelerator = Accelerator(
        **accelerator_kwargs(precision, given.tp_size, model_num_layers(given)),
        log_with="tensorboard" if given.tensorboard else None,
        project_dir=str(output),
    )
    threads = None if cuda else ThreadTuner(given.cpu_threads, torch.set_num_threads, torch.get_num_threads)
    say = printer(accelerator.is_main_process)
    gated = _resolve_and_gate(given, output, tokenizer, accelerator, say)
    model, optimizer, train, heldout, n_params = _build(given, gated.config, tokenizer, accelerator)
    run = Run(
        given, gated.config, output, tokenizer, accelerator, precision, cuda, gated, model, optimizer, train, heldout,
        n_params, started=started, threads=threads,
    )  # fmt: skip
    if gated.checkpoint is not None and gated.state is not None:
        _restore(run, gated.checkpoint, gated.state, gated.branching, say)
    elif run.main:  # no complete checkpoint (a run killed during its first one): its rows are recomputed
        truncate_rows(run.output / METRICS, 0)
        truncate_rows(run.output / EVAL, 0)
    if given.tensorboard:
        accelerator.init_trackers("tensorboard", config=hparams(run.config))
    cfg, world = run.config, accelerator.num_processes
    say(
        f"training {run.shape.name} ({run.n_params:,} parameters) on {cfg.shards}: {cfg.max_steps} steps × "
        f"{cfg.global_batch_tokens:,} tokens ({cfg.accumulation(data_world(given, world))} × {cfg.micro_batch} × "
        f"{cfg.seq_len} per GPU, {world} process{'es' if world > 1 else ''}, {precision}, {accelerator.device})"
    )
    return run, say


def _resolve_and_gate(
    given: TrainConfig, output: Path, tokenizer: ShardsTokenizer, accelerator: Accelerator, say: Say
) -> _Gated:
    """Find the checkpoint to resume (or the trunk to branch from), resolve the config against it, check that
    it may continue, and pass the gate."""
    manifest, world = tokenizer.manifest, accelerator.num_processes
    checkpoint, state, skipped = find_latest(output)
    for warning in skipped:
        say(f"[yellow]warning:[/] {warning}")
    branching = state is None and given.branch_from is not None
    if given.branch_from is not None and branching:
        checkpoint, state = branch_point(given.branch_from)
    inherit = branch_inherit(state) if branching and state is not None else state
    cfg = resolve_config(given, tokenizer, data_world(given, world), inherit)
    warnings: list[str] = []
    if branching and state is not None:
        warnings += check_branch(state, cfg, manifest.fingerprint, given.force)
    elif state is not None:
        warnings += check_resume(state, cfg.identity(), manifest.fingerprint, given.force)
        assert cfg.max_steps is not None and cfg.decay_steps is not None, "a resolved config"
        if cfg.max_steps > cfg.decay_steps and state["config"].get("decay_steps") == cfg.decay_steps:
            warnings.append(
                f"max_steps {cfg.max_steps} runs past the schedule's end (decay_steps {cfg.decay_steps}): the "
                "learning rate stays at min_lr from there; set decay_steps (with --force) to stretch the schedule"
            )
    gpu = cfg.gpu or detect_gpu()
    _arch, shape = architecture(cfg, tokenizer)
    plan, problems, notes = gate(cfg, shape, gpu, cfg.n_gpus or world)
    if problems and not given.force:
        raise GateError(gate_message(problems))
    warnings = warnings + [f"forced past the budget check: {p}" for p in problems] + notes
    for warning in warnings:
        say(f"[yellow]note:[/] {warning}")
    if accelerator.is_main_process:
        output.mkdir(parents=True, exist_ok=True)
        dump_train_config(cfg, output / "train_config.yaml")
    return _Gated(cfg, checkpoint, state, branching, gpu, shape, plan, problems, warnings)


def _build(
    given: TrainConfig, cfg: TrainConfig, tokenizer: ShardsTokenizer, accelerator: Accelerator
) -> tuple[torch.nn.Module, torch.optim.Optimizer, ShardWindows, dict[str, ShardWindows], int]:
    """Model (tensor-parallel, compiled, wrapped by accelerate), optimizer and the data readers, and the model's
    parameter count."""
    from accelerate.utils import set_seed

    data_ranks = data_world(given, accelerator.num_processes)
    rank = accelerator.process_index // given.tp_size  # a tensor-parallel group's ranks read the same windows
    assert cfg.seq_len is not None, "a resolved config"
    set_seed(cfg.seed)
    model = build_model(cfg, tokenizer, cfg.shards)
    n_params = sum(p.numel() for p in model.parameters())
    if cfg.tp_size > 1:
        model = tensor_parallel(model.to(accelerator.device), cfg.tp_size)
    if cfg.compile:
        model.compile()  # in place: parameter names (and so checkpoints) stay those of the plain model
    prepared = accelerator.prepare(model)
    optimizer = accelerator.prepare(make_optimizer(prepared, cfg, accelerator.device))
    train = ShardWindows(cfg.shards, cfg.seq_len, split="train", seed=cfg.seed, rank=rank, world_size=data_ranks)
    heldout = heldout_readers(cfg, tokenizer.manifest, rank, data_ranks)
    return prepared, optimizer, train, heldout, n_params


def _restore(run: Run, checkpoint: Path, state: dict[str, Any], branching: bool, say: Say) -> None:
    """Load a checkpoint's weights, optimizer and loop state; drop the metrics rows logged after it."""
    data_ranks = data_world(run.given, run.accelerator.num_processes)
    # optimizer, scheduler and sampler state through torch.load(weights_only=True): a checkpoint never runs code
    run.accelerator.load_state(str(checkpoint), load_kwargs={"weights_only": True})
    run.step, run.tokens_seen = int(state["step"]), int(state["tokens"])
    run.elapsed_before = float(state.get("elapsed_s") or 0.0)
    run.best_loss = math.inf if state.get("best_loss") is None else float(state["best_loss"])
    try:
        run.sample = run.train.resume(state["data"])
    except ValueError:
        if not run.given.force:
            raise
        run.sample = int(state["data"]["consumed_samples"]) // data_ranks  # forced onto other shards: same index
    run.resumed_from = str(checkpoint)
    say(f"{'branched' if branching else 'resumed'} from {checkpoint} (step {run.step}, {run.tokens_seen:,} tokens)")
    if run.main:
        truncate_rows(run.output / METRICS, run.step)
        truncate_rows(run.output / EVAL, run.step)


# ---------------------------------------------------------------------------------------------- one step


def _optimizer_step(run: Run, lr: float, accumulation: int) -> tuple[Any, Any]:
    """Accumulate the micro-batches (gradient sync on the last only), clip, step; returns (loss, grad norm)."""
    import torch

    cfg, accelerator, model, device = run.config, run.accelerator, run.model, run.accelerator.device
    for group in run.optimizer.param_groups:
        group["lr"] = lr
    loss_sum = torch.zeros((), device=device)
    for micro in range(accumulation):
        batch = read_batch(run.train, run.sample, cfg.micro_batch, device)
        run.sample += cfg.micro_batch
        inputs, labels = batch[:, :-1].contiguous(), batch[:, 1:].contiguous()
        sync = nullcontext() if micro == accumulation - 1 else accelerator.no_sync(model)
        with sync:
            loss = model(input_ids=inputs, labels=labels, shift_labels=labels).loss / accumulation
            accelerator.backward(loss)
        loss_sum += loss.detach()
    if cfg.tp_size > 1:  # sharded and replicated parameters mixed: accelerate's clip refuses them
        grad_norm = clip_grad_norm(model.parameters(), cfg.grad_clip or float("inf"))
    else:
        grad_norm = accelerator.clip_grad_norm_(model.parameters(), cfg.grad_clip or float("inf"))
    run.optimizer.step()
    run.optimizer.zero_grad(set_to_none=True)
    run.step += 1
    assert cfg.global_batch_tokens is not None, "a resolved config"
    run.tokens_seen += cfg.global_batch_tokens
    return loss_sum, grad_norm


def _log(run: Run, meter: Meter, say: Say, loss_sum: Any, lr: float, grad_norm: Any, fpt: float, peak: Any) -> dict:
    """The metrics row of this step (file, console, TensorBoard); stops on an exploding loss."""
    cfg, accelerator = run.config, run.accelerator
    loss_value = accelerator.reduce(loss_sum, reduction="mean").item()
    if loss_value > cfg.explode_factor * run.best_loss:
        raise TrainingDiverged(
            f"step {run.step}: loss {loss_value:.4f} exploded past {cfg.explode_factor:g} × the lowest logged "
            f"loss {run.best_loss:.4f}; stopped. {last_good(run.output)} Lower lr, raise warmup_steps or "
            "grad_clip, then rerun (it resumes from that checkpoint)"
        )
    run.best_loss = min(run.best_loss, loss_value)
    row = meter.row(run.step, loss_value, lr, grad_norm, run.tokens_seen, fpt, peak, accelerator.num_processes)
    row["elapsed_s"] = round(run.elapsed_before + time.time() - run.started, 3)
    if run.main:
        append_row(run.output / METRICS, row)
        say(format_row(row))
    accelerator.log({f"train/{k}": v for k, v in row.items() if k != "step" and v is not None}, step=run.step)
    return row


def _evaluate_and_log(run: Run, say: Say) -> dict[str, Any]:
    results = evaluate(run.model, run.heldout, run.config, run.accelerator)
    if results:
        if run.main:
            append_row(run.output / EVAL, {"step": run.step, **results})
            say("eval " + ", ".join(f"{k} loss {v['loss']:.4f} ppl {v['ppl']:.2f}" for k, v in results.items()))
        run.accelerator.log({f"eval/{k}/{m}": v[m] for k, v in results.items() for m in ("loss", "ppl")}, step=run.step)
    run.model.train()
    return results


# ---------------------------------------------------------------------------------------------- done


def _finish(run: Run, say: Say, stopped: str | None, row: dict[str, Any], eval_results: dict[str, Any]) -> TrainSummary:
    """Export a completed run, write the report, return the summary."""
    cfg, accelerator = run.config, run.accelerator
    final = None
    assert cfg.max_steps is not None, "a resolved config"
    if run.step >= cfg.max_steps and stopped is None:
        final = export(accelerator, run.model, cfg, run.tokenizer, run.output, row, eval_results)
        if not eval_results:  # a rerun after completion: evaluate the loaded model for the report
            eval_results = evaluate(run.model, run.heldout, cfg, accelerator)
    if run.given.tensorboard:
        accelerator.end_training()
    summary = summary_of(
        cfg,
        run.output,
        run.step,
        stopped,
        run.resumed_from,
        final,
        eval_results,
        run.n_params,
        run.precision,
        run.warnings,
    )
    if run.main and final is not None and cfg.eval_tasks:
        say(f"evaluating {final} on {', '.join(cfg.eval_tasks)}")
        tasks = evaluate_model(final, cfg.eval_tasks)
        summary = replace(summary, tasks=tasks.to_dict())
        for note in tasks.notes:
            say(f"[yellow]note:[/] {note}")
    if run.main:
        summary = replace(summary, report=write_report(run.output, cfg, run.plan, run.gpu, summary, run.problems))
        assert summary.report is not None
        say(f"[bold green]{summary.status}[/]: step {run.step}/{cfg.max_steps}; report {summary.report.report_md}")
    accelerator.wait_for_everyone()
    return summary


# ------------------------------------------------------------------------------------------ entry point


def main(argv: list[str] | None = None) -> int:
    """``python -m training.train CONFIG [--force]`` — what ``accelerate launch`` runs on every process."""
    offline()  # hub offline, telemetry off
    parser = argparse.ArgumentParser(prog="python -m training.train")
    parser.add_argument("config", help="train config YAML")
    parser.add_argument("--force", action="store_true", help="train despite gate problems or a changed config")
    args = parser.parse_args(argv)
    try:
        config = load_train_config(args.config, {"force": True} if args.force else None)
        summary = run_training(config)
    except (TrainConfigError, GateError, CheckpointMismatch, ModelSetupError, ShardError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except TrainingDiverged as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(json.dumps({k: getattr(summary, k) for k in ("status", "step", "final_loss", "final")}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
