"""FP8 and tensor parallelism (issue 15, part A): what the config accepts, what a machine without the hardware
refuses and why, which layers FP8 keeps in bf16, the plan's memory under TP, and TP itself on two CPU processes
(gloo): the split model trains step for step like the whole one."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import flows  # noqa: F401  (hub offline)
from tests.helpers.train import config, make_shards
from training.config import TrainConfigError, load_train_config
from training.models import count_params, load_shape
from training.parallel import accelerator_kwargs, fp8_module_filter, fp8_problems
from training.plan.hardware import Hardware
from training.plan.memory import estimate_memory, tp_local_params
from training.train import run_training
from training.units import PlanError

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def shards(tmp_path_factory) -> Path:
    return make_shards(tmp_path_factory.mktemp("fp8tp"))


def test_fp8_and_tp_configs_validate_and_bad_combinations_are_refused(tmp_path) -> None:
    path = tmp_path / "train.yaml"
    path.write_text("shards: s\noutput: o\nmodel: 1b\nprecision: fp8\ncompile: true\n", encoding="utf-8")
    assert load_train_config(path).precision == "fp8"
    assert load_train_config(None, {"shards": "s", "output": "o", "tp_size": 2}).tp_size == 2
    with pytest.raises(TrainConfigError, match="precision: Input should be 'auto', 'bf16', 'fp32' or 'fp8'"):
        load_train_config(None, {"shards": "s", "output": "o", "precision": "fp4"})
    with pytest.raises(TrainConfigError, match="fp8 with tp_size > 1"):
        load_train_config(None, {"shards": "s", "output": "o", "precision": "fp8", "tp_size": 2})
    with pytest.raises(TrainConfigError, match="tp_size > 1 with strategy fsdp"):
        load_train_config(None, {"shards": "s", "output": "o", "strategy": "fsdp", "tp_size": 2})
    with pytest.raises(TrainConfigError, match="tp_size: Input should be greater than or equal to 1"):
        load_train_config(None, {"shards": "s", "output": "o", "tp_size": 0})


@pytest.mark.skipif(not fp8_problems(), reason="this machine can train in FP8")
def test_fp8_is_refused_with_every_reason_where_it_cannot_run(shards, tmp_path) -> None:
    import torch

    with pytest.raises(TrainConfigError) as caught:
        run_training(config(shards, tmp_path / "run", precision="fp8"))
    message = str(caught.value)
    assert message.startswith("precision: fp8 cannot run here: ")
    assert message.endswith("Use precision: bf16 (or auto) instead")
    if not torch.cuda.is_available():
        assert "no CUDA device" in message and "compute capability ≥ 8.9" in message
    if importlib.util.find_spec("torchao") is None:
        assert "torchao is not installed" in message and "pip install torchao" in message
    assert not (tmp_path / "run" / "checkpoints").exists()  # refused before anything was built or written


def test_fp8_keeps_the_first_and_last_decoder_layers_and_the_head_in_bf16() -> None:
    import torch
    from transformers import AutoModelForCausalLM, LlamaConfig

    layers = 4
    model = AutoModelForCausalLM.from_config(
        LlamaConfig(
            vocab_size=256,
            hidden_size=64,
            intermediate_size=128,
            num_hidden_layers=layers,
            num_attention_heads=4,
            num_key_value_heads=2,
        )
    )
    convert = fp8_module_filter(layers)
    linears = {name: m for name, m in model.named_modules() if isinstance(m, torch.nn.Linear)}
    converted = {name for name, module in linears.items() if convert(module, name)}
    kept = set(linears) - converted
    assert converted and all(name.startswith(("model.layers.1.", "model.layers.2.")) for name in converted)
    assert len(converted) == 2 * 7  # q, k, v, o, gate, up, down of the two middle layers
    assert (
        "lm_head" in kept
        and {n for n in kept if n.startswith("model.layers.0.")}
        and {n for n in kept if n.startswith("model.layers.3.")}
    )
    odd = torch.nn.Linear(64, 40)  # 40 is not a multiple of 16: torch._scaled_mm cannot take it
    assert not convert(odd, "model.layers.1.mlp.up_proj")
    assert not convert(torch.nn.Embedding(8, 16), "model.layers.1.embed")
    assert accelerator_kwargs("bf16", 1, layers) == {"mixed_precision": "bf16"}
    assert accelerator_kwargs("fp32", 1, layers) == {"mixed_precision": "no"}


def test_plan_memory_divides_what_tensor_parallelism_splits() -> None:
    shape = load_shape("7b")
    params = count_params(shape).total
    whole = estimate_memory(params, shape, Hardware(gpu="H200", micro_batch=1, seq_len=2048))
    split = estimate_memory(params, shape, Hardware(gpu="H200", gpus=2, tp_size=2, micro_batch=1, seq_len=2048))
    norms = (2 * shape.num_layers + 1) * shape.hidden_size
    assert tp_local_params(params, shape, 2) == (params - norms) / 2 + norms
    for state in ("weights_fp32", "grads_fp32", "adam_fp32"):
        assert split.breakdown[state] == pytest.approx(whole.breakdown[state] * (params + norms) / params / 2)
    # the activations between the split matmuls halve, the norms/residual/logits do not
    assert whole.breakdown["activations"] / 2 < split.breakdown["activations"] < whole.breakdown["activations"]
    assert split.breakdown["logits"] == whole.breakdown["logits"]
    assert split.tp_size == 2 and split.per_gpu_bytes < whole.per_gpu_bytes
    # four GPUs as two TP groups of two: ZeRO-1 shards Adam over the 2 data-parallel ranks, not over 4
    zero1 = estimate_memory(params, shape, Hardware(gpu="H200", gpus=4, tp_size=2, strategy="zero1"))
    assert zero1.breakdown["adam_fp32"] == pytest.approx(split.breakdown["adam_fp32"] / 2)
    with pytest.raises(PlanError, match="tp_size: 2 does not divide the 3 GPUs"):
        Hardware(gpus=3, tp_size=2)


def test_tensor_parallel_on_the_cpu_is_refused_with_the_reason(shards, tmp_path) -> None:
    with pytest.raises(TrainConfigError, match=r"tp_size: 2 needs CUDA GPUs: accelerate accepts a ParallelismConfig"):
        run_training(config(shards, tmp_path / "run", tp_size=2))


def test_two_gloo_processes_train_the_split_model_like_the_whole_one(tmp_path) -> None:
    """The TP pieces tokenmill adds (transformers' tp_plan, the mixed DTensor/Tensor grad clip, the fused AdamW
    groups) on two CPU processes, against the whole model in this process: same losses and grad norms. accelerate
    itself refuses a ParallelismConfig on CPU processes, which the worker records (why the CPU run is refused)."""
    from tests.training.tp_worker import reference

    out = tmp_path / "tp.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]
    done = subprocess.run(
        [*command, str(ROOT / "tests" / "training" / "tp_worker.py"), str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text(encoding="utf-8"))
    assert "DistributedType.MULTI_CPU" in result["accelerate_error"]
    assert "lm_head.weight" in result["sharded"] and "model.embed_tokens.weight" in result["sharded"]
    assert not any("norm" in name for name in result["sharded"])
    whole = reference()
    assert len(result["rows"]) == len(whole)
    for (loss, norm), (loss_ref, norm_ref) in zip(result["rows"], whole, strict=True):
        assert loss == pytest.approx(loss_ref, rel=1e-4)
        assert norm == pytest.approx(norm_ref, rel=1e-3)
    assert all(norm > 0.5 for _loss, norm in whole)  # clipping acted on every step: the clip itself is compared


def test_throughput_benchmark_smoke_prints_both_loops_overhead_and_memory_in_one_table(tmp_path, capsys) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import train_throughput

    out = tmp_path / "bench.json"
    assert train_throughput.main(["--smoke", "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    header = next(line for line in printed.splitlines() if line.lstrip().startswith("preset"))
    for column in ("tokenmill tok/s", "bare tok/s", "overhead", "MFU", "peak GiB", "plan GiB", "plan err"):
        assert column in header
    (row,) = json.loads(out.read_text(encoding="utf-8"))
    assert row["preset"] == "tiny" and row["tokenmill"]["tokens_per_s"] > 0 and row["bare"]["tokens_per_s"] > 0
    assert row["overhead"] == pytest.approx(row["bare"]["tokens_per_s"] / row["tokenmill"]["tokens_per_s"] - 1)
    assert row["plan_memory_error"] is None  # CPU: the plan's GPU memory does not apply


def test_the_gate_plans_a_tensor_parallel_run_as_one_data_parallel_rank(shards, tmp_path) -> None:
    from training.preflight import preflight

    checked = preflight(config(shards, tmp_path / "run", tp_size=2, gpu="H200"), world_size=2)
    resolved, memory = checked.config, checked.plan.memory
    assert memory.tp_size == 2 and memory.gpus == 2
    # both ranks read the same batches: the global batch of 512 tokens is 2 micro-batches of 8 × 32 on one
    # data-parallel rank, not one per GPU
    assert resolved.accumulation(1) == 2
    whole = preflight(config(shards, tmp_path / "run1", gpu="H200"), world_size=1).plan.memory
    assert memory.breakdown["weights_fp32"] < whole.breakdown["weights_fp32"]
