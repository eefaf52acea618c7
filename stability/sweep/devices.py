"""Where a job of a sweep runs when many run at once.

Three ways to run many jobs (conf/hydra/launcher/):

- `hydra/launcher=local_gpus` (joblib): several jobs at once on this machine. Job k prefers
  GPU k mod n (n visible GPUs) and takes the next free one when another job holds it, so
  jobs of unequal length (early stopping) do not pile up on one GPU. The GPU is chosen with
  `torch.cuda.set_device`, not CUDA_VISIBLE_DEVICES: joblib's loky workers are reused for
  later jobs, and CUDA reads CUDA_VISIBLE_DEVICES only once per process. accelerate's device
  for a single process is the index-less `cuda`, i.e. the current device, so it follows.
  Packed runs: with `hydra.launcher.jobs_per_device=k` each GPU has k slots (a small encoder
  at batch size 4 leaves a GPU mostly idle); a job takes a free slot, every GPU's first slot
  before any second one. Without GPUs k jobs share the CPU and each gets cores / k torch
  threads (small batches gain little from more threads, and two processes on one core's
  worth of threads each beat one on all of them).
- `hydra/launcher=slurm` (submitit): SLURM gives each job its own GPU, or a share of one
  (`gres: shard:1` where the cluster configures GPU sharding); nothing to do here.
- `accelerate launch`: one run over several processes; see `stability.finetune.distributed`.
"""
from __future__ import annotations

import fcntl
import logging
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Mapping, Sequence

from hydra.core.hydra_config import HydraConfig
from omegaconf import OmegaConf

from stability.finetune.distributed import launch_world_size

log = logging.getLogger(__name__)


def device_preference(job_num: int, n_devices: int) -> list[int]:
    """Device indices in the order job `job_num` tries them: k mod n first, then the next ones."""
    first = job_num % n_devices
    return [(first + offset) % n_devices for offset in range(n_devices)]


def gpu_names(count: int, env: Mapping[str, str] = os.environ) -> list[str]:
    """Machine-wide names of the `count` visible GPUs (CUDA_VISIBLE_DEVICES entries, else 0..count-1).

    Index i of torch is entry i of CUDA_VISIBLE_DEVICES; the entry names the physical GPU, so
    jobs started with different CUDA_VISIBLE_DEVICES still agree on which GPU is busy.
    """
    visible = [entry.strip() for entry in env.get("CUDA_VISIBLE_DEVICES", "").split(",") if entry.strip()]
    return visible[:count] if len(visible) >= count else [str(i) for i in range(count)]


def default_lock_dir() -> Path:
    """Per user and machine (never on a shared file system: GPU 0 of two hosts are two GPUs)."""
    return Path(tempfile.gettempdir()) / f"nli-stability-gpu-locks-{os.getuid()}"


@contextmanager
def claim_first_free(names: Sequence[str], lock_dir: Path) -> Iterator[int]:
    """Hold an exclusive lock on the first of `names` nobody holds and yield its position.

    When every name is held, yield 0 without a lock: sharing the preferred device beats
    waiting. The operating system drops the lock if the process dies.
    """
    lock_dir.mkdir(parents=True, exist_ok=True)
    for position, name in enumerate(names):
        handle = (lock_dir / f"{name.replace(os.sep, '_')}.lock").open("a")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            continue
        with handle:  # closing the file releases the lock
            yield position
        return
    yield 0


def launcher_jobs_per_device() -> int | None:
    """`hydra.launcher.jobs_per_device` of the running Hydra job (local_gpus only), else None."""
    if not HydraConfig.initialized():
        return None
    return OmegaConf.select(HydraConfig.get(), "launcher.jobs_per_device", default=None)


def device_slots(names: Sequence[str], order: Sequence[int], per_device: int) -> list[tuple[int, str]]:
    """(device index, lock name) in the order a job tries them: the first slot of every device
    in its preference order, then the second slots, and so on."""
    return [(index, f"{names[index]}.{slot}") for slot in range(per_device) for index in order]


def split_cpu(jobs_per_device: int, cores: int | None = None) -> int:
    """Torch threads for each of `jobs_per_device` jobs sharing this machine's cores."""
    import torch

    cores = cores or len(os.sched_getaffinity(0))
    threads = max(1, cores // jobs_per_device)
    torch.set_num_threads(threads)
    log.info("%d jobs share %d CPU cores: %d torch threads each", jobs_per_device, cores, threads)
    return threads


@contextmanager
def job_device(job_num: int, lock_dir: Path | None = None,
               jobs_per_device: int | None = None) -> Iterator[str | None]:
    """Run job `job_num` on one GPU when several are visible, or on a slot of one when jobs are
    packed (see the module docstring); `jobs_per_device` defaults to the launcher's.

    Yields the chosen GPU's name, or None when there is nothing to choose: no or one GPU
    without packing, or a process of a multi-process run, which accelerate places itself.
    """
    if launch_world_size() > 1:
        yield None
        return
    import torch

    per_device = jobs_per_device if jobs_per_device is not None else launcher_jobs_per_device()
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if count == 0 and per_device is not None:
        split_cpu(per_device)
    if count == 0 or (count == 1 and per_device is None):
        yield None
        return
    names = gpu_names(count)
    slots = device_slots(names, device_preference(job_num, count), per_device or 1)
    with claim_first_free([lock for _, lock in slots], lock_dir or default_lock_dir()) as position:
        index = slots[position][0]
        torch.cuda.set_device(index)
        yield names[index]
