"""What this CPU can do, and the training settings that follow from it.

Why: the machines this project runs on have no GPU, and the same code runs on CPUs with native
bfloat16 (AVX512-BF16 / AMX: matrix products 5-8x faster than fp32) and on CPUs with only AVX2
(bfloat16 emulated, slower than fp32). ``train.precision: auto`` must pick bf16 on the first and
fp32 on the second, and the choice and its reason go into the training log and the manifest.
Every benchmark prints `describe()` beside its numbers.

`allocator_env` keeps glibc from returning the large (tens of MB) output-layer buffers to the
kernel after every use: without it each training step page-faults them in again, which cost about
a fifth of the step time of the 128-dim model (bench/train_speed.py).
"""

from __future__ import annotations

import platform
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

BF16_FLAGS = ("avx512_bf16", "amx_bf16")
SHOWN_FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_tile", "amx_bf16")


@dataclass(frozen=True)
class CpuInfo:
    model: str
    flags: frozenset[str]
    cores: int

    @property
    def native_bf16(self) -> bool:
        return any(f in self.flags for f in BF16_FLAGS)


@lru_cache(maxsize=1)
def cpu_info(cpuinfo: str | Path = "/proc/cpuinfo") -> CpuInfo:
    """Model name and feature flags from /proc/cpuinfo (Linux); elsewhere torch's own CPU probe."""
    import os

    path = Path(cpuinfo)
    model, flags = "", set()
    if path.is_file():
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition(":")
            key = key.strip()
            if key == "model name" and not model:
                model = value.strip()
            elif key == "flags" and not flags:
                flags = set(value.split())
    if not flags:
        flags = _torch_flags()
    return CpuInfo(model or platform.processor() or "unknown CPU", frozenset(flags), os.cpu_count() or 1)


def _torch_flags() -> set[str]:
    try:
        import torch

        probes = {"avx2": "_is_avx2_supported", "avx512f": "_is_avx512_supported",
                  "avx512_bf16": "_is_avx512_bf16_supported", "amx_tile": "_is_amx_tile_supported"}
        return {flag for flag, fn in probes.items() if getattr(torch.cpu, fn, lambda: False)()}
    except Exception:  # noqa: BLE001  (no torch, or a build without the probes: report no flags)
        return set()


def describe(info: CpuInfo | None = None) -> str:
    """One line for benchmark output: model, cores and the flags that matter for speed."""
    info = info or cpu_info()
    flags = " ".join(f"{f}={'yes' if f in info.flags else 'no'}" for f in SHOWN_FLAGS)
    return f"CPU: {info.model}, {info.cores} cores; {flags}"


def resolve_precision(requested: str, device: str, info: CpuInfo | None = None) -> tuple[str, str]:
    """(``fp32`` or ``bf16``, why) for ``train.precision`` on ``device``.

    ``auto`` is bf16 on a CPU with native bf16 and fp32 elsewhere (GPUs included: fairseq's own
    ``--fp16``/``--bf16`` are the GPU route). ``bf16`` is honored everywhere but warned about where
    it is emulated.
    """
    if requested not in ("auto", "fp32", "bf16"):
        raise ValueError(f"precision {requested!r}: choose auto, fp32 or bf16")
    if requested == "fp32":
        return "fp32", "train.precision is fp32"
    if device != "cpu":
        if requested == "bf16":
            return "bf16", f"train.precision is bf16 (autocast on {device})"
        return "fp32", f"train.precision auto: fp32 on {device}"
    info = info or cpu_info()
    if info.native_bf16:
        have = ", ".join(f for f in BF16_FLAGS if f in info.flags)
        return "bf16", f"{'train.precision auto' if requested == 'auto' else 'train.precision bf16'}: " \
                       f"this CPU has native bf16 ({have})"
    if requested == "bf16":
        return "bf16", ("train.precision bf16 on a CPU without avx512_bf16/amx_bf16: bf16 is emulated "
                        "and slower than fp32")
    return "fp32", "train.precision auto: fp32, this CPU has no avx512_bf16/amx_bf16 (bf16 would be emulated)"


def allocator_env() -> dict[str, str]:
    """glibc malloc settings for a training process: large buffers are reused, not unmapped."""
    return {"MALLOC_MMAP_MAX_": "0", "MALLOC_TRIM_THRESHOLD_": str(4 << 30)}
