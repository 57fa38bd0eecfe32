"""Accelerator table: peak dense bf16 tensor throughput and memory per device.

Peak figures are the vendors' dense numbers (without 2:4 sparsity, which datasheets often quote by
default at twice the value); MFU is measured against them. Memory is what the framework can address:
vendors' "80 GB"/"141 GB" are in practice GiB (nvidia-smi reports 81,559 MiB on an H100 80GB and
143,771 MiB on an H200), so the table keeps them as GiB.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.errors import TokenmillError

GIB = 1024**3


@dataclass(frozen=True)
class GPU:
    name: str
    bf16_tflops: float  # peak dense bf16 tensor-core TFLOP/s
    memory_gib: float
    note: str = ""

    @property
    def peak_flops(self) -> float:
        return self.bf16_tflops * 1e12

    @property
    def memory_bytes(self) -> int:
        return int(self.memory_gib * GIB)


GPUS: dict[str, GPU] = {
    gpu.name: gpu
    for gpu in (
        GPU("A100-40GB", 312.0, 40, "SXM4/PCIe"),
        GPU("A100-80GB", 312.0, 80, "SXM4/PCIe"),
        GPU("H100-SXM", 989.4, 80, "SXM5, 700 W"),
        GPU("H100-PCIe", 756.0, 80),
        GPU("H100-NVL", 835.0, 94),
        GPU("H200", 989.4, 141, "SXM; docs/reference.md measured ~800 TFLOP/s on dense bf16 matmuls"),
        GPU("B200", 2250.0, 180, "HGX B200, 1000 W"),
        GPU("L40S", 362.05, 48),
        GPU("L4", 121.0, 24),
        GPU("RTX-4090", 165.2, 24, "bf16 with fp32 accumulate"),
        GPU("MI300X", 1307.4, 192, "AMD"),
    )
}

# short names people type
_ALIASES = {"a100": "A100-80GB", "h100": "H100-SXM", "b200": "B200", "4090": "RTX-4090"}


class UnknownGPUError(TokenmillError, ValueError):
    """A GPU name not in the table; the message lists the known ones."""


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def get_gpu(name: str) -> GPU:
    """Look a GPU up by name, ignoring case and punctuation (``h100_sxm``, ``H100 SXM``, ``h100``)."""
    wanted = _key(name)
    for gpu_name, gpu in GPUS.items():
        if _key(gpu_name) == wanted:
            return gpu
    for alias, gpu_name in _ALIASES.items():
        if _key(alias) == wanted:
            return GPUS[gpu_name]
    raise UnknownGPUError(f"unknown GPU {name!r}; known: {', '.join(GPUS)}")


def gpu_from_name(device_name: str, memory_gib: float) -> str | None:
    """``NVIDIA H100 80GB HBM3`` → ``H100-SXM``; None for a device the GPU table does not know."""
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


def detect_gpu() -> str | None:
    """The GPU table's name for CUDA device 0, or None without CUDA (or for a device the table lacks)."""
    import torch

    if not torch.cuda.is_available():
        return None
    return gpu_from_name(torch.cuda.get_device_name(0), torch.cuda.get_device_properties(0).total_memory / GIB)
