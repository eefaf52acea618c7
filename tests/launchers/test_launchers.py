"""Many jobs at once: the device rule, the launcher presets, and real joblib/submitit sweeps."""
from __future__ import annotations

import os
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import NoReturn

import pytest
import torch
from helpers import QUICK, QUICK_VARIANT, runs
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate
from submitit.slurm.slurm import SlurmExecutor

from stability.core.config import CONF_DIR, jobs_for, local_job_count
from stability.core.errors import UserError
from stability.sweep.devices import (
    claim_first_free,
    device_preference,
    gpu_names,
    job_device,
)
from stability.core.overrides import prepare_argv


@pytest.mark.parametrize("job_num, n_devices, expected", [
    (0, 1, [0]),
    (0, 4, [0, 1, 2, 3]),
    (5, 4, [1, 2, 3, 0]),
    (3, 2, [1, 0]),
])
def test_device_preference_starts_at_job_number_mod_devices(job_num, n_devices, expected):
    assert device_preference(job_num, n_devices) == expected


def test_gpu_names_follow_cuda_visible_devices():
    assert gpu_names(2, {"CUDA_VISIBLE_DEVICES": "3, 5"}) == ["3", "5"]
    assert gpu_names(2, {"CUDA_VISIBLE_DEVICES": "GPU-a1,GPU-b2,GPU-c3"}) == ["GPU-a1", "GPU-b2"]
    assert gpu_names(3, {}) == ["0", "1", "2"]


def test_jobs_per_machine():
    assert jobs_for(n_gpus=4, n_cpus=64) == 4
    assert jobs_for(n_gpus=0, n_cpus=16) == 4
    assert jobs_for(n_gpus=0, n_cpus=2) == 1
    # packed: k per GPU, or k sharing the CPU
    assert jobs_for(n_gpus=4, n_cpus=64, jobs_per_device=3) == 12
    assert jobs_for(n_gpus=0, n_cpus=2, jobs_per_device=2) == 2
    with pytest.raises(UserError, match=r"hydra.launcher.jobs_per_device=0 is out of range"):
        jobs_for(n_gpus=1, n_cpus=2, jobs_per_device=0)


def test_a_busy_device_passes_the_job_to_the_next_free_one(tmp_path):
    with claim_first_free(["a", "b"], tmp_path) as first:
        with claim_first_free(["a", "b"], tmp_path) as second:
            with claim_first_free(["a", "b"], tmp_path) as third:
                assert (first, second, third) == (0, 1, 0)  # all busy: share the preferred one
    with claim_first_free(["a", "b"], tmp_path) as again:
        assert again == 0  # released


def test_job_device_on_several_gpus(tmp_path, monkeypatch):
    """No GPU here: torch sees three, and set_device records the choice."""
    chosen: list[int] = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 3)
    monkeypatch.setattr(torch.cuda, "set_device", chosen.append)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,5,6")
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    with job_device(4, tmp_path) as first, job_device(1, tmp_path) as second:
        assert (first, second) == ("5", "6")  # job 1 wanted index 1 too, which job 4 holds
    assert chosen == [1, 2]
    monkeypatch.setenv("WORLD_SIZE", "2")  # one process of a DDP run: accelerate places it
    with job_device(0, tmp_path) as gpu:
        assert gpu is None
    assert chosen == [1, 2]


def test_packed_jobs_fill_every_gpu_before_sharing_one(tmp_path, monkeypatch):
    chosen: list[int] = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.cuda, "set_device", chosen.append)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    with ExitStack() as jobs:
        names = [jobs.enter_context(job_device(job, tmp_path, jobs_per_device=2)) for job in (0, 2, 4, 6, 8)]
    # all prefer GPU 0: its first slot, GPU 1's first slot, then the second slots; then sharing
    assert names == ["0", "1", "0", "1", "0"] and chosen == [0, 1, 0, 1, 0]


def test_packed_jobs_split_the_cpu(tmp_path, monkeypatch):
    threads: list[int] = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch, "set_num_threads", threads.append)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)))
    with job_device(0, tmp_path, jobs_per_device=3) as gpu:
        assert gpu is None
    assert threads == [2]  # 8 cores // 3 jobs


def test_job_device_changes_nothing_on_cpu(tmp_path):
    if torch.cuda.is_available():
        pytest.skip("a machine with CUDA")
    with job_device(3, tmp_path) as gpu:
        assert gpu is None


def _hydra_config(overrides: list[str]):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose("train", overrides=overrides, return_hydra_config=True)


def test_local_gpus_preset_is_joblib_with_one_job_per_device():
    launcher = _hydra_config(["hydra/launcher=local_gpus"]).hydra.launcher
    assert launcher._target_.endswith("JoblibLauncher")
    assert launcher.backend == "loky" and launcher.n_jobs == local_job_count()
    assert _hydra_config(["hydra/launcher=local_gpus", "hydra.launcher.n_jobs=3"]).hydra.launcher.n_jobs == 3
    packed = _hydra_config(["hydra/launcher=local_gpus", "hydra.launcher.jobs_per_device=3"]).hydra.launcher
    assert packed.n_jobs == local_job_count(3)
    # joblib gets its own arguments only; the jobs read jobs_per_device from their Hydra config.
    # Compared by name: Hydra's plugin scan may execute a plugin module again (the editable
    # install and the repository both hold hydra_plugins/), making a second class object.
    bases = {f"{cls.__module__}.{cls.__qualname__}" for cls in type(instantiate(packed)).__mro__}
    assert "hydra_plugins.hydra_joblib_launcher.joblib_launcher.JoblibLauncher" in bases
    assert instantiate(packed).joblib["n_jobs"] == packed.n_jobs and "jobs_per_device" not in instantiate(packed).joblib


class _Submitted(Exception):
    """Raised instead of calling sbatch; carries the batch script."""


def test_slurm_preset_writes_a_valid_job_array(tmp_path, monkeypatch):
    """Hydra's submitit launcher up to the sbatch call, with fake SLURM tools."""
    def capture(self, script: Path) -> NoReturn:
        raise _Submitted(Path(script).read_text())

    monkeypatch.setattr(SlurmExecutor, "affinity", classmethod(lambda cls: 2))  # "srun is on PATH"
    monkeypatch.setattr(SlurmExecutor, "_make_submission_command", capture)
    cfg = _hydra_config(["hydra/launcher=slurm", "hydra.launcher.partition=gpu",
                         "hydra.launcher.timeout_min=90", f"paths.output_dir={tmp_path}"])
    launcher = instantiate(cfg.hydra.launcher)
    launcher.setup(hydra_context=None, task_function=None, config=cfg)
    with pytest.raises(_Submitted) as submitted:
        launcher.launch([["seed=0"], ["seed=1"], ["seed=2"]], initial_job_idx=0)
    script = str(submitted.value)
    for line in ("--partition=gpu", "--gpus-per-node=1", "--cpus-per-task=4", "--mem=32GB",
                 "--time=90", "--array=0-2%3", "--ntasks-per-node=1"):
        assert f"#SBATCH {line}\n" in script, script
    assert "-m submitit.core._submit" in script


def test_launcher_overrides_name_hydra_plugin_configs():
    assert prepare_argv(["hydra/launcher=submitit_slurm"], CONF_DIR) == ["hydra/launcher=submitit_slurm"]
    with pytest.raises(UserError, match=r"unknown hydra/launcher 'slurmm' .*joblib, local_gpus, slurm, "
                                        r"submitit_local, submitit_slurm"):
        prepare_argv(["hydra/launcher=slurmm"], CONF_DIR)


def _sweep(launcher: list[str], tmp_path: Path) -> tuple[dict[str, dict], int]:
    """Two seeds through `launcher`; the runs found and the pid of the launching process."""
    out = tmp_path / "outputs"
    command = [sys.executable, "-m", "stability.train", *QUICK, "seed=0..1", f"paths.output_dir={out}",
               *launcher]
    process = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    stdout, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr
    assert "Results in" in stdout  # the sweep table, printed once every job returned
    return runs(out), process.pid


@pytest.mark.slow
def test_joblib_runs_two_jobs_in_two_worker_processes(tmp_path):
    found, launcher_pid = _sweep(["hydra/launcher=local_gpus", "hydra.launcher.jobs_per_device=2"], tmp_path)
    assert sorted(found) == [f"smoke/en/rte/{QUICK_VARIANT}/seed0", f"smoke/en/rte/{QUICK_VARIANT}/seed1"]
    pids = {m["pid"] for m in found.values()}
    # two loky workers, neither of them the launching process: the jobs ran side by side
    assert len(pids) == 2 and launcher_pid not in pids
    # packed on the CPU: the cores split between the two jobs
    cores = len(os.sched_getaffinity(0))
    for name in found:
        log = (tmp_path / "outputs" / name / "train.log").read_text()
        assert f"2 jobs share {cores} CPU cores: {max(1, cores // 2)} torch threads each" in log


@pytest.mark.slow
def test_submitit_local_sweep_completes_every_run(tmp_path):
    found, launcher_pid = _sweep(["hydra/launcher=submitit_local"], tmp_path)
    assert sorted(found) == [f"smoke/en/rte/{QUICK_VARIANT}/seed0", f"smoke/en/rte/{QUICK_VARIANT}/seed1"]
    assert [m["seed"] for m in found.values()] == [0, 1]
    assert all(m["epochs_trained"] == 2 for m in found.values())
    assert launcher_pid not in {m["pid"] for m in found.values()}
    # the resolver behind ${setup} worked in the submitit processes: run paths carry the setup
    assert {m["setup"] for m in found.values()} == {"rte"}
