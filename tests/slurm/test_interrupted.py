"""Runs stopped by SLURM continue from their last checkpoint and end as if never stopped.

A time limit (submitit catches SLURM's warning signal, requeues the job, and the run resumes
with `trainer.resume=true`) and a preemption (`scontrol requeue`: SLURM kills the job and
queues it again). A preempted run is compared with the same run done locally without
interruption, started at the same moment on the node's other core. The time-limited run, which
must train for a minute to outlive its limit, is checked for its starts and its resumption
only: SLURM's kill and the resumption from the checkpoint are the preempted run's, and a local
twin would spend another CPU-minute of the suite's two cores to show their equality again.
"""
from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

import pytest
from helpers import builtin_release, predictions, runs
from slurm_helpers import ON_SLURM, THREADS, finish, start_train, wait_for

from stability.core.jobrecord import read_job_record
from stability.core.runrecord import RunDir

# The built-in English training pairs repeated (each copy with its own idx), so that an epoch takes seconds.
REPEAT = 16
# The limit: slurmctld checks time limits every 30 s (its PERIODIC_TIMEOUT) and signals a job at the
# first check at most signal_delay_s + 30 s before its limit (seen here: on a 30-s grid). With a
# 1-minute limit and signal_delay_s=1, that is the first check 29 s or more into a start: 29-59 s
# into the first, and ~54 s into each later one, which SLURM starts a few seconds after the check
# that signalled the one before. A run that trains for longer than any first start lives (59 s, its
# start-up aside) trains in two starts at least, and each start lives 29 s or more: never only its
# start-up (with signal_delay_s=20 every start was signalled at the next check: a busy CI machine
# once ran out of 10 timeouts in starts of 2-3 epochs each; max_num_timeout stays generous).
TIME_LIMITED_TRAINING_S = 60
LIMIT = ["hydra.launcher.timeout_min=1", "hydra.launcher.signal_delay_s=1", "hydra.launcher.max_num_timeout=10"]
# A preempted run outlives SLURM's kill: KillWait (5 s) after the requeue, which the test asks for
# at the run's first checkpoint.
PREEMPTED_TRAINING_S = 20
_STARTED = "Starting with JobEnvironment"
_EPOCH = re.compile(r"\] epoch (\d+): loss")


@pytest.fixture(scope="module")
def long_data(tmp_path_factory) -> Path:
    root = builtin_release(tmp_path_factory.mktemp("data"), ["en"])
    train = root / "RTE" / "train.jsonl"
    rows = [json.loads(line) for line in train.read_text(encoding="utf-8").splitlines() if line.strip()]
    train.write_text("".join(json.dumps({**row, "idx": f"{copy}-{row['idx']}"}) + "\n"
                             for copy in range(REPEAT) for row in rows), encoding="utf-8")
    return root


def _args(data: Path, epochs: int, out: Path) -> list[str]:
    return ["experiment=smoke", "data.source=files", f"data.root={data}", "seed=0", "trainer.resume=true",
            f"trainer.max_epochs={epochs}", f"trainer.patience={epochs}", f"paths.output_dir={out}"]


@pytest.fixture(scope="module")
def epoch_seconds(long_data, tmp_path_factory, slurm_cluster) -> float:
    """One epoch's CPU time on one thread (as the runs below get), from two local runs of 1 and 4
    epochs: the difference of their CPU time over 3. The runs are sized from it, so that they outlive
    their limit however fast the machine is when they train: on one thread an epoch takes at least
    its CPU time. (Sized from an epoch's wall time under the suite's load, a run once trained faster
    than that estimate in a quieter moment and ended before its limit.)"""
    work = tmp_path_factory.mktemp("calibration")
    spent = []
    for epochs in (1, 4):
        process = start_train(_args(long_data, epochs, work / f"out{epochs}"), work, {**os.environ, **THREADS})
        result = finish(process)
        assert result.returncode == 0, result.stderr
        spent.append(process.cpu_seconds)
    return (spent[1] - spent[0]) / 3


def _job_logs(run: Path, stream: str) -> str:
    """submitit's stdout or stderr log of the SLURM job that ran `run` (named in its job record)."""
    job = read_job_record(run).slurm_job
    sweep = next(folder for folder in run.parents if (folder / ".submitit").is_dir())
    (log,) = (sweep / ".submitit" / job).glob(f"*_log.{stream}")
    return log.read_text()


def _attempts(job_log: str) -> list[list[int]]:
    """The epochs each start of a SLURM job logged, from submitit's stdout log of the job."""
    return [[int(n) for n in _EPOCH.findall(part)] for part in job_log.split(_STARTED)[1:]]


def _start_on_slurm(data: Path, epochs: int, tmp_path: Path, env: dict[str, str], launcher: list[str]):
    """The run started on SLURM, into tmp_path/slurm."""
    return start_train([*_args(data, epochs, tmp_path / "slurm"), *ON_SLURM, *launcher], tmp_path, env)


def _run_both(data: Path, epochs: int, tmp_path: Path, env: dict[str, str], launcher: list[str]):
    """The run on SLURM and the same run locally, started together; SLURM's process first."""
    on_slurm = _start_on_slurm(data, epochs, tmp_path, env, launcher)
    local = start_train(_args(data, epochs, tmp_path / "local"), tmp_path, env)
    return on_slurm, local


def _assert_resumed(tmp_path: Path, epochs: int, on_slurm) -> tuple[Path, list[list[int]]]:
    """The SLURM run's folder and the epochs each start of its job logged, once it ended: every epoch
    trained once, in two starts at least, each later one resumed after the epochs checkpointed before it."""
    done = finish(on_slurm)
    assert done.returncode == 0, done.stderr
    (name,) = runs(tmp_path / "slurm")
    run = tmp_path / "slurm" / name
    assert runs(tmp_path / "slurm")[name]["epochs_trained"] == epochs
    assert [entry["epoch"] for entry in RunDir(run).read_train_log()] == list(range(1, epochs + 1))
    job_log = _job_logs(run, "out")
    attempts = _attempts(job_log)
    trained = [epochs_of_a_start for epochs_of_a_start in attempts if epochs_of_a_start]
    assert len(trained) >= 2, job_log
    # every later start resumed after the epochs checkpointed before it: none began at epoch 1
    assert trained[0][0] == 1 and all(later[0] > 1 for later in trained[1:]), attempts
    assert trained[-1][-1] == epochs
    return run, attempts


def _assert_resumed_and_equal(tmp_path: Path, epochs: int, on_slurm, local) -> list[list[int]]:
    """`_assert_resumed`, and the SLURM run's predictions those of the same run trained locally at once."""
    run, attempts = _assert_resumed(tmp_path, epochs, on_slurm)
    assert finish(local).returncode == 0
    assert predictions(run) == predictions(tmp_path / "local" / run.relative_to(tmp_path / "slurm"))
    return attempts


def test_run_past_its_time_limit_is_requeued_and_resumes(tmp_path, slurm_env, long_data, epoch_seconds):
    epochs = max(20, math.ceil(TIME_LIMITED_TRAINING_S / epoch_seconds))
    run = _assert_resumed(tmp_path, epochs, _start_on_slurm(long_data, epochs, tmp_path, slurm_env, LIMIT))[0]
    assert "this job is timed-out" in _job_logs(run, "err")


def test_preempted_run_resumes(tmp_path, slurm_env, slurm_cluster, long_data, epoch_seconds):
    epochs = max(10, math.ceil(PREEMPTED_TRAINING_S / epoch_seconds))
    on_slurm, local = _run_both(long_data, epochs, tmp_path, slurm_env, [])

    def checkpointed() -> Path | None:
        found = [RunDir(log.parent) for log in (tmp_path / "slurm").rglob("train_log.jsonl")]
        return found[0].path if found and found[0].checkpoint_path.is_file() else None

    run = wait_for(checkpointed, "the first checkpoint of the SLURM run", timeout=300, every=0.2)
    slurm_cluster.run("scontrol", "requeue", read_job_record(run).slurm_job)
    attempts = _assert_resumed_and_equal(tmp_path, epochs, on_slurm, local)
    assert len(attempts) == 2
    assert "Bypassing signal SIGTERM" in _job_logs(run, "err")  # SLURM's kill, survived by the checkpoint


def test_a_preempted_fused_group_is_trained_again_whole_and_ends_as_if_never_stopped(
        tmp_path, slurm_env, slurm_cluster, long_data, epoch_seconds):
    """A fused group keeps no checkpoint: requeued, its array task trains the whole group again from its
    start (its members' stale locks broken as the same SLURM job's), to the uninterrupted predictions."""
    epochs = max(3, math.ceil(PREEMPTED_TRAINING_S / 2 / epoch_seconds))   # two members: ~twice an epoch's work
    fused = ["seed=0..1", "trainer.fuse_seeds=2"]
    on_slurm = start_train([*_args(long_data, epochs, tmp_path / "slurm"), *fused, *ON_SLURM], tmp_path,
                           slurm_env)
    local = start_train([*_args(long_data, epochs, tmp_path / "local"), *fused], tmp_path, slurm_env)
    started = wait_for(lambda: next((tmp_path / "slurm").rglob("seed0/train_log.jsonl"), None),
                       "the fused group to start training on SLURM", timeout=300, every=0.2)
    job = read_job_record(started.parent).slurm_job
    slurm_cluster.run("scontrol", "requeue", job)
    done = finish(on_slurm)
    assert done.returncode == 0, done.stderr
    assert finish(local).returncode == 0
    names = sorted(runs(tmp_path / "slurm"))
    assert [name.rsplit("/", 1)[-1] for name in names] == ["seed0", "seed1"]
    assert sorted(runs(tmp_path / "local")) == names
    for name in names:
        assert predictions(tmp_path / "slurm" / name) == predictions(tmp_path / "local" / name)
        assert runs(tmp_path / "slurm")[name]["fused_with"] == [0, 1]
    job_log = _job_logs(tmp_path / "slurm" / names[0], "out")
    assert job_log.count(_STARTED) == 2, job_log   # one task, started twice: the group trained whole again
