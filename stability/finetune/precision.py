"""`trainer.mixed_precision=auto`: bf16 where the device that runs the run computes it natively,
float32 elsewhere.

bf16 pays only with hardware support: CUDA devices of compute capability 8.0 or more (A100, H100,
RTX 30xx on), and CPUs with AVX512-BF16 or AMX. Elsewhere torch emulates it, several times
slower than float32, so `auto` never chooses it there. What ran is recorded in the run's
`precision` (`core.runrecord`); a precision the device does not run (fp16 on a CPU) is refused
(`refuse_precision_not_run`).
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import torch

from stability.core.errors import UserError
from stability.core.runrecord import PRECISIONS
from stability.core.schemas.trainer import AUTO_PRECISION
from stability.finetune.distributed import launch_world_size

if TYPE_CHECKING:
    from accelerate import Accelerator

log = logging.getLogger(__name__)

BF16_CUDA_CAPABILITY = (8, 0)
# the CPU's bf16 instructions, by the `torch.cpu` probe that finds each
_CPU_BF16_CHECKS = {"avx512_bf16": "_is_avx512_bf16_supported", "amx": "_is_amx_tile_supported"}


def run_device(cpu: bool) -> torch.device:
    """The device accelerate runs this process on, known before the Accelerator is built.

    `PartialState` is accelerate's shared state: the Accelerator built afterwards reuses it, device
    included. `accelerate launch --cpu` sets ACCELERATE_USE_CPU, which the Accelerator reads but
    PartialState does not, so it is passed on here as the Accelerator would."""
    from accelerate import PartialState
    from accelerate.utils import parse_flag_from_env

    return PartialState(cpu=cpu or parse_flag_from_env("ACCELERATE_USE_CPU")).device


def forget_previous_precision() -> None:
    """Let this process's next Accelerator take another mixed precision than its last one.

    accelerate keeps one AcceleratorState per process and refuses a second mixed precision in
    it, but a sweep runs many jobs in one process (Hydra's basic launcher; the reused joblib
    workers of `local_gpus`), so `trainer.mixed_precision=no,bf16` failed at its first job of
    the other precision. accelerate has no public reset; `_reset_state` is what its own tests
    call. The PartialState (device, process group) is kept. Nothing is reset in a process of
    `accelerate launch`: those run one job each, and their state holds the process group."""
    if launch_world_size() > 1:
        return
    from accelerate.state import AcceleratorState

    AcceleratorState._reset_state()


def cpu_bf16_instructions() -> list[str]:
    """This CPU's bf16 instructions among AVX512-BF16 and AMX. torch tells only through private
    functions of `torch.cpu`, which a release may rename or drop: a missing one counts as no, so
    `auto` then trains in float32 rather than failing."""
    return [name for name, probe in _CPU_BF16_CHECKS.items() if getattr(torch.cpu, probe, lambda: False)()]


def cpu_bf16_supported() -> bool:
    """Whether this CPU has AVX512-BF16 or AMX (`cpu_bf16_instructions`)."""
    return bool(cpu_bf16_instructions())


def bf16_supported(device: torch.device) -> bool:
    """Whether `device` computes bf16 natively; other kinds of devices than CUDA GPUs and CPUs
    count as no (float32 is never the wrong answer, only the slower one)."""
    if device.type == "cuda":
        return torch.cuda.get_device_capability(device) >= BF16_CUDA_CAPABILITY
    return device.type == "cpu" and cpu_bf16_supported()


def resolve_mixed_precision(requested: str, device: torch.device) -> str:
    """accelerate's mixed_precision ("no", "fp16", "bf16") for `trainer.mixed_precision`: an
    explicit value as it is, `auto` as `device` supports it, said in one log line."""
    if requested != AUTO_PRECISION:
        return requested
    bf16 = bf16_supported(device)
    resolved = "bf16" if bf16 else "no"
    log.info("trainer.mixed_precision=auto: %s on %s (%s)", PRECISIONS[resolved], device, _reason(device, bf16))
    return resolved


def refuse_precision_not_run(requested: str, accelerator: Accelerator) -> None:
    """Refuse a mixed precision the accelerator will not run: accelerate turns fp16 off on a CPU
    without a word (its `native_amp` stays False) and trains in float32.

    Refused rather than recorded as float32 with a warning: the run's variant (`precision-fp16`,
    its folder) names the precision asked for, so a float32 run there would sit in a condition it
    did not run, beside true fp16 runs made on a GPU under the same name; refused, nothing is
    written and the fix names a precision that runs here."""
    if accelerator.mixed_precision != "no" and not accelerator.native_amp:
        raise UserError(f"trainer.mixed_precision={requested} does not run on {accelerator.device.type} "
                        f"(accelerate would train in float32)",
                        fix="trainer.mixed_precision=no trains in float32, trainer.mixed_precision=bf16 in bf16")


def refuse_fp16_without_gpu() -> None:
    """fp16 asked of jobs that run on this machine, which has no CUDA device: one line before any job
    starts, where `refuse_precision_not_run` would fail every job of the sweep one by one."""
    if not torch.cuda.is_available():
        raise UserError("trainer.mixed_precision=fp16 needs a CUDA GPU, and this machine, where the jobs run, has "
                        "none (accelerate would train in float32)",
                        fix="trainer.mixed_precision=no trains in float32, trainer.mixed_precision=bf16 in bf16; "
                            "or run the sweep where there is a GPU (hydra/launcher=slurm)")


def _reason(device: torch.device, bf16: bool) -> str:
    """What decided `auto` on `device`, for its log line."""
    if device.type == "cuda":
        major, minor = torch.cuda.get_device_capability(device)
        return f"compute capability {major}.{minor}; bf16 from {'.'.join(map(str, BF16_CUDA_CAPABILITY))}"
    if device.type == "cpu":
        return "the CPU has AVX512-BF16 or AMX" if bf16 else "the CPU has neither AVX512-BF16 nor AMX"
    return f"no bf16 check for {device.type} devices"
