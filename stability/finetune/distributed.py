"""One run over several processes (`accelerate launch`): who writes, and how processes leave.

accelerate places each process; only rank 0 writes the run directory (Hydra's own files
included), and all processes leave together.
"""
from __future__ import annotations

import os
from typing import Mapping, Sequence

# The variables accelerate reads for a process's global rank and the number of processes,
# set by torchrun (accelerate launch) or MPI.
_RANK_VARIABLES = ("RANK", "OMPI_COMM_WORLD_RANK", "MV2_COMM_WORLD_RANK", "PMI_RANK")
_WORLD_SIZE_VARIABLES = ("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE", "PMI_SIZE")
# Every rank composes the same run directory; only rank 0 may put .hydra/ and logs there.
NON_MAIN_RANK_OVERRIDES = ("hydra.output_subdir=null", "hydra/job_logging=disabled",
                           "hydra/hydra_logging=disabled")


def _first_int(env: Mapping[str, str], names: Sequence[str], default: int) -> int:
    for name in names:
        if env.get(name, "").strip():
            return int(env[name])
    return default


def launch_rank(env: Mapping[str, str] = os.environ) -> int:
    """This process's global rank under `accelerate launch`/torchrun/MPI; 0 when launched alone."""
    return _first_int(env, _RANK_VARIABLES, 0)


def launch_world_size(env: Mapping[str, str] = os.environ) -> int:
    """How many processes share this run; 1 when launched alone."""
    return _first_int(env, _WORLD_SIZE_VARIABLES, 1)


def rank_overrides(env: Mapping[str, str] = os.environ) -> list[str]:
    """Hydra overrides that keep a non-main rank from writing .hydra/ and logs into the run dir."""
    return [] if launch_rank(env) == 0 else list(NON_MAIN_RANK_OVERRIDES)


def cpu_only_distributed(env: Mapping[str, str] = os.environ) -> bool:
    """True for a multi-process launch on a machine without CUDA.

    accelerate joins such processes (gloo) only when told `cpu=True`; otherwise each one
    would train the whole run alone and all of them would write the same run directory.
    """
    if launch_world_size(env) < 2:
        return False
    import torch

    return not torch.cuda.is_available()


def leave_process_group() -> None:
    """End a multi-process run together: wait for every process, then close the group.

    A process that exits while the others still hold gloo/NCCL connections to it can be
    aborted at interpreter exit, and the launcher then fails the whole run.
    """
    if launch_world_size() < 2:
        return
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()
