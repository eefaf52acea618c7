"""One run over several processes (`accelerate launch`): who writes, and how processes leave.

accelerate places each process; only rank 0 writes the run directory (Hydra's own files
included), and all processes leave together.
"""
from __future__ import annotations

import os
from typing import Mapping

from stability.core.ranks import launch_rank, launch_world_size

# Every rank composes the same run directory; only rank 0 may put .hydra/ and logs there.
NON_MAIN_RANK_OVERRIDES = ("hydra.output_subdir=null", "hydra/job_logging=disabled",
                           "hydra/hydra_logging=disabled")


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
