"""This process's place in a multi-process launch (`accelerate launch`, torchrun, MPI).

Why in core: the job wrapper (`core.command`) and the run lock (`core.runlock`) must know
whether this process is the main one, which alone records the job and holds the run.
"""
from __future__ import annotations

import os
from typing import Mapping, Sequence

# The variables accelerate reads for a process's global rank and the number of processes,
# set by torchrun (accelerate launch) or MPI.
_RANK_VARIABLES = ("RANK", "OMPI_COMM_WORLD_RANK", "MV2_COMM_WORLD_RANK", "PMI_RANK")
_WORLD_SIZE_VARIABLES = ("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE", "PMI_SIZE")


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


def launch_id(env: Mapping[str, str] = os.environ) -> str | None:
    """What every process of one launch shares and no other live launch has: its rendezvous
    address (MASTER_ADDR:MASTER_PORT); None when launched alone."""
    if launch_world_size(env) < 2:
        return None
    return f"{env.get('MASTER_ADDR', '')}:{env.get('MASTER_PORT', '')}"
