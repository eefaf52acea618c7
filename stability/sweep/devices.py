"""Where a job of a sweep runs when many run at once.

Three ways to run many jobs (conf/hydra/launcher/):

- `hydra/launcher=local_gpus` (joblib): several jobs at once on this machine. Job k prefers
  GPU k mod n (n visible GPUs) and takes the next free one when another job holds it, so
  jobs of unequal length (early stopping) do not pile up on one GPU. The GPU is chosen with
  `torch.cuda.set_device`, not CUDA_VISIBLE_DEVICES: joblib's loky workers are reused for
  later jobs, and CUDA reads CUDA_VISIBLE_DEVICES only once per process. accelerate's device
  for a single process is the index-less `cuda`, i.e. the current device, so it follows.
  Without GPUs nothing changes; loky gives each worker cores / n_jobs threads.
- `hydra/launcher=slurm` (submitit): SLURM gives each job its own GPU; nothing to do here.
- `accelerate launch`: one run over several processes; see `stability.finetune.distributed`.
"""
from __future__ import annotations

import fcntl
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Mapping, Sequence

from stability.finetune.distributed import launch_world_size


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


@contextmanager
def job_device(job_num: int, lock_dir: Path | None = None) -> Iterator[str | None]:
    """Run job `job_num` on one GPU when several are visible (see the module docstring).

    Yields the chosen GPU's name, or None when there is nothing to choose: no or one GPU, or
    a process of a multi-process run, which accelerate places itself.
    """
    if launch_world_size() > 1:
        yield None
        return
    import torch

    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if count < 2:
        yield None
        return
    names = gpu_names(count)
    order = device_preference(job_num, count)
    with claim_first_free([names[i] for i in order], lock_dir or default_lock_dir()) as position:
        torch.cuda.set_device(order[position])
        yield names[order[position]]
