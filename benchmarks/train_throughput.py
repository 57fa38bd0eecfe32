"""Training throughput on one GPU: the tokenmill loop on real shards vs a bare loop on the same model.

For each preset (default 125m, 350m, 1b at sequence 2048): tokens/s, MFU (the budget module's FLOPs per token
over the GPU table's peak) and peak memory of

  * tokenmill: ``run_training`` on shards written by ``run_tokenize`` (metrics, TensorBoard, the NaN guard,
    data from memory-mapped shards; evaluation and checkpoints excluded from the timed steps as the loop
    itself excludes them from tokens/s),
  * bare: the same model, optimizer, precision, compile/Liger setting and accumulation on random tokens
    already on the GPU, no logging, no checkpoints,

and the overhead ratio bare / tokenmill - 1 (target ≤ 3 %), with the plan's peak-memory prediction beside the
measured peak and their error (target within 10 %), all presets in one run, one table. ``--precision fp8``
runs both loops with torchao FP8 (refused with the reason where the GPU or torchao lacks it); MFU is counted
against the GPU table's bf16 peak either way, so an FP8 speed-up shows as a higher MFU. Without CUDA it
refuses, unless ``--smoke`` (a tiny CPU run of the same code path, for CI: the CPU's peak is the process's
resident memory, to which the plan's GPU prediction does not apply, so that column stays empty).

    python benchmarks/train_throughput.py                       # on a GPU machine
    python benchmarks/train_throughput.py --presets 1b --compile --micro-batch 1b=16
    python benchmarks/train_throughput.py --presets 1b --precision fp8
    python benchmarks/train_throughput.py --smoke               # anywhere
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.env import offline

offline()

DEFAULT_MICRO = {"125m": 32, "350m": 16, "1b": 16, "tiny": 4}


def make_shards(folder: Path, vocab: int, megabytes: float, seed: int = 0) -> Path:
    """A synthetic curated corpus (Zipf-distributed random words, so BPE fills a 32k vocabulary) → shards."""
    import gzip

    from pipeline.tokenize import run_tokenize
    from pipeline.tokenize.config import TokenizeConfig

    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(rng.choice(letters) for _ in range(rng.randint(2, 10))) for _ in range(60_000)]
    weights = [1 / (rank + 1) for rank in range(len(words))]
    curated = folder / "curated" / "web"
    curated.mkdir(parents=True, exist_ok=True)
    target, written, number = int(megabytes * 1e6), 0, 0
    with gzip.open(curated / "00000.jsonl.gz", "wt", encoding="utf-8") as handle:
        while written < target:
            text = " ".join(rng.choices(words, weights, k=rng.randint(200, 600))) + "."
            handle.write(json.dumps({"text": text, "id": f"d{number}", "metadata": {"source": "web"}}) + "\n")
            written += len(text)
            number += 1
    config = TokenizeConfig(vocab_size=vocab, tasks=4, workers=4, heldout_share=0.01, seed=seed)
    run_tokenize(folder, folder / "shards", config)
    return folder / "shards"


def tokenmill_loop(shards: Path, output: Path, preset: str, args: argparse.Namespace, micro: int) -> dict[str, Any]:
    from training.config import TrainConfig
    from training.metrics import read_rows
    from training.train import run_training

    config = TrainConfig(
        shards=str(shards),
        output=str(output),
        model=preset,
        model_overrides=args.overrides,
        seq_len=args.seq_len,
        micro_batch=micro,
        global_batch_tokens=micro * args.seq_len * args.accumulation,
        max_steps=args.warmup + args.steps,
        eval_every=0,
        eval_batches=0,
        ckpt_every=0,
        log_every=args.log_every,
        compile=args.compile,
        liger=args.liger,
        activation_checkpointing=args.activation_checkpointing,
        precision=args.precision,
        cpu_threads=1 if args.smoke else None,
        gpu=args.gpu,
        force=True,  # a benchmark's few steps are "under-trained"; only memory would matter, and it is measured
        tensorboard=True,
    )
    summary = run_training(config)
    rows = [r for r in read_rows(output / "metrics.jsonl") if r["step"] > args.warmup]
    report = json.loads((output / "train_report.json").read_text())
    rate = sum(r["tokens_per_s"] for r in rows) / len(rows)
    return {
        "tokens_per_s": rate,
        "mfu": rows[-1]["mfu"],
        "peak_memory_gib": max(r["peak_memory_gib"] for r in rows),
        "planned_memory_gib": report["comparison"]["peak_memory_gib"]["planned"],  # None on the CPU
        "flops_per_token": report["plan"]["flops_per_token"],
        "params": summary.params,
        "config": config,
    }


def bare_loop(config: Any, args: argparse.Namespace, flops_per_token: float) -> dict[str, Any]:
    """The same model and step on random tokens: what the GPU does without any of tokenmill's bookkeeping."""
    import torch
    from accelerate import Accelerator

    from training.gpus import detect_gpu
    from training.modeling import build_model, model_num_layers, shards_tokenizer
    from training.parallel import accelerator_kwargs
    from training.steps import make_optimizer

    cfg = config.resolved(model_seq_len=args.seq_len, world_size=1)
    tokenizer = shards_tokenizer(cfg.shards)
    accelerator = Accelerator(**accelerator_kwargs(cfg.precision, 1, model_num_layers(cfg)))
    model = build_model(cfg, tokenizer, cfg.shards)
    if cfg.compile:
        model.compile()
    model = accelerator.prepare(model)
    optimizer = accelerator.prepare(make_optimizer(model, cfg, accelerator.device))
    vocab = tokenizer.vocab_size
    accumulation = cfg.accumulation(1)
    cuda = torch.cuda.is_available()

    def step() -> None:
        for _ in range(accumulation):
            batch = torch.randint(0, vocab, (cfg.micro_batch, cfg.seq_len + 1), device=accelerator.device)
            inputs, labels = batch[:, :-1].contiguous(), batch[:, 1:].contiguous()
            loss = model(input_ids=inputs, labels=labels, shift_labels=labels).loss / accumulation
            accelerator.backward(loss)
        accelerator.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    for _ in range(args.warmup):
        step()
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    started = time.perf_counter()
    for _ in range(args.steps):
        step()
    if cuda:
        torch.cuda.synchronize()
    seconds = time.perf_counter() - started
    rate = args.steps * cfg.global_batch_tokens / seconds
    gpu = detect_gpu()
    peak = None
    if gpu:
        from training.gpus import get_gpu

        peak = get_gpu(gpu).peak_flops
    result = {
        "tokens_per_s": rate,
        "mfu": rate * flops_per_token / peak if peak else None,
        "peak_memory_gib": torch.cuda.max_memory_allocated() / 1024**3 if cuda else None,
    }
    gc.collect()  # the model and optimizer go with this frame
    if cuda:
        torch.cuda.empty_cache()
    return result


def render_table(results: list[dict[str, Any]], args: argparse.Namespace) -> str:
    """One row per preset: throughput of both loops, the loop's overhead, MFU, measured vs planned peak memory."""

    def pct(value: float | None, signed: bool = False) -> str:
        return "—" if value is None else (f"{value:+.1%}" if signed else f"{value:.1%}")

    def gib(value: float | None) -> str:
        return "—" if value is None else f"{value:.2f}"

    setup = [args.precision, f"seq {args.seq_len}", f"accumulation {args.accumulation}"]
    setup += [name for name in ("compile", "liger", "activation_checkpointing") if getattr(args, name)]
    lines = [
        f"# {', '.join(setup)}; {args.steps} timed steps after {args.warmup} warm-up",
        f"{'preset':>6} {'params':>14} {'µbatch':>6} {'tokenmill tok/s':>16} {'bare tok/s':>11} {'overhead':>9} "
        f"{'MFU':>6} {'bare MFU':>8} {'peak GiB':>9} {'bare GiB':>9} {'plan GiB':>9} {'plan err':>9}",
    ]
    for r in results:
        ours, bare = r["tokenmill"], r["bare"]
        lines.append(
            f"{r['preset']:>6} {ours['params']:>14,} {r['micro_batch']:>6} {ours['tokens_per_s']:>16,.0f} "
            f"{bare['tokens_per_s']:>11,.0f} {r['overhead']:>9.1%} {pct(ours['mfu']):>6} {pct(bare['mfu']):>8} "
            f"{gib(ours['peak_memory_gib']):>9} {gib(bare['peak_memory_gib']):>9} "
            f"{gib(ours['planned_memory_gib']):>9} {pct(r['plan_memory_error'], signed=True):>9}"
        )
    if args.smoke:
        lines.append("(CPU smoke run: peak GiB is the process's resident memory; the plan's GPU figures do not apply)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--presets", default="125m,350m,1b")
    parser.add_argument("--seq-len", type=int, default=2048)
    parser.add_argument("--micro-batch", default="", help="PRESET=N,… (defaults: 125m=32, 350m=16, 1b=16)")
    parser.add_argument("--accumulation", type=int, default=1, help="micro-batches per optimizer step")
    parser.add_argument("--steps", type=int, default=20, help="timed optimizer steps")
    parser.add_argument("--warmup", type=int, default=5, help="untimed steps first (compile, allocator)")
    parser.add_argument("--log-every", type=int, default=5)
    parser.add_argument("--compile", action="store_true")
    parser.add_argument("--liger", action="store_true")
    parser.add_argument("--activation-checkpointing", action="store_true")
    parser.add_argument("--precision", choices=("bf16", "fp8"), default="bf16", help="fp8: torchao through accelerate")
    parser.add_argument("--gpu", default=None, help="GPU table name (default: detected)")
    parser.add_argument("--shards", type=Path, default=None, help="existing shards (default: generated, vocab 32k)")
    parser.add_argument("--vocab", type=int, default=32_000)
    parser.add_argument("--megabytes", type=float, default=8.0, help="generated corpus size")
    parser.add_argument("--output", type=Path, default=None, help="write the results as JSON here")
    parser.add_argument("--smoke", action="store_true", help="tiny CPU run of the same code (no GPU needed)")
    args = parser.parse_args(argv)

    import torch

    if args.smoke:
        args.presets, args.seq_len, args.steps, args.warmup, args.log_every = "tiny", 64, 4, 2, 1
        args.vocab, args.megabytes, args.compile, args.liger, args.precision = 512, 0.3, False, False, "fp32"
        args.overrides = {"hidden_size": 64, "intermediate_size": 176, "num_hidden_layers": 2}
    elif not torch.cuda.is_available():
        print(
            "train_throughput: no CUDA GPU here — this benchmark measures GPU training throughput. Run it on a GPU "
            "machine, or pass --smoke for a tiny CPU run of the same code path."
        )
        return 0
    else:
        args.overrides = {}
        if args.precision == "fp8":
            from training.config import TrainConfigError
            from training.parallel import check_fp8

            try:
                check_fp8()
            except TrainConfigError as error:
                print(f"train_throughput: {error}")
                return 2
    micro = dict(DEFAULT_MICRO)
    for item in filter(None, args.micro_batch.split(",")):
        name, _, value = item.partition("=")
        micro[name] = int(value)

    work = Path(tempfile.mkdtemp(prefix="tokenmill-bench-"))
    shards = args.shards or make_shards(work / "data", args.vocab, args.megabytes)
    results = []
    for preset in filter(None, args.presets.split(",")):
        ours = tokenmill_loop(shards, work / f"run-{preset}", preset, args, micro.get(preset, 8))
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        bare = bare_loop(ours.pop("config"), args, ours["flops_per_token"])
        overhead = bare["tokens_per_s"] / ours["tokens_per_s"] - 1
        results.append(
            {
                "preset": preset,
                "micro_batch": micro.get(preset, 8),
                "tokenmill": ours,
                "bare": bare,
                "overhead": overhead,
            }
        )
        planned = ours["planned_memory_gib"]
        memory_error = planned / ours["peak_memory_gib"] - 1 if torch.cuda.is_available() and planned else None
        results[-1]["plan_memory_error"] = memory_error

    print(render_table(results, args))
    if args.output:
        args.output.write_text(json.dumps(results, indent=2, default=str) + "\n")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
