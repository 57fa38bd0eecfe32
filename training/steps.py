"""The pieces of one training step and its surroundings: the optimizer, batches, evaluation on the held-out
sources, the stop and finiteness checks every process agrees on, and the final Hugging Face export.

Heavy libraries (torch, numpy) are imported inside the functions: ``tokenmill --help`` and the plan stay fast.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pipeline.errors import TokenmillError
from pipeline.ownership import record_of, remove_owned
from pipeline.shards.format import ShardError, ShardManifest
from training.checkpoint import find_latest
from training.config import TrainConfig
from training.data import ShardWindows
from training.modeling import TRAIN_INFO, ShardsTokenizer, copy_tokenizer

if TYPE_CHECKING:
    import torch


class TrainingDiverged(TokenmillError, RuntimeError):
    """The loss became NaN/inf or exploded; the message names the step and the last good checkpoint."""


def make_optimizer(model: torch.nn.Module, cfg: TrainConfig, device: torch.device) -> torch.optim.Optimizer:
    """AdamW with weight decay on matrices and embeddings only (nanoGPT), fused where torch has a kernel.

    Grouped by parameter name, not shape: under FSDP the parameters a rank holds are flat shards."""
    import torch

    decay: list[torch.nn.Parameter] = []
    no_decay: list[torch.nn.Parameter] = []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        (no_decay if "norm" in name or name.endswith(".bias") else decay).append(param)
    groups = [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    fused = device.type in ("cuda", "cpu")
    assert cfg.lr is not None, "a resolved config"
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=(cfg.beta1, cfg.beta2), eps=cfg.eps, fused=fused)


def read_batch(reader: ShardWindows, start: int, size: int, device: torch.device) -> torch.Tensor:
    """Windows ``start`` … ``start + size - 1`` of ``reader`` as one int64 batch on ``device``."""
    import torch

    rows = np.stack([reader[i] for i in range(start, start + size)]).astype(np.int64)
    tensor = torch.from_numpy(rows)
    if device.type == "cuda":
        return tensor.pin_memory().to(device, non_blocking=True)
    return tensor.to(device)


def heldout_readers(cfg: TrainConfig, manifest: ShardManifest, rank: int, world: int) -> dict[str, ShardWindows]:
    """One unshuffled reader per held-out source that has at least one window per rank."""
    assert cfg.seq_len is not None, "a resolved config"
    readers = {}
    for split in manifest.heldout_splits:
        try:
            reader = ShardWindows(cfg.shards, cfg.seq_len, split=split, shuffle=False, rank=rank, world_size=world)
        except ShardError:
            continue  # shorter than one window: nothing to evaluate
        if len(reader):
            readers[split.split("/", 1)[1]] = reader
    return readers


def evaluate(model, readers: dict[str, ShardWindows], cfg: TrainConfig, accelerator) -> dict[str, dict[str, float]]:
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
                batch = read_batch(reader, b * size, size, accelerator.device)
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


def agree_stop(accelerator, signal_name: str | None) -> str | None:
    """Every process stops at the same step: on several, the flag is reduced (one tiny all-reduce per step)."""
    if accelerator.num_processes == 1:
        return signal_name
    import torch

    flag = torch.tensor([1.0 if signal_name else 0.0], device=accelerator.device)
    return (signal_name or "SIGTERM") if accelerator.reduce(flag, reduction="sum").item() > 0 else None


def check_finite(accelerator, bad, loss_sum, step: int, output: Path) -> None:
    if accelerator.num_processes > 1:
        bad = accelerator.reduce(bad.float(), reduction="sum") > 0
    if bool(bad.item()):
        raise TrainingDiverged(
            f"step {step}: the loss or the gradient norm is not finite (loss {loss_sum.item():.4g}); stopped "
            f"without saving. {last_good(output)} Lower lr, raise warmup_steps or grad_clip, or check the data, "
            "then rerun (it resumes from that checkpoint)"
        )


def last_good(output: Path) -> str:
    folder, state, _ = find_latest(output)
    if folder is None or state is None:
        return "No checkpoint was written before it."
    return f"The last good checkpoint is {folder} (step {state['step']}), kept."


def export(
    accelerator: Any,
    model: torch.nn.Module,
    cfg: TrainConfig,
    tokenizer: ShardsTokenizer,
    output: Path,
    row: dict[str, Any],
    eval_results: dict[str, dict[str, float]],
) -> str:
    """``<output>/final``: safetensors weights + config + tokenizer, loadable with the Auto classes."""
    state_dict = accelerator.get_state_dict(model)  # gathers FSDP shards; collective
    final = output / "final"
    if accelerator.is_main_process:
        partial = output / "final.partial"
        record = record_of(output)
        remove_owned(partial, record)
        unwrapped = accelerator.unwrap_model(model)
        unwrapped.config.use_cache = True
        eos = tokenizer.eos_id
        unwrapped.generation_config.eos_token_id = eos
        unwrapped.generation_config.pad_token_id = eos
        unwrapped.save_pretrained(partial, state_dict=state_dict, safe_serialization=True)
        unwrapped.config.use_cache = False
        copy_tokenizer(tokenizer, partial)
        info = {"config": cfg.model_dump(mode="json"), "final_metrics": row, "eval": eval_results}
        (partial / TRAIN_INFO).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
        remove_owned(final, record)
        partial.rename(final)
    accelerator.wait_for_everyone()
    return str(final)
