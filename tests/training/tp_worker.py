"""A few optimizer steps of a small Llama, whole or split by ``training.parallel.tensor_parallel``.

``python -m torch.distributed.run --nproc_per_node 2 tests/training/tp_worker.py OUT.json`` runs the split model on gloo
(CPU) and, first, asks accelerate for a ``ParallelismConfig`` on these CPU processes (it refuses: the error is
recorded). ``reference()`` runs the whole model in one process; test_fp8_tp compares the two.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

STEPS = 4
MAX_NORM = 0.5  # small enough that clipping acts on every step, so the clip itself is compared


def build():
    import torch
    from transformers import AutoModelForCausalLM, LlamaConfig

    config = LlamaConfig(
        vocab_size=256,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=3,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=32,
        use_cache=False,
    )
    torch.manual_seed(0)
    return AutoModelForCausalLM.from_config(config, dtype=torch.float32, attn_implementation="sdpa")


def train(model, clip) -> list[list[float]]:
    from types import SimpleNamespace

    import torch

    from training.steps import make_optimizer as _optimizer

    # the loop's own optimizer: fused AdamW, decay and no-decay groups (fused AdamW refuses a group that mixes
    # DTensor and plain parameters; the groups split sharded matrices from replicated norms)
    hyper = SimpleNamespace(lr=1e-2, weight_decay=0.1, beta1=0.9, beta2=0.95, eps=1e-8)
    optimizer = _optimizer(model, hyper, torch.device("cpu"))
    generator = torch.Generator().manual_seed(1)
    rows = []
    for _ in range(STEPS):
        batch = torch.randint(0, 256, (4, 17), generator=generator)
        inputs, labels = batch[:, :-1].contiguous(), batch[:, 1:].contiguous()
        loss = model(input_ids=inputs, labels=labels, shift_labels=labels).loss
        loss.backward()
        norm = clip(model.parameters(), MAX_NORM)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        rows.append([loss.item(), float(norm)])
    return rows


def reference() -> list[list[float]]:
    import torch

    return train(build(), torch.nn.utils.clip_grad_norm_)


def main(out: str) -> None:
    import torch
    from accelerate import Accelerator
    from accelerate.parallelism_config import ParallelismConfig

    from training.parallel import clip_grad_norm, tensor_parallel

    torch.set_num_threads(1)
    try:
        Accelerator(cpu=True, parallelism_config=ParallelismConfig(tp_size=2))
        accelerate_error = None
    except ValueError as error:
        accelerate_error = str(error)
    model = tensor_parallel(build(), 2)
    from torch.distributed.tensor import DTensor

    sharded = sorted(name for name, p in model.named_parameters() if isinstance(p, DTensor))
    rows = train(model, clip_grad_norm)
    if torch.distributed.get_rank() == 0:
        result = {"rows": rows, "sharded": sharded, "accelerate_error": accelerate_error}
        Path(out).write_text(json.dumps(result), encoding="utf-8")
    torch.distributed.barrier()
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
