"""What the ``Accelerator`` of a run is built with beyond data parallelism: FP8 matmuls and tensor parallelism.

FP8 (``precision: fp8``): accelerate's ``mixed_precision="fp8"`` with the torchao backend (``AORecipeKwargs``):
``convert_to_float8_training`` swaps ``nn.Linear`` for torchao's ``Float8Linear`` (dynamic scaling, E4M3
forward / E5M2 gradients) inside ``accelerator.prepare``, and everything else runs under bf16 autocast. The
first and last decoder layers and the output head stay in bf16: FP8 there is what makes FP8 runs diverge in
practice (accelerate's own default keeps only the first and the last ``nn.Linear``, i.e. layer 0's q_proj and
the head, which leaves layer 0's k/v/o and MLP and the whole last layer in FP8; we keep whole layers). FP8
needs tensor cores that have it: compute capability 8.9 (Ada: L4, L40S, RTX 4090) or 9.0+ (Hopper: H100/H200;
Blackwell). torchao is imported only when FP8 is used, and a missing install is said so.

Tensor parallelism (``tp_size``): accelerate's ``ParallelismConfig(tp_size=N)`` builds the ``tp`` device mesh
and checks the model's TP degree in ``prepare``; the model is sharded by transformers' own ``tp_plan`` for the
architecture (``DistributedConfig(tp_size=N)`` → ``maybe_distribute_model``: column-parallel q/k/v/gate/up,
row-parallel o/down, vocabulary-parallel embedding and head, norms replicated). Every rank of the group sees
the same batch, so the data-parallel world is ``processes / tp_size`` (1 here: one group). accelerate accepts a
``ParallelismConfig`` only on multi-GPU (or FSDP2/DeepSpeed) launches; CPU processes (gloo) are refused by
accelerate itself, so on the CPU tokenmill refuses first, with the reason. Pipeline parallelism is out of
accelerate's reach (its ``pipeline_parallel_rank`` raises NotImplementedError): see docs/train.md.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    import torch

FP8_MIN_CAPABILITY = (8, 9)  # FP8 tensor cores: Ada (8.9), Hopper (9.0), Blackwell (10.0+)
FP8_KEEP_LAYERS = 1  # decoder layers kept in bf16 at each end
_LAYER = re.compile(r"(?:^|\.)layers\.(\d+)\.")


def fp8_problems() -> list[str]:
    """Why ``precision: fp8`` cannot run on this machine (empty when it can)."""
    import torch

    problems = []
    if not torch.cuda.is_available():
        problems.append(
            "this machine has no CUDA device; FP8 needs an NVIDIA GPU with FP8 tensor cores (compute capability "
            "≥ 8.9: L4, L40S, RTX 4090, H100, H200, B200)"
        )
    else:
        capability = torch.cuda.get_device_capability(0)
        if tuple(capability) < FP8_MIN_CAPABILITY:
            problems.append(
                f"{torch.cuda.get_device_name(0)} has compute capability {capability[0]}.{capability[1]}; FP8 "
                "tensor cores need ≥ 8.9 (L4, L40S, RTX 4090, H100, H200, B200)"
            )
    if importlib.util.find_spec("torchao") is None:
        problems.append("torchao is not installed (accelerate's FP8 backend here): pip install torchao")
    return problems


def check_fp8() -> None:
    """Refuse ``precision: fp8`` where it cannot run, naming every reason and the alternative."""
    from training.config import TrainConfigError

    problems = fp8_problems()
    if problems:
        raise TrainConfigError(
            "precision: fp8 cannot run here: " + "; ".join(problems) + ". Use precision: bf16 (or auto) instead"
        )


def fp8_module_filter(num_layers: int, keep: int = FP8_KEEP_LAYERS) -> Callable[[Any, str], bool]:
    """torchao's ``module_filter_fn``: True for the ``nn.Linear`` layers converted to FP8.

    Kept in bf16: the output head, every linear of the first and last ``keep`` decoder layers, and any
    linear whose dimensions are not multiples of 16 (``torch._scaled_mm`` needs them).
    """

    def convert(module: Any, fqn: str) -> bool:
        import torch

        if not isinstance(module, torch.nn.Linear):
            return False
        if module.in_features % 16 or module.out_features % 16:
            return False
        if fqn.split(".")[-1] == "lm_head":
            return False
        match = _LAYER.search(fqn + ".")
        if match is None:
            return False  # outside the decoder stack: nothing else in a Llama is a matmul worth converting
        index = int(match.group(1))
        return keep <= index < num_layers - keep

    return convert


def check_tp(tp_size: int, world: int, cuda: bool) -> None:
    """Refuse a tensor-parallel launch that accelerate (or tokenmill) cannot run, with the reason."""
    from training.config import TrainConfigError

    if tp_size == 1:
        return
    if not cuda:
        raise TrainConfigError(
            f"tp_size: {tp_size} needs CUDA GPUs: accelerate accepts a ParallelismConfig only on multi-GPU (or "
            "FSDP2/DeepSpeed) launches and refuses CPU processes (DistributedType.MULTI_CPU, gloo); train on GPUs "
            f"with `accelerate launch --num_processes {tp_size}`, or set tp_size: 1"
        )
    if world != tp_size:
        raise TrainConfigError(
            f"tp_size: {tp_size} must equal the launch's processes ({world}): tokenmill runs one tensor-parallel "
            "group; data parallelism across groups (FSDP2 × TP) is not wired yet"
        )


class AcceleratorKwargs(TypedDict, total=False):
    """The keywords of ``accelerate.Accelerator`` a run's precision and tensor parallelism set."""

    mixed_precision: str  # "no", "bf16" or "fp8"
    kwargs_handlers: list[Any]  # fp8: torchao's AORecipeKwargs
    parallelism_config: Any  # tp_size > 1: accelerate's ParallelismConfig


def accelerator_kwargs(precision: str, tp_size: int, num_layers: int) -> AcceleratorKwargs:
    """``Accelerator(**kwargs)`` for a run's precision (fp32/bf16/fp8) and tensor-parallel size."""
    kwargs: AcceleratorKwargs = {"mixed_precision": {"bf16": "bf16", "fp8": "fp8"}.get(precision, "no")}
    if precision == "fp8":
        from accelerate.utils import AORecipeKwargs  # raises ImportError without torchao: check_fp8 ran first

        kwargs["kwargs_handlers"] = [AORecipeKwargs(module_filter_func=fp8_module_filter(num_layers))]
    if tp_size > 1:
        from accelerate.parallelism_config import ParallelismConfig

        kwargs["parallelism_config"] = ParallelismConfig(tp_size=tp_size)
    return kwargs


def tensor_parallel(model: torch.nn.Module, tp_size: int) -> torch.nn.Module:
    """Shard ``model`` over the ``tp_size`` processes by transformers' ``tp_plan`` for its architecture.

    Called on every rank with the same, identically seeded weights (each keeps its slice). After it
    ``model.config.distributed_config.tp_size`` is what accelerate's ``prepare`` checks against its mesh.
    """
    if tp_size == 1:
        return model
    from transformers import PreTrainedModel
    from transformers.distributed import DistributedConfig

    assert isinstance(model, PreTrainedModel), "transformers' tp_plan shards a transformers model (build_model's)"
    config, _device_map, mesh = model.prepare_distribute_model(DistributedConfig(tp_size=tp_size))
    return model.maybe_distribute_model(model, config, mesh)


def clip_grad_norm(parameters: Iterable[torch.nn.Parameter], max_norm: float) -> torch.Tensor:
    """Clip the global gradient norm of a model mixing DTensor (sharded) and plain (replicated) parameters.

    Why not ``torch.nn.utils.clip_grad_norm_`` (accelerate's ``clip_grad_norm_`` calls it): its foreach norm
    refuses lists that mix ``DTensor`` and ``torch.Tensor`` (the replicated RMSNorm weights under transformers'
    plan), measured with torch 2.13. A DTensor's norm is reduced over its mesh (``full_tensor``), a replicated
    gradient counts once. Returns the norm before clipping.
    """
    import torch
    from torch.distributed.tensor import DTensor

    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return torch.zeros(())
    norms = []
    for grad in grads:
        norm = torch.linalg.vector_norm(grad.float() if not isinstance(grad, DTensor) else grad, 2)
        norms.append((norm.full_tensor() if isinstance(norm, DTensor) else norm).float())
    total = torch.linalg.vector_norm(torch.stack(norms), 2)
    scale = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for grad in grads:
        local = grad.to_local() if isinstance(grad, DTensor) else grad
        local.mul_(scale.to(local.dtype))
    return total
