"""One writer per run: the run lock (`stability.core.runlock`), its stale owners, the job wrapper
that leaves a held run alone, and two identical sweeps started one second apart into one folder."""
from __future__ import annotations

import json
import logging
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import QUICK
from omegaconf import OmegaConf

from stability.core import runlock
from stability.core.command import run_command
from stability.core.jobrecord import DONE, JOB_FILE, JobRecord, read_job_record, write_job_record
from stability.core.runlock import LockOwner, RunHeld, hold_run, read_owner
from stability.core.runrecord import RunDir
from stability.sweep import squeue
from stability.sweep.status import sweep_status

HOST = socket.gethostname()
LAUNCH = {"WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29512"}


def _dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


@pytest.fixture
def sleeper():
    """A live process of this host that is not this one."""
    process = subprocess.Popen(["sleep", "60"])
    yield process.pid
    process.kill()
    process.wait()


def _lock(run: Path, host: str, pid: int, age_s: float = 0, slurm_job: str | None = None,
          launch: str | None = None) -> None:
    """A lock as another process would have left it, its last heartbeat `age_s` seconds ago."""
    path = RunDir(run).lock_path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"host": host, "pid": pid, "started": "2026-01-01T00:00:00+00:00",
                                "slurm_job": slurm_job, "launch": launch}))
    stamp = time.time() - age_s
    os.utime(path, (stamp, stamp))


def test_the_lock_names_its_owner_and_goes_on_exit(tmp_path, monkeypatch):
    monkeypatch.setenv("SLURM_ARRAY_JOB_ID", "12")
    monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "3")
    run = tmp_path / "seed0"
    with hold_run(run):
        owner = read_owner(run)
        assert (owner.host, owner.pid, owner.slurm_job, owner.launch) == (HOST, os.getpid(), "12_3", None)
        assert owner.started and time.time() - owner.heartbeat < 60
        assert str(owner) == f"{HOST}:{os.getpid()} (SLURM job 12_3)"
    assert read_owner(run) is None
    for interrupt in (KeyboardInterrupt, ValueError):  # released on any way out
        with pytest.raises(interrupt), hold_run(run):
            raise interrupt
        assert read_owner(run) is None


def test_the_heartbeat_touches_the_lock(tmp_path, monkeypatch):
    monkeypatch.setattr(runlock, "HEARTBEAT_S", 0.05)
    run = tmp_path / "seed0"
    with hold_run(run):
        os.utime(RunDir(run).lock_path, (0, 0))
        time.sleep(0.5)
        assert time.time() - read_owner(run).heartbeat < 5


def test_a_live_owner_on_this_host_is_respected(tmp_path, sleeper):
    run = tmp_path / "seed0"
    _lock(run, HOST, sleeper, age_s=3600)  # its heartbeat does not matter: the process is there
    with pytest.raises(RunHeld, match=f"^held by {HOST}:{sleeper}$"), hold_run(run):
        pytest.fail("entered a held run")
    assert read_owner(run).pid == sleeper


def test_the_lock_of_a_dead_process_on_this_host_is_broken(tmp_path, caplog):
    run = tmp_path / "seed0"
    dead = _dead_pid()
    _lock(run, HOST, dead)
    with caplog.at_level(logging.WARNING, logger=runlock.__name__), hold_run(run):
        assert read_owner(run).pid == os.getpid()
    assert [record.getMessage() for record in caplog.records] == [
        f"[stale] {run}: broke the lock of {HOST}:{dead} (process {dead} is gone)"]
    assert list(run.iterdir()) == []


@pytest.mark.parametrize("age_s, held", [(3600, False), (10, True)])
def test_another_hosts_owner_without_slurm_is_judged_by_its_heartbeat(tmp_path, age_s, held):
    run = tmp_path / "seed0"
    _lock(run, "elsewhere", 123, age_s=age_s)
    owner = read_owner(run)
    assert (runlock.stale_reason(owner) is None) == held
    if held:
        with pytest.raises(RunHeld, match="^held by elsewhere:123$"), hold_run(run):
            pass
    else:
        with hold_run(run):
            assert read_owner(run).pid == os.getpid()


@pytest.mark.parametrize("queued, age_s, stale", [
    (False, 0, "SLURM job 7_1 is no longer queued"),
    (True, 3600, None),  # suspended, or pending after a requeue: no heartbeat, still its run
    (None, 3600, "no heartbeat for 3600 s"),  # squeue gave no answer: the heartbeat decides
    (None, 0, None),
])
def test_a_slurm_owner_is_judged_by_squeue(tmp_path, queued, age_s, stale):
    run = tmp_path / "seed0"
    _lock(run, "node7", 123, age_s=age_s, slurm_job="7_1")
    asked = []

    def slurm_queued(job: str) -> bool | None:
        asked.append(job)
        return queued

    assert runlock.stale_reason(read_owner(run), slurm_queued) == stale
    assert asked == ["7_1"]


def test_an_earlier_start_of_this_slurm_job_is_stale(tmp_path, monkeypatch):
    """A requeued job that starts on another node finds its own lock, and SLURM still queues it."""
    monkeypatch.setenv("SLURM_JOB_ID", "7")
    run = tmp_path / "seed0"
    _lock(run, "node7", 123, slurm_job="7")
    assert runlock.stale_reason(read_owner(run), lambda job: True) == "an earlier start of this SLURM job 7"


def test_an_unreadable_lock_is_held_until_it_ages(tmp_path):
    run = tmp_path / "seed0"
    run.mkdir()
    RunDir(run).lock_path.write_text("123\nnode\n")  # filelock's own marker, before the owner's record
    owner = read_owner(run)
    assert str(owner) == "another process (its record is unreadable)" and runlock.stale_reason(owner) is None
    os.utime(RunDir(run).lock_path, (0, 0))
    assert runlock.stale_reason(read_owner(run)).startswith("no heartbeat for ")


# -- the job wrapper: held runs are left alone; under DDP only the main rank records and holds ----------


def _sweep(tmp_path: Path, monkeypatch, env: dict[str, str]) -> list[Path]:
    """A two-job sweep through the job wrapper, with the run lock, in this process; each job
    notes which lock it saw. Returns the jobs' folders."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(sys, "argv", ["train"])
    seen = tmp_path / "seen.txt"

    def task(cfg) -> None:
        from hydra.core.hydra_config import HydraConfig

        owner = read_owner(Path(HydraConfig.get().runtime.output_dir))
        with seen.open("a") as handle:
            handle.write(f"{cfg.seed} {owner.pid if owner else None}\n")

    # the lightest command config with a sweep; its jobs' folders out/suites/seed<N>
    run_command("generate", task, ["seed=0,1", f"paths.output_dir={tmp_path / 'out'}", "hydra.sweep.subdir=seed${seed}",
                                   "hydra/job_logging=none", "hydra/hydra_logging=none"], hold=hold_run)
    return sorted(path.parent for path in (tmp_path / "out").rglob(".hydra"))


def test_a_held_job_writes_nothing_and_the_sweep_goes_on(tmp_path, monkeypatch, sleeper, caplog):
    held = tmp_path / "out" / "suites" / "seed0"
    _lock(held, HOST, sleeper)
    with caplog.at_level(logging.INFO, logger="stability.core.command"):
        seed0, seed1 = _sweep(tmp_path, monkeypatch, {})
    assert seed0 == held
    assert (tmp_path / "seen.txt").read_text() == f"1 {os.getpid()}\n"
    assert f"[held] {held}: held by {HOST}:{sleeper}; left alone" in caplog.messages
    assert not (held / JOB_FILE).exists() and read_owner(held).pid == sleeper
    assert read_job_record(seed1).state == DONE and read_owner(seed1) is None


def test_a_non_main_rank_neither_records_nor_holds_the_job(tmp_path, monkeypatch):
    folders = _sweep(tmp_path, monkeypatch, {**LAUNCH, "RANK": "1"})
    assert (tmp_path / "seen.txt").read_text() == "0 None\n1 None\n"  # ran, with no lock of its own
    assert [path.name for path in folders] == ["seed0", "seed1"]
    assert not any((path / JOB_FILE).exists() for path in folders)


def test_the_main_rank_records_and_holds_the_job(tmp_path, monkeypatch):
    folders = _sweep(tmp_path, monkeypatch, {**LAUNCH, "RANK": "0"})
    assert (tmp_path / "seen.txt").read_text() == f"0 {os.getpid()}\n1 {os.getpid()}\n"
    assert all(read_job_record(path).state == DONE for path in folders)


@pytest.mark.parametrize("launch, runs", [("127.0.0.1:29512", True), ("10.0.0.1:29500", False)])
def test_a_non_main_rank_follows_its_main_rank(tmp_path, monkeypatch, sleeper, launch, runs):
    """The main rank of its own launch holds the run: go on; another launch holds it: leave it too."""
    for name, value in {**LAUNCH, "RANK": "1"}.items():
        monkeypatch.setenv(name, value)
    _lock(tmp_path, HOST, sleeper, launch=launch)
    entered = False
    try:
        with hold_run(tmp_path):
            entered = True
    except RunHeld:
        pass
    assert entered == runs
    assert read_owner(tmp_path).pid == sleeper  # a non-main rank never takes or breaks a lock


# -- status: a held run is running, with its holder; a stale lock's run was interrupted -------------


def test_status_shows_the_holder_of_a_run(tmp_path, monkeypatch, sleeper):
    monkeypatch.setattr(squeue, "squeue_available", lambda: False)
    folder = tmp_path / "outputs" / "smoke"
    folder.mkdir(parents=True)
    OmegaConf.save({"hydra": {"overrides": {"hydra": [], "task": ["experiment=smoke", "seed=0,1,2",
                                                                  f"paths.output_dir={tmp_path / 'outputs'}"]}}},
                   folder / "multirun.yaml")
    live, dead, recorded = (folder / "en" / "rte" / f"seed{seed}" for seed in range(3))
    _lock(live, HOST, sleeper)  # e.g. a single run, which writes no job record
    gone = _dead_pid()
    _lock(dead, HOST, gone)
    _lock(recorded, HOST, os.getpid())  # a sweep's job: its job record says more (SLURM state, node)
    write_job_record(recorded, JobRecord("running", HOST, os.getpid(), "2026-01-01T00:00:00+00:00"))
    assert [(run.state, run.detail) for run in sweep_status(folder).runs] == [
        ("running", f"held by {HOST}:{sleeper}"),
        ("interrupted", f"held by {HOST}:{gone}, but process {gone} is gone"),
        ("running", f"process {os.getpid()} on {HOST}")]


# -- two identical sweeps, one second apart, into one folder ---------------------------------------


EPOCH = re.compile(r"\[en rte ep2_ntrain16 seed (\d)\] epoch 1: loss")


@pytest.mark.slow
def test_two_identical_sweeps_train_each_run_once(tmp_path):
    out = tmp_path / "outputs"
    command = [sys.executable, "-m", "stability.train", *QUICK, "data.max_train_samples=16", "seed=0,1",
               f"paths.output_dir={out}"]
    first = subprocess.Popen(command, cwd=tmp_path, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(1)
    second = subprocess.Popen(command, cwd=tmp_path, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    outputs = {process.pid: process.communicate(timeout=600) for process in (first, second)}
    for process in (first, second):
        assert process.returncode == 0, outputs[process.pid][1]  # a held run is no failure

    logs = "".join(stdout for stdout, _ in outputs.values())
    assert sorted(EPOCH.findall(logs)) == ["0", "1"]  # every run trained once, by one of the two
    runs = {seed: out / "smoke" / "en" / "rte" / "ep2_ntrain16" / f"seed{seed}" for seed in (0, 1)}
    for run in runs.values():
        assert [entry["epoch"] for entry in RunDir(run).read_train_log()] == [1, 2]
        assert RunDir(run).is_finished() and read_job_record(run).state == DONE and read_owner(run) is None
    # the one that came second to a run left it alone, naming the process that held it
    held = re.findall(r"\[held\] (\S+): held by (\S+):(\d+); left alone$", logs, re.MULTILINE)
    assert held, logs
    for folder, host, pid in held:
        assert Path(folder) in runs.values() and host == HOST and int(pid) in outputs
