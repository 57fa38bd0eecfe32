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

import json
import math
import os
import resource
import sys
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

from pipeline.errors import TokenmillError
from training.checkpoint import StopRequest, check_resume, find_latest, save_checkpoint
from training.config import TrainConfig, TrainConfigError, dump_train_config, load_train_config
from training.modeling import (
    TRAIN_INFO,
    architecture,
    base_peak_lr,
    build_model,
    copy_tokenizer,
    model_num_layers,
    model_seq_len,
    resolve_init_from,
    shards_tokenizer,
)
from training.parallel import accelerator_kwargs, check_fp8, check_tp, clip_grad_norm, tensor_parallel

GIB = 1024**3
METRICS = "metrics.jsonl"
EVAL = "eval.jsonl"


class GateError(TokenmillError, ValueError):
    """The budget check found blocking problems; the message lists them with the cheapest fix."""


class TrainingDiverged(TokenmillError, RuntimeError):
    """The loss became NaN/inf or exploded; the message names the step and the last good checkpoint."""


# ---------------------------------------------------------------------------------------------- the gate


def detect_gpu() -> str | None:
    """The GPU table's name for CUDA device 0, or None without CUDA (or for a device the table lacks)."""
    import torch

    if not torch.cuda.is_available():
        return None
    return gpu_from_name(torch.cuda.get_device_name(0), torch.cuda.get_device_properties(0).total_memory / GIB)


def gpu_from_name(device_name: str, memory_gib: float) -> str | None:
    """``NVIDIA H100 80GB HBM3`` → ``H100-SXM``; None for a device the GPU table does not know."""
    from training.gpus import GPUS, UnknownGPUError, _key, get_gpu

    device = _key(device_name)
    for name in sorted(GPUS, key=lambda n: -len(_key(n))):  # the most specific table name contained in it
        if _key(name) in device:
            return name
    for family in ("a100", "h100", "h200", "b200", "l40s", "l4", "4090", "mi300x"):
        if family in device:
            try:
                if family == "a100":
                    return "A100-80GB" if memory_gib > 45 else "A100-40GB"
                return get_gpu(family).name
            except UnknownGPUError:
                continue
    return None


def gate(config: TrainConfig, shape: Any, gpu: str | None, n_gpus: int) -> tuple[Any, list[str], list[str]]:
    """Plan this run (model, tokens, hardware) and return ``(plan, blocking problems, notes)``.

    Without a GPU (a CPU run with no ``gpu`` named) the memory verdict does not apply and is left out.
    """
    from training.budget import Data, Hardware, PlanError, check, manifest_info, plan

    notes = []
    tokens = max(1, (config.max_steps or 0) * config.global_batch_tokens)
    try:
        unique = manifest_info(config.shards)["unique_tokens"]
        hardware = Hardware(
            gpu=gpu or "H100-SXM",
            gpus=n_gpus,
            mfu=config.mfu,
            strategy=config.strategy,
            micro_batch=config.micro_batch,
            seq_len=config.seq_len,
            activation_checkpointing=config.activation_checkpointing,
            attention="sdpa",
            precision="amp",  # fp8 too: torchao keeps fp32 master weights; its fp8 activations are not modelled
            tp_size=config.tp_size,
        )
        result = plan(
            shape,
            Data(tokens=tokens, unique_tokens=unique, base_tokens=config.base_tokens, min_tokens=config.min_tokens),
            hardware,
        )
    except PlanError as error:
        raise GateError(f"budget check: {error}") from None
    checked = result
    if gpu is None:
        notes.append("no GPU: the memory check is skipped (name one with gpu: to plan for it)")
        checked = replace(result, memory=replace(result.memory, fits=True))
    return result, check(checked), notes


def preflight(config: TrainConfig, world_size: int | None = None) -> dict[str, Any]:
    """Resolve the config and run the gate without building anything (the CLI and the flow call this before
    ``accelerate launch``). Raises GateError unless forced; returns the resolved config, plan and notes."""
    world = world_size or config.n_gpus or 1
    tokenizer = shards_tokenizer(config.shards)
    _path, state, _warnings = find_latest(config.output)
    resolved = _resolve(config, tokenizer, data_world(config, world), state)
    gpu = resolved.gpu or detect_gpu()
    _arch, shape = architecture(resolved, tokenizer)
    result, problems, notes = gate(resolved, shape, gpu, resolved.n_gpus or world)
    if problems and not config.force:
        raise GateError(_gate_message(problems))
    return {"config": resolved, "plan": result, "problems": problems, "notes": notes}


def _gate_message(problems: list[str]) -> str:
    listed = "\n".join(f"  - {p}" for p in problems)
    return f"the budget check refuses this run:\n{listed}\n(pass --force, or force: true, to train anyway)"


def data_world(config: TrainConfig, world: int) -> int:
    """Data-parallel ranks: the processes of a tensor-parallel group all train on the same batch."""
    return max(1, world // config.tp_size)


def _resolve(config: TrainConfig, tokenizer: dict[str, Any], world: int, state: dict | None) -> TrainConfig:
    base_lr = base_peak_lr(resolve_init_from(config.init_from)) if config.init_from else None
    train_tokens = tokenizer["manifest"].get("totals", {}).get("train_tokens")
    return config.resolved(
        model_seq_len=model_seq_len(config),
        world_size=world,
        train_tokens=train_tokens,
        base_lr=base_lr,
        inherit=(state or {}).get("config"),
    )


# ---------------------------------------------------------------------------------------------- the loop


def run_training(config: TrainConfig, *, on_step: Callable[[int, dict[str, Any]], None] | None = None) -> dict:
    """Train (or resume, or finish) the run ``config`` describes; return a summary with the output paths.

    ``on_step(step, info)`` is called on every process after each optimizer step (tests use it to send a
    signal or break the model at a chosen step).
    """
    import torch
    from accelerate import Accelerator
    from accelerate.utils import set_seed
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # the export's "Writing model shards" bar only clutters the training log

    from training.data import ShardWindows
    from training.schedule import from_config

    started = time.time()
    output = Path(config.output)
    tokenizer = shards_tokenizer(config.shards)
    manifest = tokenizer["manifest"]
    cuda = torch.cuda.is_available()
    if config.cpu_threads and not cuda:
        torch.set_num_threads(config.cpu_threads)
    precision = config.precision if config.precision != "auto" else ("bf16" if cuda else "fp32")
    if precision == "fp8":
        check_fp8()  # before accelerate, whose AO handler would fail on import without a reason
    check_tp(config.tp_size, int(os.environ.get("WORLD_SIZE", "1")), cuda)
    accelerator = Accelerator(
        **accelerator_kwargs(precision, config.tp_size, model_num_layers(config)),
        log_with="tensorboard" if config.tensorboard else None,
        project_dir=str(output),
    )
    main = accelerator.is_main_process
    world = accelerator.num_processes
    # the ranks of a tensor-parallel group read the same windows: data is sharded over the data-parallel ranks
    data_ranks, rank = data_world(config, world), accelerator.process_index // config.tp_size
    say = _printer(main)

    checkpoint, state, skipped = find_latest(output)
    for warning in skipped:
        say(f"[yellow]warning:[/] {warning}")
    branching = state is None and config.branch_from is not None
    if branching:
        checkpoint, state = branch_point(config.branch_from)
    cfg = _resolve(config, tokenizer, data_ranks, _branch_inherit(state) if branching else state)
    warnings: list[str] = []
    if branching:
        warnings += check_branch(state, cfg, manifest.get("fingerprint", ""), config.force)
    elif state is not None:
        warnings += check_resume(state, cfg.identity(), manifest.get("fingerprint", ""), config.force)
        if cfg.max_steps > cfg.decay_steps and state["config"].get("decay_steps") == cfg.decay_steps:
            warnings.append(
                f"max_steps {cfg.max_steps} runs past the schedule's end (decay_steps {cfg.decay_steps}): the "
                "learning rate stays at min_lr from there; set decay_steps (with --force) to stretch the schedule"
            )
    gpu = cfg.gpu or detect_gpu()
    _arch, shape = architecture(cfg, tokenizer)
    plan, problems, notes = gate(cfg, shape, gpu, cfg.n_gpus or world)
    if problems and not config.force:
        raise GateError(_gate_message(problems))
    warnings += [f"forced past the budget check: {p}" for p in problems] + notes
    for warning in warnings:
        say(f"[yellow]note:[/] {warning}")
    if main:
        output.mkdir(parents=True, exist_ok=True)
        dump_train_config(cfg, output / "train_config.yaml")

    set_seed(cfg.seed)
    model = build_model(cfg, tokenizer, cfg.shards)
    n_params = sum(p.numel() for p in model.parameters())
    if cfg.tp_size > 1:
        model = tensor_parallel(model.to(accelerator.device), cfg.tp_size)
    if cfg.compile:
        model.compile()  # in place: parameter names (and so checkpoints) stay those of the plain model
    model = accelerator.prepare(model)
    optimizer = accelerator.prepare(_optimizer(model, cfg, accelerator.device))
    schedule = from_config(cfg)
    accumulation = cfg.accumulation(data_ranks)
    train = ShardWindows(cfg.shards, cfg.seq_len, split="train", seed=cfg.seed, rank=rank, world_size=data_ranks)
    heldout = _heldout_readers(cfg, manifest, rank, data_ranks)

    step, tokens_seen, elapsed_before, best_loss, sample = 0, 0, 0.0, math.inf, 0
    resumed_from = None
    if state is not None:
        accelerator.load_state(str(checkpoint))
        step, tokens_seen = int(state["step"]), int(state["tokens"])
        elapsed_before = float(state.get("elapsed_s") or 0.0)
        best_loss = math.inf if state.get("best_loss") is None else float(state["best_loss"])
        try:
            sample = train.resume(state["data"])
        except ValueError:
            if not config.force:
                raise
            sample = int(state["data"]["consumed_samples"]) // data_ranks  # forced onto other shards: same index
        resumed_from = str(checkpoint)
        say(f"{'branched' if branching else 'resumed'} from {checkpoint} (step {step}, {tokens_seen:,} tokens)")
        if main:
            _truncate_rows(output / METRICS, step)
            _truncate_rows(output / EVAL, step)

    flops_per_token = plan.flops_per_token
    peak_flops = plan.hardware.device.peak_flops if gpu else None
    if config.tensorboard:
        accelerator.init_trackers("tensorboard", config=_hparams(cfg))
    say(
        f"training {shape.name} ({n_params:,} parameters) on {cfg.shards}: {cfg.max_steps} steps × "
        f"{cfg.global_batch_tokens:,} tokens ({accumulation} × {cfg.micro_batch} × {cfg.seq_len} per GPU, "
        f"{world} process{'es' if world > 1 else ''}, {precision}, {accelerator.device})"
    )

    def state_now() -> dict[str, Any]:
        return {
            "step": step,
            "tokens": tokens_seen,
            "data": train.state_dict(sample),
            "fingerprint": manifest.get("fingerprint", ""),
            "identity": cfg.identity(),
            "identity_hash": cfg.identity_hash(),
            "config": cfg.model_dump(mode="json"),
            "elapsed_s": elapsed_before + (time.time() - started),
            "best_loss": best_loss if math.isfinite(best_loss) else None,
        }

    last_saved = step if state is not None else None
    stopped: str | None = None
    device = accelerator.device
    bad = torch.zeros((), dtype=torch.bool, device=device)
    last_log = {"time": time.time(), "tokens": tokens_seen, "paused": 0.0}
    eval_results: dict[str, Any] = {}
    row: dict[str, Any] = {}
    if cuda:
        torch.cuda.reset_peak_memory_stats()

    with StopRequest() as stop, _progress(main, cfg.max_steps, step, say, cfg.global_batch_tokens) as progress:
        model.train()
        while step < cfg.max_steps:
            lr = schedule(step)
            for group in optimizer.param_groups:
                group["lr"] = lr
            loss_sum = torch.zeros((), device=device)
            for micro in range(accumulation):
                batch = _batch(train, sample, cfg.micro_batch, device)
                sample += cfg.micro_batch
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
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            tokens_seen += cfg.global_batch_tokens
            bad |= ~torch.isfinite(loss_sum) | ~torch.isfinite(torch.as_tensor(grad_norm, device=device))
            progress(step)
            if on_step is not None:
                on_step(step, {"model": model, "optimizer": optimizer, "accelerator": accelerator})

            last = step == cfg.max_steps
            stopped = _agree_stop(accelerator, stop.signal)
            log_now = step % cfg.log_every == 0 or last or stopped is not None
            save_now = last or stopped is not None or (cfg.ckpt_every and step % cfg.ckpt_every == 0)
            if log_now or save_now or not cuda:  # on the CPU a check costs nothing: every step
                _check_finite(accelerator, bad, loss_sum, step, output)
            if log_now:
                loss_value = accelerator.reduce(loss_sum, reduction="mean").item()
                if loss_value > cfg.explode_factor * best_loss:
                    raise TrainingDiverged(
                        f"step {step}: loss {loss_value:.4f} exploded past {cfg.explode_factor:g} × the lowest logged "
                        f"loss {best_loss:.4f}; stopped. {_last_good(output)} Lower lr, raise warmup_steps or "
                        "grad_clip, then rerun (it resumes from that checkpoint)"
                    )
                best_loss = min(best_loss, loss_value)
                row = _metrics_row(
                    step, loss_value, lr, grad_norm, tokens_seen, last_log, cfg, flops_per_token, peak_flops, world
                )
                row["elapsed_s"] = round(elapsed_before + time.time() - started, 3)
                if main:
                    _append(output / METRICS, row)
                    say(_format_row(row))
                accelerator.log({f"train/{k}": v for k, v in row.items() if k != "step" and v is not None}, step=step)
            paused = time.time()
            if (cfg.eval_every and step % cfg.eval_every == 0) or last:
                eval_results = _evaluate(model, heldout, cfg, accelerator)
                if eval_results:
                    if main:
                        _append(output / EVAL, {"step": step, **eval_results})
                        say(
                            "eval "
                            + ", ".join(f"{k} loss {v['loss']:.4f} ppl {v['ppl']:.2f}" for k, v in eval_results.items())
                        )
                    accelerator.log(
                        {f"eval/{k}/{m}": v[m] for k, v in eval_results.items() for m in ("loss", "ppl")}, step=step
                    )
                model.train()
            if save_now:
                save_checkpoint(accelerator, output, step, state_now(), cfg.keep_last)
                last_saved = step
            last_log["paused"] += time.time() - paused
            if stopped is not None:
                say(f"[yellow]{stopped}[/]: checkpointed step {step}; rerun the same command to continue")
                break

    if last_saved != step and step > 0:  # a rerun of a finished run: make sure the newest state is on disk
        save_checkpoint(accelerator, output, step, state_now(), cfg.keep_last)
    final = None
    if step >= cfg.max_steps and stopped is None:
        final = _export(accelerator, model, cfg, tokenizer, output, row, eval_results)
        if not eval_results:  # a rerun after completion: evaluate the loaded model for the report
            eval_results = _evaluate(model, heldout, cfg, accelerator)
    if config.tensorboard:
        accelerator.end_training()
    summary = _summary(cfg, output, step, stopped, resumed_from, final, eval_results, n_params, precision, warnings)
    if main:
        summary.update(_write_report(output, cfg, plan, gpu, summary, problems))
        say(f"[bold green]{summary['status']}[/]: step {step}/{cfg.max_steps}; report {summary.get('report_md')}")
    accelerator.wait_for_everyone()
    return summary


# ------------------------------------------------------------------------------------------- branching

# what a branch may change against the checkpoint it starts from: the schedule after the branch point
BRANCH_FREE = ("decay_steps", "schedule", "decay_fraction", "min_lr", "branch_from")


def branch_point(folder: str | Path) -> tuple[Path, dict[str, Any]]:
    """The checkpoint a ``branch_from`` run starts from; a missing or half-written one is a TrainConfigError."""
    from training.checkpoint import read_state

    path = Path(folder)
    state, why = read_state(path)
    if state is None:
        raise TrainConfigError(f"branch_from: {path}: not a complete checkpoint ({why})")
    return path, state


def _branch_inherit(state: dict[str, Any]) -> dict[str, Any]:
    """A branch keeps the trunk's warmup and batch when left unset; its schedule length is its own."""
    saved = state.get("config") or {}
    return {"config": {k: saved.get(k) for k in ("warmup_steps", "global_batch_tokens")}}


def check_branch(state: dict[str, Any], cfg: TrainConfig, fingerprint: str, force: bool) -> list[str]:
    """A branch continues the trunk's run under another schedule (MiniCPM's WSD cool-down): everything that
    decides what is learned, except the schedule after the branch point, must match the trunk's checkpoint."""
    keep = {k: v for k, v in cfg.identity().items() if k not in BRANCH_FREE}
    saved = {k: v for k, v in (state.get("identity") or {}).items() if k not in BRANCH_FREE}
    warnings = check_resume({**state, "identity": saved}, keep, fingerprint, force)
    trunk = from_config_dict(state.get("config") or {})
    if trunk is not None:
        from training.schedule import from_config

        mine, step = from_config(cfg), int(state["step"])
        if any(abs(trunk(s) - mine(s)) > 1e-12 * max(1.0, cfg.lr or 1.0) for s in range(step)):
            message = f"branch_from: this schedule differs from the trunk's before the branch point (step {step})"
            if not force:
                raise TrainConfigError(message + "; give the trunk's lr and warmup_steps, or force: true")
            warnings.append("forced: " + message)
    return warnings


def from_config_dict(data: dict[str, Any]):
    """The schedule recorded in a checkpoint's resolved config (None when it does not validate)."""
    from pydantic import ValidationError

    from training.schedule import from_config

    try:
        return from_config(TrainConfig.model_validate(data))
    except (ValidationError, ValueError):
        return None


# ----------------------------------------------------------------------------------------------- helpers


def _optimizer(model, cfg: TrainConfig, device):
    """AdamW with weight decay on matrices and embeddings only (nanoGPT), fused where torch has a kernel.

    Grouped by parameter name, not shape: under FSDP the parameters a rank holds are flat shards."""
    import torch

    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        (no_decay if "norm" in name or name.endswith(".bias") else decay).append(param)
    groups = [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    fused = device.type in ("cuda", "cpu")
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=(cfg.beta1, cfg.beta2), eps=cfg.eps, fused=fused)


def _batch(reader, start: int, size: int, device):
    import numpy as np
    import torch

    rows = np.stack([reader[i] for i in range(start, start + size)]).astype(np.int64)
    tensor = torch.from_numpy(rows)
    if device.type == "cuda":
        return tensor.pin_memory().to(device, non_blocking=True)
    return tensor.to(device)


def _heldout_readers(cfg: TrainConfig, manifest: dict[str, Any], rank: int, world: int) -> dict[str, Any]:
    """One unshuffled reader per held-out source that has at least one window per rank."""
    from pipeline.tokenize.format import ShardError
    from training.data import ShardWindows

    readers = {}
    for split in sorted(manifest.get("splits", {})):
        if not split.startswith("heldout/"):
            continue
        try:
            reader = ShardWindows(cfg.shards, cfg.seq_len, split=split, shuffle=False, rank=rank, world_size=world)
        except ShardError:
            continue  # shorter than one window: nothing to evaluate
        if len(reader):
            readers[split.split("/", 1)[1]] = reader
    return readers


def _evaluate(model, readers: dict[str, Any], cfg: TrainConfig, accelerator) -> dict[str, dict[str, float]]:
    """Mean token loss and perplexity per held-out source (same windows every time, all ranks in step)."""
    import torch

    if not readers or not cfg.eval_batches:
        return {}
    model.eval()
    results = {}
    totals = torch.zeros(2, device=accelerator.device)
    with torch.no_grad():
        for source, reader in readers.items():
            size = min(cfg.micro_batch, len(reader))
            batches = min(cfg.eval_batches, len(reader) // size)
            sums = torch.zeros(2, device=accelerator.device)
            for b in range(batches):
                batch = _batch(reader, b * size, size, accelerator.device)
                inputs, labels = batch[:, :-1].contiguous(), batch[:, 1:].contiguous()
                loss = model(input_ids=inputs, labels=labels, shift_labels=labels).loss
                sums += torch.stack(
                    [loss.float() * labels.numel(), torch.tensor(float(labels.numel()), device=sums.device)]
                )
            sums = accelerator.reduce(sums, reduction="sum") / cfg.tp_size  # a TP group's ranks hold one batch
            totals += sums
            loss_value = (sums[0] / sums[1]).item()
            results[source] = {
                "loss": loss_value,
                "ppl": math.exp(min(loss_value, 50.0)),
                "tokens": int(sums[1].item()),
            }
    if len(results) > 1:
        loss_value = (totals[0] / totals[1]).item()
        results["all"] = {"loss": loss_value, "ppl": math.exp(min(loss_value, 50.0)), "tokens": int(totals[1].item())}
    return results


def _agree_stop(accelerator, signal_name: str | None) -> str | None:
    """Every process stops at the same step: on several, the flag is reduced (one tiny all-reduce per step)."""
    if accelerator.num_processes == 1:
        return signal_name
    import torch

    flag = torch.tensor([1.0 if signal_name else 0.0], device=accelerator.device)
    return (signal_name or "SIGTERM") if accelerator.reduce(flag, reduction="sum").item() > 0 else None


def _check_finite(accelerator, bad, loss_sum, step: int, output: Path) -> None:
    if accelerator.num_processes > 1:
        bad = accelerator.reduce(bad.float(), reduction="sum") > 0
    if bool(bad.item()):
        raise TrainingDiverged(
            f"step {step}: the loss or the gradient norm is not finite (loss {loss_sum.item():.4g}); stopped "
            f"without saving. {_last_good(output)} Lower lr, raise warmup_steps or grad_clip, or check the data, "
            "then rerun (it resumes from that checkpoint)"
        )


def _last_good(output: Path) -> str:
    folder, state, _ = find_latest(output)
    if folder is None:
        return "No checkpoint was written before it."
    return f"The last good checkpoint is {folder} (step {state['step']}), kept."


def _metrics_row(step, loss, lr, grad_norm, tokens, last, cfg, flops_per_token, peak_flops, world) -> dict:
    import torch

    now = time.time()
    busy = max(1e-9, now - last["time"] - last["paused"])
    rate = (tokens - last["tokens"]) / busy
    last.update(time=now, tokens=tokens, paused=0.0)
    if torch.cuda.is_available():
        peak = torch.cuda.max_memory_allocated() / GIB
    else:  # CPU: the process's peak resident memory (ru_maxrss is in KiB on Linux)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (1024**2)
    return {
        "step": step,
        "loss": loss,
        "lr": lr,
        "grad_norm": float(grad_norm),
        "tokens": tokens,
        "tokens_per_s": rate,
        "mfu": rate * flops_per_token / (peak_flops * world) if peak_flops else None,
        "peak_memory_gib": peak,
    }


def _format_row(row: dict[str, Any]) -> str:
    mfu = f" mfu {row['mfu']:.1%}" if row.get("mfu") is not None else ""
    return (
        f"step {row['step']:>6} loss {row['loss']:.4f} lr {row['lr']:.2e} grad {row['grad_norm']:.3f} "
        f"{row['tokens_per_s']:,.0f} tok/s{mfu} mem {row['peak_memory_gib']:.2f} GiB"
    )


def _append(path: Path, row: dict[str, Any]) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(row) + "\n")


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a ``metrics.jsonl`` / ``eval.jsonl`` (missing file: none)."""
    path = Path(path)
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _truncate_rows(path: Path, step: int) -> None:
    """Drop rows logged after the checkpoint being resumed (they are recomputed, identically)."""
    rows = [r for r in read_rows(path) if r.get("step", 0) <= step]
    if path.exists():
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _hparams(cfg: TrainConfig) -> dict[str, Any]:
    """TensorBoard's hparams take scalars only."""
    out = {}
    for key, value in cfg.model_dump(mode="json").items():
        out[key] = value if isinstance(value, int | float | str | bool) else json.dumps(value)
    return out


def _printer(main: bool):
    """``say(message)`` on the main process, and the console it prints to (shared with the progress bar)."""
    from rich.console import Console

    console = Console(stderr=True, highlight=False, soft_wrap=True)

    def say(message: str) -> None:
        if main:
            console.print(message)
            say.last = time.monotonic()  # type: ignore[attr-defined]

    say.console = console  # type: ignore[attr-defined]
    say.last = time.monotonic()  # type: ignore[attr-defined]
    return say


class _progress:
    """Progress on the main process: a rich bar on an interactive terminal; otherwise (logs, Prefect, CI) plain
    lines: an estimate after the first steps, then a line whenever nothing was printed for ``HEARTBEAT_S``.

    Why lines: a 125M model on the CPU takes seconds per step, so ``log_every`` steps can be minutes of
    silence in a log. These lines go to the console only; ``metrics.jsonl`` stays step-based (reruns and
    resumes must write the same rows, which a clock must not decide).
    """

    HEARTBEAT_S = 30.0
    ESTIMATE_AFTER = 3  # steps: the first one pays for warm-up (allocation, compile), a few more average it

    def __init__(self, main: bool, total: int, done: int, say, tokens_per_step: int = 0, clock=time.monotonic):
        self.bar = None
        self.say, self.total, self.first, self.tokens_per_step, self.clock = say, total, done, tokens_per_step, clock
        self.lines = main and not say.console.is_terminal
        self.started = clock()
        if main and say.console.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

            self.bar = Progress("train", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), console=say.console)
            self.task = self.bar.add_task("train", total=total, completed=done)

    def __enter__(self) -> Callable[[int], None]:
        if self.bar is not None:
            self.bar.start()
        return self.update

    def update(self, step: int) -> None:
        if self.bar is not None:
            self.bar.update(self.task, completed=step)
        elif self.lines and step < self.total:
            now = self.clock()
            done = step - self.first
            if done == self.ESTIMATE_AFTER or now - self.say.last >= self.HEARTBEAT_S:
                self.say(self.line(step, now))

    def line(self, step: int, now: float) -> str:
        per_step = (now - self.started) / max(1, step - self.first)
        rate = f", {self.tokens_per_step / per_step:,.0f} tok/s" if self.tokens_per_step and per_step > 0 else ""
        eta = per_step * (self.total - step)
        return f"step {step}/{self.total}: {per_step:.2f} s/step{rate}, about {_duration(eta)} left"

    def __exit__(self, *_exc: Any) -> None:
        if self.bar is not None:
            self.bar.stop()


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _export(accelerator, model, cfg, tokenizer, output: Path, row, eval_results) -> str:
    """``<output>/final``: safetensors weights + config + tokenizer, loadable with the Auto classes."""
    import shutil

    state_dict = accelerator.get_state_dict(model)  # gathers FSDP shards; collective
    final = output / "final"
    if accelerator.is_main_process:
        partial = output / "final.partial"
        shutil.rmtree(partial, ignore_errors=True)
        unwrapped = accelerator.unwrap_model(model)
        unwrapped.config.use_cache = True
        eos = tokenizer.get("eos_id")
        unwrapped.generation_config.eos_token_id = eos
        unwrapped.generation_config.pad_token_id = eos
        unwrapped.save_pretrained(partial, state_dict=state_dict, safe_serialization=True)
        unwrapped.config.use_cache = False
        copy_tokenizer(tokenizer, partial)
        info = {"config": cfg.model_dump(mode="json"), "final_metrics": row, "eval": eval_results}
        (partial / TRAIN_INFO).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
        shutil.rmtree(final, ignore_errors=True)
        partial.rename(final)
    accelerator.wait_for_everyone()
    return str(final)


def _summary(cfg, output, step, stopped, resumed_from, final, eval_results, n_params, precision, warnings) -> dict:
    rows = read_rows(output / METRICS)
    last = rows[-1] if rows else {}
    measured = [r["tokens_per_s"] for r in rows[1:]] or [r["tokens_per_s"] for r in rows]  # first log: warm-up
    if stopped:
        status = f"stopped by {stopped}"
    elif step >= cfg.max_steps:
        status = "completed"
    else:
        status = "incomplete"
    return {
        "status": status,
        "step": step,
        "max_steps": cfg.max_steps,
        "params": n_params,
        "precision": precision,
        "final_loss": last.get("loss"),
        "eval": eval_results,
        "tokens": last.get("tokens"),
        "tokens_per_s": sum(measured) / len(measured) if measured else None,
        "mfu": last.get("mfu"),
        "peak_memory_gib": max((r["peak_memory_gib"] for r in rows), default=None),
        "elapsed_s": last.get("elapsed_s"),
        "resumed_from": resumed_from,
        "warnings": warnings,
        "output": str(output),
        "final": final,
        "metrics": str(output / METRICS),
        "checkpoints": str(output / "checkpoints"),
    }


# ----------------------------------------------------------------------------------------------- report


def _write_report(output: Path, cfg: TrainConfig, plan, gpu: str | None, summary: dict, problems: list[str]) -> dict:
    """``train_report.md`` / ``.json`` and ``plots/loss.png``: the measurements beside the plan's predictions."""
    rows, evals = read_rows(output / METRICS), read_rows(output / EVAL)
    world = plan.gpus
    predicted_rate = plan.hardware.cluster_flops / plan.flops_per_token
    tokens = summary.get("tokens") or 0
    rate = summary.get("tokens_per_s")
    comparison = {
        "hardware": f"{world} × {gpu}" if gpu else "CPU (the plan's GPU figures do not apply)",
        "tokens_per_s": {"planned": predicted_rate if gpu else None, "measured": rate},
        "mfu": {"planned": plan.mfu if gpu else None, "measured": summary.get("mfu")},
        "peak_memory_gib": {
            "planned": plan.memory.per_gpu_gib if gpu else None,
            "measured": summary.get("peak_memory_gib"),
        },
        "time_s": {
            "planned": tokens / predicted_rate if gpu and tokens else None,
            "measured": summary.get("elapsed_s"),
        },
    }
    png = _plot(output, rows, evals, plan.predicted_loss)
    report = {
        "summary": summary,
        "comparison": comparison,
        "plan": plan.to_dict(),
        "blocking_forced": problems,
        "config": cfg.model_dump(mode="json"),
        "eval_history": evals,
    }
    (output / "train_report.json").write_text(json.dumps(report, indent=2, default=str) + "\n", encoding="utf-8")
    markdown = render_markdown(report, png)
    (output / "train_report.md").write_text(markdown, encoding="utf-8")
    return {"report_md": str(output / "train_report.md"), "report_json": str(output / "train_report.json"), "plot": png}


def render_markdown(report: dict[str, Any], png: str | None) -> str:
    """The training summary as markdown (also the Prefect artifact)."""
    s, c, plan = report["summary"], report["comparison"], report["plan"]

    def fmt(value: Any, spec: str = ",.0f") -> str:
        return "—" if value is None else format(value, spec)

    lines = [
        f"# Training report: {Path(s['output']).name}",
        "",
        f"**{s['status']}** at step {s['step']}/{s['max_steps']}, {s['params']:,} parameters, {s['precision']}, "
        f"{c['hardware']}. Final training loss {fmt(s['final_loss'], '.4f')}.",
        "",
        "| | planned | measured |",
        "|---|---:|---:|",
        f"| tokens/s | {fmt(c['tokens_per_s']['planned'])} | {fmt(c['tokens_per_s']['measured'])} |",
        f"| MFU | {fmt(c['mfu']['planned'], '.1%')} | {fmt(c['mfu']['measured'], '.1%')} |",
        f"| peak memory per GPU (GiB) | {fmt(c['peak_memory_gib']['planned'], '.2f')} | "
        f"{fmt(c['peak_memory_gib']['measured'], '.2f')} |",
        f"| time for {fmt(s['tokens'])} tokens (s) | {fmt(c['time_s']['planned'], ',.1f')} | "
        f"{fmt(c['time_s']['measured'], ',.1f')} |",
        "",
        f"Plan: {plan['tokens']:,.0f} tokens, {plan['flops']:.3g} FLOPs ({plan['flops_per_token']:.3g}/token), "
        f"{plan['tokens_per_param']:.2f} tokens/parameter; predicted loss {plan['predicted_loss']:.3f} (scaling fit, "
        "for comparison only).",
    ]
    for verdict in plan.get("verdicts", []):
        lines.append(f"- {verdict}")
    if s.get("eval"):
        lines += ["", "| held-out source | loss | perplexity | tokens |", "|---|---:|---:|---:|"]
        for source, values in s["eval"].items():
            lines.append(f"| {source} | {values['loss']:.4f} | {values['ppl']:.2f} | {values['tokens']:,} |")
    for problem in report.get("blocking_forced", []):
        lines.append(f"- forced past: {problem}")
    for warning in s.get("warnings", []):
        lines.append(f"- note: {warning}")
    if png:
        lines += ["", f"![loss]({Path(png).relative_to(Path(s['output'])).as_posix()})"]
    if s.get("final"):
        lines += ["", f"Model: `{s['final']}` (AutoModelForCausalLM / AutoTokenizer)."]
    return "\n".join(lines) + "\n"


def _plot(output: Path, rows: list[dict], evals: list[dict], predicted_loss: float) -> str | None:
    if not rows:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(7, 4))
    axis.plot([r["step"] for r in rows], [r["loss"] for r in rows], label="train loss")
    sources = sorted({k for e in evals for k in e if k != "step"})
    for source in sources:
        points = [(e["step"], e[source]["loss"]) for e in evals if source in e]
        axis.plot(*zip(*points, strict=True), marker="o", label=f"held-out {source}")
    highest = max(r["loss"] for r in rows)
    if 0 < predicted_loss < 1.5 * highest:  # a tiny CPU run's fit prediction (~80) would flatten the curves
        axis.axhline(predicted_loss, color="grey", linestyle="--", label="plan: predicted final loss (fit)")
    axis.set_xlabel("step")
    axis.set_ylabel("loss (nats/token)")
    axis.legend()
    figure.tight_layout()
    path = output / "plots" / "loss.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return str(path)


# ------------------------------------------------------------------------------------------ entry point


def launch_command(
    config_file: str | Path, accelerate_config: str | None = None, num_processes: int | None = None, force: bool = False
) -> list[str]:
    """``accelerate launch … -m training.train CONFIG`` (multi-GPU) or ``python -m training.train CONFIG``."""
    tail = ["-m", "training.train", str(config_file)] + (["--force"] if force else [])
    if accelerate_config is None and not num_processes:
        return [sys.executable, *tail]
    command = [sys.executable, "-m", "accelerate.commands.launch"]
    if accelerate_config:
        command += ["--config_file", str(accelerate_config)]
    if num_processes:
        command += ["--num_processes", str(num_processes)]
    return command + tail


def main(argv: list[str] | None = None) -> int:
    """``python -m training.train CONFIG [--force]`` — what ``accelerate launch`` runs on every process."""
    import argparse

    import flows  # noqa: F401  (hub offline, telemetry off)

    parser = argparse.ArgumentParser(prog="python -m training.train")
    parser.add_argument("config", help="train config YAML")
    parser.add_argument("--force", action="store_true", help="train despite gate problems or a changed config")
    args = parser.parse_args(argv)
    from pipeline.tokenize.format import ShardError
    from training.checkpoint import CheckpointMismatch
    from training.modeling import ModelSetupError

    try:
        config = load_train_config(args.config, {"force": True} if args.force else None)
        summary = run_training(config)
    except (TrainConfigError, GateError, CheckpointMismatch, ModelSetupError, ShardError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except TrainingDiverged as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(json.dumps({k: summary[k] for k in ("status", "step", "final_loss", "final")}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
