"""Tiny token shards and a CPU-sized training config shared by the training and flow tests."""

from __future__ import annotations

from pathlib import Path

from pipeline.tokenize.config import TokenizeConfig
from tests.helpers.tokenize import write_run
from training.config import TrainConfig

STEPS = 16
# the tiny preset shrunk further: 2 layers × 64, GQA 4/2 — a 113k-parameter Llama at a 320-token vocabulary
SHRINK = {
    "hidden_size": 64,
    "intermediate_size": 176,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
}


def make_shards(root: Path, vocab: int = 300, seed: int = 8) -> Path:
    from pipeline.tokenize import run_tokenize

    write_run(root, {"web": 120, "finance": 60}, seed=4)
    config = TokenizeConfig(vocab_size=vocab, tasks=1, workers=1, heldout_share=0.1, seed=seed)
    run_tokenize(root, root / "shards", config)
    return root / "shards"


def config(shards: Path, output: Path, **changes) -> TrainConfig:
    values = {
        "shards": str(shards),
        "output": str(output),
        "model": "tiny",
        "model_overrides": SHRINK,
        "seq_len": 32,
        "micro_batch": 8,
        "global_batch_tokens": 512,  # two micro-batches accumulated per step
        "max_steps": STEPS,
        "decay_steps": STEPS,
        "lr": 3e-3,
        "log_every": 1,
        "eval_every": 8,
        "eval_batches": 2,
        "ckpt_every": 4,
        "keep_last": 2,
        "cpu_threads": 1,
        "tensorboard": False,
    }
    values.update(changes)
    return TrainConfig.model_validate(values)
