"""Running sweeps on the test cluster: the launcher overrides, background commands, polling."""
from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Callable

import pytest
from forked_cli import ForkedProcess

# A run is one array task on one of the node's two cores; one torch thread each, so the
# cluster runs two at once and a local reference run beside a SLURM one gets its own core
# (and the same thread count, hence the same floating-point results).
ON_SLURM = ["hydra/launcher=slurm", "hydra.launcher.gpus_per_node=null", "hydra.launcher.cpus_per_task=1",
            "hydra.launcher.mem_gb=2"]
THREADS = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def start_train(args: list[str], cwd: Path, env: dict[str, str]) -> ForkedProcess:
    """`python -m stability.train ARGS` in the background, its output kept for the asserts."""
    return ForkedProcess("stability.train", args, cwd, env)


def finish(process: ForkedProcess, timeout: float = 900) -> subprocess.CompletedProcess:
    return process.completed(timeout)


def on_slurm_and_locally(sweep: list[str], tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """`sweep` on SLURM into `tmp_path`/slurm and, at the same time, under the local launcher into
    `tmp_path`/local on the node's other core (one thread each: the same floating-point results);
    both must succeed. The SLURM command's result."""
    local = start_train([*sweep, f"paths.output_dir={tmp_path / 'local'}"], tmp_path, {**env, **THREADS})
    on_slurm = finish(start_train([*sweep, f"paths.output_dir={tmp_path / 'slurm'}", *ON_SLURM], tmp_path, env))
    assert on_slurm.returncode == 0, on_slurm.stderr
    assert finish(local).returncode == 0
    return on_slurm


def wait_for(condition: Callable[[], object], what: str, timeout: float = 600, every: float = 0.5) -> object:
    """Poll `condition` until it is truthy; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(every)
    pytest.fail(f"timed out waiting for {what}")
